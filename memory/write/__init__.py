"""The write path: proposals, the user's decisions, governance and the nightly lifecycle."""
