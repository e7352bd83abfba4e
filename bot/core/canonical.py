"""Canonical JSON and its digest: the one byte form that proof bundles are bound by.

Canonical JSON here means ``json.dumps(value, sort_keys=True, separators=(",", ":"),
ensure_ascii=False)`` encoded as UTF-8: keys sorted at every depth, no insignificant
whitespace, non-ASCII characters written as themselves. The digest is the lowercase hex
SHA-256 of those bytes. Any party (the proof runner, the core, an auditor with ``sha256sum``)
that serialises the same value this way gets the same digest.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
"""``json.dumps`` with these options, made once: ``dumps`` builds an encoder per call when given
options, which costs more than encoding the small values a seal digests (``bot.core.seals``)."""


def canonical_json(value: Any) -> bytes:
    """The canonical UTF-8 bytes of a JSON-compatible value."""
    return _ENCODER.encode(value).encode("utf-8")


def canonical_digest(value: Any) -> str:
    """Lowercase hex SHA-256 of ``canonical_json(value)``."""
    return hashlib.sha256(canonical_json(value)).hexdigest()
