"""The settings file's JSON Schema, generated from the model that reads the file.

Editors validate and complete ``.github/questbot.yml`` from it, as they do Renovate's and
Mergify's files, when the file's first line names it (``# yaml-language-server: $schema=…``).
It is made from ``Settings`` rather than written by hand, so it cannot drift from what questbot
accepts; ``docs/questbot.schema.json`` is the published copy, kept equal by a test. What the
schema cannot say (a preset needs ``kind: command``) ``python -m bot check-config`` does.
"""

from __future__ import annotations

import json
import re
from typing import Any

from bot.settings.repository.schema import Settings

SCHEMA_ID = "https://questbot.invalid/questbot.schema.json"
"""A name for the schema, not an address: editors take the file from where the line says."""


def _plain(text: str) -> str:
    """A docstring as an editor's tooltip shows it: Markdown code, one paragraph per blank line."""
    text = text.replace("``", "`")
    return "\n\n".join(re.sub(r"\s*\n\s*", " ", part).strip()
                       for part in re.split(r"\n\s*\n", text))


def _tidy(node: Any) -> Any:
    if isinstance(node, list):
        return [_tidy(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _tidy(value) for key, value in node.items() if key != "title"}
    if isinstance(out.get("description"), str):
        out["description"] = _plain(out["description"])
    return out


def settings_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``.github/questbot.yml``."""
    schema: dict[str, Any] = _tidy(Settings.model_json_schema(mode="validation"))
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID,
            "title": "questbot settings (.github/questbot.yml)", **schema}


def settings_schema_text() -> str:
    return json.dumps(settings_schema(), indent=2, sort_keys=True) + "\n"
