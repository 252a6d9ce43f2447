"""One agent turn, by meaning: the model call, the tool calls, the notes, the work after."""
