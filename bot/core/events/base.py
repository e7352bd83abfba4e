"""The fields every event carries, whatever its family.

Each event carries a stable ``id`` (a GitHub delivery id plus an index, a comment id, a
runner's receipt id, a timer's due time) and the time it happened, ``at``. The core never
reads a clock or mints an id: both arrive here. ``actor`` is the GitHub login of the person
who caused the event, or ``None`` for questbot, its agent and its runners.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    quest_id: str = Field(min_length=1)
    at: datetime
    actor: str | None = None
