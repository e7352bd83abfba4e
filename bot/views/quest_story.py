"""A quest's journal as its status comment tells it: the timeline, the path, what failed.

The status comment is rendered from the quest, its evidence and this: the newest events in
people's words (``bot.words.timeline``), the states the quest went through (the journal
replayed by ``bot.core.lifecycle.path``, each event under the policy it was decided under)
and the links of the signal that started it, with the end of the failing step's log. Read
once per sync, from the whole journal — a few dozen events for most quests, replayed in
microseconds each.

An unreadable journal gives an empty story rather than stopping the comment, which still says
where the quest stands and what to do; the recovery tools (``python -m bot replay``) say why.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace

from bot.core import Event, Policy, Quest
from bot.core.events import CheckpointDecided, Landed, Reopened, SignalSensed
from bot.core.lifecycle import path
from bot.core.states import State
from bot.journal.errors import CorruptJournal
from bot.journal.keys import ci_log_key
from bot.journal.recovery import read_recorded
from bot.journal.store import Journal
from bot.words.status_comment import FailedRun
from bot.words.timeline import TimelineEntry, entry_of

log = logging.getLogger(__name__)
PRINTED_LINES = 25


@dataclass(frozen=True, slots=True)
class Story:
    timeline: Sequence[TimelineEntry] = ()
    path: Sequence[State] = ()
    failed: FailedRun | None = None
    earlier_merge: str | None = None
    """A reopened quest's earlier fix: the merge commit of the revision before."""


async def read_story(journal: Journal, quest: Quest, policy: Policy, *,
                     timeline: int = 10) -> Story:
    """The newest ``timeline`` events in words, the path and what failed, for ``quest``."""
    try:
        recorded = await read_recorded(journal, quest.id)
    except CorruptJournal as exc:
        log.warning("the journal of quest %s cannot be read for its story: %s", quest.id, exc)
        return Story()
    events = recorded.events
    failed: FailedRun | None = None
    for event in reversed(events):
        if isinstance(event, SignalSensed | Reopened):
            failed = FailedRun(event.source, event.details_url, event.base)
            break
    if failed is not None:
        failed = replace(failed, printed=await _printed(journal, quest))
    earlier_merge = _earlier_merge(events) if quest.revision > 1 else None
    policies = recorded.policies
    start = max(0, len(events) - timeline)
    entries = [entry_of(e, recorded_only=recorded_only(e, policies[i] or policy))
               for i, e in enumerate(events[start:], start)] if timeline > 0 else []
    return Story(entries, path(events, policy, policies), failed, earlier_merge)


def _earlier_merge(events: Sequence[Event]) -> str | None:
    """The merge commit that landed before the latest reopening, if one did."""
    reopened = False
    for event in reversed(events):
        if isinstance(event, Reopened):
            reopened = True
        elif reopened and isinstance(event, Landed):
            return event.merge_sha
    return None


async def _printed(journal: Journal, quest: Quest) -> str:
    """The end of the failing step's log, as the agent was given it (``bot.agent.ci_log``
    keeps it in the quest's ``ci_log`` hash): the failed run's, else its re-run's; ``""``
    before research read it, or with none."""
    runs = [r for r in (quest.source_run, quest.rerun.second if quest.rerun else None) if r]
    if not runs:
        return ""
    kept = await journal.client.hmget(ci_log_key(quest.id), runs)
    logs = [v.decode() if isinstance(v, bytes) else str(v) for v in kept if v]
    return "\n".join(logs[0].splitlines()[-PRINTED_LINES:]) if logs else ""


def recorded_only(event: Event, policy: Policy) -> bool:
    """An automatic decision its policy recorded without acting on (``checkpoints``)."""
    return (isinstance(event, CheckpointDecided) and event.automatic
            and (policy.shadow or policy.blocking(event.checkpoint)))
