"""The neutral file layer: paths, locks, atomic writes, the Markdown formats, tokens, masking."""
