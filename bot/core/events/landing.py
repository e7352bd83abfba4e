"""Landing and the watch: the pull's base moves, it lands, and the landed commit is watched.

A watch ends clean, or a regression is confirmed, rolled back, and the quest reopened. A quest
waiting for a parent hears that it landed; a parent hears of its children's evidence.
"""

from __future__ import annotations

from typing import Literal

from bot.core.events.base import _Event
from bot.core.events.signals import Severity


class BaseMoved(_Event):
    type: Literal["base_moved"] = "base_moved"
    base: str


class Landed(_Event):
    type: Literal["landed"] = "landed"
    merge_sha: str


class WatchClean(_Event):
    type: Literal["watch_clean"] = "watch_clean"


class RegressionDetected(_Event):
    """A regression of a landed quest, confirmed: a re-run of a suspected failure failed too.
    ``sha``, ``fingerprint`` and ``run`` name that re-run, and the core holds them against the
    quest's suspects; journals from before re-runs were asked carry none, and count as they
    stand."""

    type: Literal["regression_detected"] = "regression_detected"
    source: str = ""
    sha: str | None = None
    fingerprint: str | None = None
    run: str | None = None


class RollbackConfirmed(_Event):
    type: Literal["rollback_confirmed"] = "rollback_confirmed"
    revert_sha: str


class Reopened(_Event):
    type: Literal["reopened"] = "reopened"
    fingerprint: str
    source: str = ""
    severity: Severity = Severity.MEDIUM
    base: str | None = None
    """The default branch's head when the regression was seen: where research starts again
    (``None`` in journals from before, which kept the old base)."""
    details_url: str | None = None
    """As ``SignalSensed.details_url``: where the failure that reopened the quest is told."""


class ParentLanded(_Event):
    type: Literal["parent_landed"] = "parent_landed"
    parent: str


class ChildEvidence(_Event):
    type: Literal["child_evidence"] = "child_evidence"
    child: str
