"""The front desk both front ends share (Telegram and the terminal chat): no Telegram import."""
