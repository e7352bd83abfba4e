"""The register room's errors, in the one tree of ``bot.errors``."""

from __future__ import annotations

from bot.errors import ConfigurationError


class RegistrationError(ConfigurationError):
    """The App was registered but questbot cannot be configured from what GitHub sent; the
    message says what to set by hand."""
