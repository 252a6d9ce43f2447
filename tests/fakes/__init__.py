"""Fakes for what lives outside the project (Ollama), speaking the real protocol over HTTP."""
