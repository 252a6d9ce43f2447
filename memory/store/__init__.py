"""The memory service: entries in MEMORY.md, read, written and searched with the index in step."""
