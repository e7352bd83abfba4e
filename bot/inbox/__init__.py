"""The repository's ``questbot inbox`` issue: what waits for a person, kept current, and its
boxes — ticked to start, retry or drop — read back as commands."""
