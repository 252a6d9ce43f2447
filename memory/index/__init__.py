"""The derived search index (``knowledge/pcai_memory.sqlite``) and what feeds it."""
