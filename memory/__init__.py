"""Long-term memory: Markdown as the source of truth, SQLite (FTS5 + sqlite-vec) as its index."""
