"""Attempts on record: a rejection back to planning starts a new
attempt, and the old one — its hypothesis, reproduction, plan, patch, proof, seals and the
reviews given on it — stays on the quest's record.

An attempt ends when a decision sends the quest back before its plan (``revise`` at A or at
B: the hypothesis or the plan is written again) or when research starts again at a new
revision (a confirmed rollback, a reopening). A ``revise`` at C or a failed proof sends it back
to patching and keeps the attempt: the plan stands, the execution does not. ``reject`` ends the
quest, not the attempt.

Why on the quest rather than derived from the journal: every reader (the status comment, the
CLI, ``status_and_next``, a reviewer) holds the snapshot and not the journal, and a fold per
read would cost each of them the whole history. The record is bounded like the quest's other
lists (``MAX_ATTEMPT_LOG`` attempts, ``MAX_REVIEWS`` reviews each, the newest); the journal
keeps everything. ``Quest.attempts`` keeps its meaning — proof attempts, against
``max_attempts`` — so the new fields are ``attempt_number``, ``attempt_reviews`` and
``attempt_log``.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict

from bot.core.events.decisions import Verdict
from bot.core.policy import Checkpoint
from bot.core.seals import Seal

MAX_ATTEMPT_LOG = 16
"""Closed attempts kept, the newest; older ones are in the journal."""
MAX_REVIEWS = 32
"""Reviews kept per attempt, the newest."""


class DecisionRecord(BaseModel):
    """A decision at a gate that the core took (applied, or recorded only)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    gate: Checkpoint
    verdict: Verdict
    actor: str | None = None
    automatic: bool = False
    recorded_only: bool = False
    """An automatic decision at a blocking checkpoint or in shadow mode: kept, never acted on."""
    reason: str = ""
    seal: str | None = None
    """The digest of the gate's seal the decision was taken on."""
    event: str
    at: datetime


class AttemptRecord(BaseModel):
    """A closed attempt, as it stood when it ended."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    number: int
    revision: int
    hypothesis: str | None = None
    reproduction: str | None = None
    plan: str | None = None
    head: str | None = None
    proof_digest: str | None = None
    proof_attempts: int = 0
    seals: tuple[Seal, ...] = ()
    reviews: tuple[DecisionRecord, ...] = ()
    ended_by: str
    """Why it ended, in plain words ("checkpoint B was sent back to planning")."""
    reason: str = ""
    """The reviewer's or the signal's words, when there are any."""
    ended_at: datetime


def kept(items: tuple[DecisionRecord, ...], item: DecisionRecord) -> tuple[DecisionRecord, ...]:
    """``items`` and ``item``, the newest ``MAX_REVIEWS`` (every decision adds one: the slice
    only when the bound is reached)."""
    if len(items) < MAX_REVIEWS:
        return (*items, item)
    return (*items[1 - MAX_REVIEWS:], item)


def logged(log: tuple[AttemptRecord, ...],
           record: AttemptRecord) -> tuple[AttemptRecord, ...]:
    if len(log) < MAX_ATTEMPT_LOG:
        return (*log, record)
    return (*log[1 - MAX_ATTEMPT_LOG:], record)
