"""Registering the App from its manifest, as GitHub's manifest flow does (BEHAVIOUR.md §13).

The manifest's ``default_permissions`` become the App's permissions — every installation token
carries them, and a request they do not cover is refused 403 — and its ``default_events`` the
events GitHub sends it. GitHub offers an event only to an App with the permission behind it
(docs: webhooks/webhook-events-and-payloads; the settings page greys the others out), so a
manifest that subscribes to one without it is refused here (the manifest flow's own wording
for that is unconfirmed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from questbot_testing.fakegithub.permissions import EVENTS, LEVELS, READ
from questbot_testing.fakegithub.state import World


class ManifestRefused(ValueError):
    """GitHub would not register an App from this manifest."""


def load_manifest(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text())
    if not isinstance(data, dict):
        raise ManifestRefused(f"{path} is not a manifest (a YAML mapping)")
    return data


def register(world: World, manifest: dict[str, Any]) -> None:
    """Give the fake's App the manifest's permissions and events."""
    granted = {str(k): str(v) for k, v in (manifest.get("default_permissions") or {}).items()}
    bad = sorted(f"{k}: {v}" for k, v in granted.items() if v not in LEVELS)
    if bad:
        raise ManifestRefused(f"unknown permission levels: {', '.join(bad)}")
    granted.setdefault("metadata", READ)
    events = frozenset(str(e) for e in manifest.get("default_events") or ())
    unbacked = sorted(e for e in events if EVENTS.get(e) is not None
                      and EVENTS[e] not in granted)
    if unbacked:
        raise ManifestRefused("events without the permission they need: " + ", ".join(
            f"{e} (needs {EVENTS[e]})" for e in unbacked))
    world.app_permissions = granted
    world.app_events = events
