"""Layered settings: defaults, then a file's, then the command line's, merged deeply."""

from __future__ import annotations

from collections import Mapping
from typing import Any


def merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """``override`` over ``base``; a mapping in both is merged, anything else replaced."""
    merged = dict(base)
    for key, value in override.items():
        below = merged.get(key)
        if isinstance(value, Mapping) and isinstance(below, Mapping):
            merged[key] = merge(below, value)
        else:
            merged[key] = value
    return merged


def layered(*layers: Mapping[str, Any]) -> dict[str, Any]:
    """Every layer over the ones before it, the first the defaults."""
    result: dict[str, Any] = {}
    for layer in layers:
        result = merge(result, layer)
    return result
