"""Hybrid search over the index and its pure scoring, noise and adaptive stages."""
