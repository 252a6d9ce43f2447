"""Telegram and the terminal: handlers, commands, jobs, the CLI and the composition root."""
