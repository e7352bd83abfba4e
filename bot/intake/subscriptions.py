"""The webhook events questbot acts on: the web process stores these and no others, and the
worker's redelivery reconciler asks GitHub again only for these."""

from __future__ import annotations

from typing import Final

from bot.intake.routes import EVENTS_READ

SUBSCRIBED_EVENTS: Final = EVENTS_READ
"""Every event a handler of ``bot.intake.routes`` reads; ``app.yml`` subscribes to exactly
these (``tests/e2e/test_app_manifest.py``), and GitHub sends the two ``installation`` events to
every App."""
