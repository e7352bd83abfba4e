"""Uploaded files, served by the name they were uploaded under."""

from __future__ import annotations

import os


def resolve(root: str, name: str) -> str:
    """The path of upload ``name`` under ``root``; a name that leads out of ``root`` is
    refused with ``PermissionError``."""
    path = os.path.join(root, name)
    if not path.startswith(root):
        raise PermissionError(f"{name!r} is not an upload")
    return path
