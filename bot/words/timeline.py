"""A quest's journal in people's words: who did what, for the status comment's timeline.

The journal speaks in event types (``checkpoint_decided``, ``usage_recorded``); a maintainer
reads "`@alice` approved checkpoint A" and "the agent used 1,200 tokens". ``entry_of`` turns
one journaled event into a ``TimelineEntry`` whose ``words`` are that sentence, and ``WORDS``
has one for every event type (``tests/words/test_status_comment.py`` holds it complete, so a
new event cannot reach the comment as its identifier). Logins are code spans, so the timeline names
people without pinging them each time the comment is edited.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.core import Event
from bot.core.states import State
from bot.words.failed_effects import could_not
from bot.words.markdown import inline_code, plain


@dataclass(frozen=True, slots=True)
class TimelineEntry:
    at: datetime
    event: str
    """The event's type: kept for tests and logs, never shown."""
    state: State | None = None
    actor: str | None = None
    words: str = ""
    """What happened, in people's words, without who did it (``actor`` says that)."""
    detail: str = ""
    """The reason a person gave (a pause's), escaped: the status comment of a parked quest
    says who paused it and why."""


def _sha(value: object) -> str:
    return inline_code(str(value)[:12]) if value else "a commit"


def _dollars(cents: int) -> str:
    return f"${cents / 100:,.2f}"


_ROUTE = {
    "auto_fix": "for the agent to research and fix",
    "research_only": "for the agent to research only",
    "human": "for a person to start",
    "ignore": "as nothing to do",
    "duplicate": "as a duplicate",
    "conflict": "to wait for another quest",
}
_VERDICT = {"approve": "approved", "revise": "asked for a revision at",
            "reject": "rejected the quest at"}
_HALTED = {"failed": "failed", "needs_human": "stopped for a person",
           "refused": "refused the plan", "unconfigured": "could not start: no agent is set up",
           "endpoint": "could not go on: the model endpoint failed"}
_RERUN = {"passed": "the re-run passed: the failure was flaky",
          "failed": "the re-run failed too, so it is real",
          "unavailable": "GitHub would not re-run the check"}


REVIEW_ACTOR = "review:"
"""The actor prefix of a decision a review submitted (``bot.reviews.service``)."""


_WOULD = {"approve": "would approve", "revise": "would ask for a revision at",
          "reject": "would reject the quest at"}


_BY = {"automated_check": "questbot's automatic reviewer", "human": "a person"}
"""Who a role is, where "the <role>" does not say it (``bot.reviews.models.ReviewRole``):
"a review by the human" would not."""


def reviewer(actor: str) -> str:
    """Who submitted a review, from its actor (``review:design_reviewer``): "the design
    reviewer", "questbot's automatic reviewer", "a person"."""
    role = actor.removeprefix(REVIEW_ACTOR)
    return _BY.get(role, f"the {role.replace('_', ' ')}")


def _review(e: Any, recorded_only: bool) -> str:
    by = reviewer(e.actor)
    if recorded_only:
        return (f"a review by {by} {_WOULD.get(e.verdict.value, e.verdict.value)} "
                f"checkpoint {e.checkpoint.value} (recorded only: a person decides)")
    return (f"a review by {by} {_VERDICT.get(e.verdict.value, e.verdict.value)} "
            f"checkpoint {e.checkpoint.value}")


def _decided(e: Any) -> str:
    what = f"{_VERDICT.get(e.verdict.value, e.verdict.value)} checkpoint {e.checkpoint.value}"
    if (e.actor or "").startswith(REVIEW_ACTOR):
        return _review(e, recorded_only=False)
    if e.automatic:
        return f"checkpoint {e.checkpoint.value} was approved by the repository's settings"
    return what


WORDS: dict[str, Callable[[Any], str]] = {
    "signal_sensed": lambda e: f"saw {plain(e.title or 'a failure', limit=120)}",
    "triaged": lambda e: f"routed it {_ROUTE.get(e.route.value, 'on')}",
    "rerun_requested": lambda e: f"re-ran the failed check on {_sha(e.sha)} to see if it is "
                                 "flaky",
    "rerun_reported": lambda e: _RERUN.get(e.result.value, "the re-run reported"),
    "research_started": lambda e: "started research",
    "held": lambda e: ("held it until a quest of the repository ends" if e.reason.value == "slot"
                       else "held it until a reflection on recent failures passes"),
    "signal_attached": lambda e: ("saw the check pass" if e.passed
                                  else "saw another report of the failure")
                                 + (f" on {_sha(e.sha)}" if e.sha else ""),
    "hypothesis_written": lambda e: "the agent wrote a hypothesis",
    "reproduced": lambda e: f"the agent reproduced the failure with {inline_code(e.check)}",
    "reproduction_failed": lambda e: "the agent could not reproduce the failure",
    "agent_halted": lambda e: f"the agent {_HALTED.get(e.outcome, 'stopped')} "
                              f"({plain(e.stage, limit=40)})",
    "plan_written": lambda e: "the agent wrote a plan",
    "patch_pushed": lambda e: f"pushed a fix as {_sha(e.head)}",
    "proof_completed": lambda e: f"the proof passed on {_sha(e.bundle.head)}",
    "proof_failed": lambda e: f"the proof failed on {_sha(e.head)}",
    "checkpoint_decided": _decided,
    "claimed": lambda e: "claimed the review",
    "released": lambda e: "released the review",
    "paused": lambda e: "paused the quest" + (f": {plain(e.reason, limit=200)}"
                                              if e.reason else ""),
    "resumed": lambda e: "resumed the quest",
    "killed": lambda e: "stopped the quest for good",
    "human_revision": lambda e: f"pushed {_sha(e.head)} to the quest branch",
    "base_moved": lambda e: f"the default branch moved to {_sha(e.base)}",
    "landed": lambda e: f"merged the change as {_sha(e.merge_sha)}",
    "watch_clean": lambda e: "the watch after the merge ended clean",
    "regression_detected": lambda e: "a regression was confirmed by a re-run",
    "rollback_confirmed": lambda e: f"reverted the change as {_sha(e.revert_sha)}",
    "reopened": lambda e: "the failure came back, so the quest was reopened",
    "parent_landed": lambda e: f"its parent quest {inline_code(e.parent)} landed",
    "child_evidence": lambda e: f"quest {inline_code(e.child)} sent evidence",
    "spend_requested": lambda e: f"asked to spend {_dollars(e.amount_cents)} on "
                                 f"{plain(e.purpose, limit=80)}",
    "spend_decided": lambda e: "approved the spend" if e.approved else "declined the spend",
    "usage_recorded": lambda e: f"the agent used {e.tokens:,} tokens"
                                + (f" ({_dollars(e.cost_cents)})" if e.cost_cents else
                                   " (local model, no charge)" if e.free else ""),
    "comment_posted": lambda e: "posted a comment",
    "effect_failed": lambda e: could_not(e.effect_type),
}
_SUBJECTS = ("the ", "its ", "a ", "checkpoint ", "quest ", "GitHub ")
"""Sentences that name their own subject; the others are questbot's when no person acted."""


def entry_of(event: Event, *, recorded_only: bool = False) -> TimelineEntry:
    """``event`` as a line of the timeline. ``recorded_only``: an automatic decision the
    policy recorded without acting on it (shadow mode, a blocking checkpoint)."""
    words = WORDS.get(event.type, lambda e: "something happened")(event)
    actor = event.actor
    if actor is not None and actor.startswith(REVIEW_ACTOR):
        actor = None  # a review is named by its role in the words, not as a login
        words = _review(event, recorded_only)
    if actor is None and not words.startswith(_SUBJECTS):
        words = f"questbot {words}"
    detail = plain(event.reason, limit=200) if event.type == "paused" and event.reason else ""
    return TimelineEntry(event.at, event.type, None, actor, words, detail)


def line(entry: TimelineEntry) -> str:
    """``- 2026-12-01 15:04 UTC `@alice` approved checkpoint A``."""
    words = entry.words or "something happened"
    who = f"{inline_code('@' + entry.actor)} " if entry.actor else ""
    if who and words.startswith("questbot "):
        words = words.removeprefix("questbot ")
    return f"- {entry.at:%Y-%m-%d %H:%M} UTC {who}{words}"


SHOWN = 10
"""Timeline entries shown open: the newest. The earlier ones are folded under their count."""
EARLIER_CHARACTERS = 20_000
"""The folded entries' share of a status comment (GitHub refuses a body over 65,536
characters): past it, the oldest few are kept (what failed, how it was routed) and the middle
is counted, not shown."""
FIRST_KEPT = 3
"""Earlier entries always kept first when the fold is cut (within half its share)."""


def timeline_fold(entries: Sequence[TimelineEntry], shown: int = SHOWN,
                  budget: int = EARLIER_CHARACTERS) -> list[str]:
    """The whole timeline as a collapsed section: the newest ``shown`` entries, and above
    them, folded again, "N earlier events" — every one, unless they run past ``budget``
    characters; then the first few and a line counting those left out."""
    if not entries:
        return []
    newest = [line(e) for e in entries[-shown:]]
    earlier = [line(e) for e in entries[:-shown]] if len(entries) > shown else []
    out = ["<details><summary>Timeline</summary>", ""]
    if earlier:
        count = len(earlier)
        if sum(len(x) + 1 for x in earlier) > budget:
            kept: list[str] = []
            used = 0
            for x in earlier[:FIRST_KEPT]:  # the oldest, within half the share
                if used + len(x) + 1 > budget // 2:
                    break
                kept.append(x)
                used += len(x) + 1
            tail: list[str] = []
            for x in reversed(earlier[len(kept):]):
                if used + len(x) + 1 > budget:
                    break
                tail.insert(0, x)
                used += len(x) + 1
            left = count - len(kept) - len(tail)  # > 0: all of them did not fit
            earlier = [*kept, f"- *… {left:,} more event{'s' if left != 1 else ''}, left out "
                       "to keep this comment within GitHub's size limit …*", *tail]
        out += [f"<details><summary>{count:,} earlier event{'s' if count != 1 else ''}"
                "</summary>", "", *earlier, "", "</details>", ""]
    return [*out, *newest, "", "</details>"]
