"""Everything people read from questbot, and the commands they write to it: pure functions of
facts — a quest, its evidence, a refusal — to Markdown and plain text, with no I/O. The rooms
that act on GitHub (``bot.github`` and the concerns above it) hand these their facts and send
what comes back; a change of wording touches this room alone."""
