"""Bookkeeping: what a quest records without moving — money asked for and decided, usage,
effects that could not be delivered, comments posted (``rules.bookkeeping``, ``rules.budget``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from bot.core.events.base import _Event


class SpendRequested(_Event):
    type: Literal["spend_requested"] = "spend_requested"
    amount_cents: int = Field(ge=0)
    purpose: str


class SpendDecided(_Event):
    type: Literal["spend_decided"] = "spend_decided"
    request_id: str
    approved: bool


class UsageRecorded(_Event):
    type: Literal["usage_recorded"] = "usage_recorded"
    tokens: int = Field(default=0, ge=0)
    cost_cents: int = Field(default=0, ge=0)
    stage: str | None = Field(default=None, max_length=40)
    """The agent stage the receipt is for (``research``, ``reproduce``, ``plan``, ``patch``),
    when a stage's run reported it: the status comment shows the cost per stage."""
    free: bool = False
    """The tokens were priced, at zero (a local model, ``QUESTBOT_MODEL_PRICES=0,0``): no
    charge — not a price nobody reported."""


class EffectFailed(_Event):
    """An effect could not be delivered and will not be retried: journaled so people see it."""

    type: Literal["effect_failed"] = "effect_failed"
    effect_key: str
    effect_type: str
    error: str
    tries: int = Field(default=1, ge=1)


class CommentPosted(_Event):
    type: Literal["comment_posted"] = "comment_posted"
    comment_id: int
