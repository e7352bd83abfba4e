"""Signals and triage: what questbot senses, and what triage makes of it.

A signal (a failing check, an issue, a comment, a regression) opens a quest as
``signal_sensed``, or joins one as ``signal_attached``. Triage routes the quest (``triaged``),
holds it before any work (``held``), starts research (``research_started``), or first asks for
a failed run again (``rerun_requested``, answered by ``rerun_reported``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import model_validator

from bot.core.events.base import _Event
from bot.core.names import Name
from bot.core.proof import Risk


class Route(Name):
    AUTO_FIX = "auto_fix"
    RESEARCH_ONLY = "research_only"
    HUMAN = "human"
    IGNORE = "ignore"
    DUPLICATE = "duplicate"
    CONFLICT = "conflict"


class SignalKind(Name):
    CHECK_FAILURE = "check_failure"
    ISSUE = "issue"
    COMMENT = "comment"
    REGRESSION = "regression"


class Severity(Name):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"

    @property
    def rank(self) -> int:
        return _SEVERITY_RANK[self]


_SEVERITY_RANK = {s: i for i, s in enumerate(Severity)}


def max_severity(a: Severity, b: Severity) -> Severity:
    return a if a.rank >= b.rank else b


class Hold(Name):
    """Why triage held a quest before any work (``Held``)."""

    SLOT = "slot"
    """The repository works on its most live quests already (``max_live_quests``)."""
    REFLECTION = "reflection"
    """Too many quests ended badly of late: a reflection must pass a review first."""

class SignalSensed(_Event):
    type: Literal["signal_sensed"] = "signal_sensed"
    repo: str
    fingerprint: str
    kind: SignalKind
    severity: Severity = Severity.MEDIUM
    title: str = ""
    source: str = ""
    base: str | None = None
    run: str | None = None
    """The run that failed, for a failing check (``Suspect.run``'s names): what triage may
    re-run before any agent is paid for."""
    details_url: str | None = None
    """Where the failing check's CI says to look (for Actions, the job and its log), beside
    ``source``, GitHub's page of the run: what the status comment links to."""


class Triaged(_Event):
    type: Literal["triaged"] = "triaged"
    route: Route
    risk: Risk = Risk.LOW
    duplicate_of: str | None = None
    parent: str | None = None

    @model_validator(mode="after")
    def _route_targets(self) -> Triaged:
        if self.route is Route.DUPLICATE and not self.duplicate_of:
            raise ValueError("route duplicate needs duplicate_of: the quest the signal joins")
        if self.route is Route.CONFLICT and not self.parent:
            raise ValueError("route conflict needs parent: the quest this one waits for")
        return self


class Held(_Event):
    """Triage held the quest before any work (issue 14, item 6): the repository is at its
    live-quest cap, or a reflection wave is due. The quest stays ``sensed``, listed in the
    inbox, and is triaged again — the same checks, then ``triaged`` — when a slot frees or a
    reflection passes."""

    type: Literal["held"] = "held"
    reason: Hold
    detail: str = ""


class ResearchStarted(_Event):
    """Questbot starts research on a quest its triage routed to the agent: the follow-up the
    core derives from that ``triaged`` (``lifecycle.step``'s ``follow_ups``), journaled right
    after it, so the quest passes through ``triaged`` as the seed's main line does."""

    type: Literal["research_started"] = "research_started"


class RerunRequested(_Event):
    """Triage routed a failing check to the agent, and asks first for the failed run again on
    the same commit: a pass says the failure was flaky, and no agent is paid for."""

    type: Literal["rerun_requested"] = "rerun_requested"
    route: Route
    sha: str
    run: str


class RerunResult(Name):
    PASSED = "passed"
    FAILED = "failed"
    UNAVAILABLE = "unavailable"
    """GitHub would not re-run it for questbot (another App's check, too old): research."""


class RerunReported(_Event):
    """What the re-run triage asked for concluded: ``run`` is the re-run's own report (or,
    unavailable, the original run), ``reason`` says why there was none."""

    type: Literal["rerun_reported"] = "rerun_reported"
    result: RerunResult
    run: str | None = None
    source: str = ""
    reason: str = ""


class SignalAttached(_Event):
    """A signal joins a quest that has one already: a duplicate merged by triage, another
    report of the same failure (a matrix job, its suite, its workflow run), a green result of
    one of its checks, or a failure seen while it is watched."""

    type: Literal["signal_attached"] = "signal_attached"
    fingerprint: str
    source: str = ""
    severity: Severity = Severity.MEDIUM
    sha: str | None = None
    """The commit the signal is about, when it names one."""
    run: str | None = None
    """The run that reported it, named by the adapter (``Suspect.run``): another run of the
    same check on the same commit is a re-run."""
    passed: bool = False
    """A green result: evidence that a failure was flaky or has been fixed, not a failure."""
    suspect: bool = False
    """A failure on the landed commit or a later one of the default branch, during the
    watch: a regression once a re-run fails too (``Quest.suspects``)."""
