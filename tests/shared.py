"""Where ``shared/`` is: beside the project (``../shared``), as on every developer machine and
in CI. ``QUESTBOT_SHARED`` overrides it."""

from __future__ import annotations

import os
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("QUESTBOT_SHARED", PROJECT.parent / "shared")).resolve()
GITHUB = SHARED / "github"
