"""The Telegram front end (python-telegram-bot): the only package that imports ``telegram``."""
