"""Conversations: sessions, short-term context, compaction, daily logs, idle summaries."""
