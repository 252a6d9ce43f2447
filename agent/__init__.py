"""One message in, one reply out: the per-message pipeline, prompts and the LLM adapter."""
