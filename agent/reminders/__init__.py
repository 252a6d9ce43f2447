"""Reminders and the morning briefing: parse, propose, confirm, schedule, fire once."""
