"""``pcai.db``: operational state (usage counters, short-term rows, reminders, undo, notices)."""
