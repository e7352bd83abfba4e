"""Labels people put on tickets, cleaned up."""

from __future__ import annotations


def distinct(tags: list[str]) -> set[str]:
    """The tags, each once, trimmed and in lower case; the order is not kept."""
    return {tag.strip().lower() for tag in tags if tag.strip()}
