"""Request deadlines from a service's settings file (``key = value`` lines)."""

from __future__ import annotations

DEFAULT_TIMEOUT = 30.0


def load(text: str) -> dict[str, str]:
    """The settings in ``text``: one ``key = value`` a line; ``#`` starts a comment."""
    settings: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            key, _, value = line.partition("=")
            settings[key.strip()] = value.strip()
    return settings


def deadline(settings: dict[str, str], started: float) -> float:
    """When a request started at ``started`` must be answered: ``timeout`` seconds later,
    30 unless the settings say otherwise."""
    return started + settings.get("timeout", DEFAULT_TIMEOUT)
