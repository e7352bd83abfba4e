"""What the model said last, for the status comment of a quest whose stage failed.

A quest parked because its agent failed, refused, could not reproduce or met a failing model
endpoint says why in a sentence; the model's own last words — prose where a tool call was
due, the call it made, what it said before the endpoint gave out — are what tells a
maintainer what went wrong. They come from the newest kept transcript at the quest's revision
(``bot.agent.transcript``) when it is of the stage the quest parked in; a quest in any other
state, or whose stage kept none (a ``command`` agent), shows no fold.
"""

from __future__ import annotations

import logging

from redis.exceptions import RedisError

from bot.agent.transcript import Kind, TranscriptStore
from bot.core import Quest
from bot.core.quest import ParkReason
from bot.core.states import State
from bot.journal.wire import RedisClient
from bot.words.status_comment import LastWords

log = logging.getLogger(__name__)

STAGE_FAILED = frozenset({ParkReason.AGENT_FAILED, ParkReason.AGENT_REFUSED,
                          ParkReason.MODEL_FAILED, ParkReason.CANNOT_REPRODUCE})
STAGES_OF: dict[State, frozenset[str]] = {
    State.RESEARCHING: frozenset({"research"}),
    State.REPRODUCING: frozenset({"reproduce", "plan"}),
    State.PATCHING: frozenset({"patch"}),
}
"""The stages a parked quest's ``resume_state`` ran: the transcript shown is of one of them,
never an earlier stage's that went well (the failed one, by a ``command`` agent, kept none)."""


async def last_words(client: RedisClient, quest: Quest) -> LastWords | None:
    """The model's last turn in the quest's failed stage; ``None`` when no stage failed, or
    nothing the model said was kept. An unreadable transcript costs the fold, not the
    comment."""
    if quest.state is not State.PARKED or quest.park_reason not in STAGE_FAILED:
        return None
    try:
        latest = await TranscriptStore(client).latest(quest.id, quest.revision)
    except (RedisError, OSError) as exc:
        log.warning("the transcript of quest %s could not be read for its status: %s",
                    quest.id, exc)
        return None
    said = latest.last_said if latest is not None else None
    if latest is None or said is None or latest.stage not in STAGES_OF.get(
            quest.resume_state or State.PARKED, frozenset()):
        return None
    return LastWords(stage=latest.stage, text=said.text,
                     tool=said.tool if said.kind is Kind.CALL else None)
