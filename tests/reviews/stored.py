"""Quests at a checkpoint, stored in a real Redis through the real journal."""

from __future__ import annotations

from bot.core import Policy, Quest, State
from bot.core.policy import CheckpointMode
from bot.journal import Journal
from tests.core.quests import builder_in

ADVISORY = Policy(checkpoints={"A": CheckpointMode(), "B": CheckpointMode(blocking=False),
                               "C": CheckpointMode(blocking=False)})
SHADOW = ADVISORY.model_copy(update={"shadow": True})
QUEST = "q-1"


async def stored(journal: Journal, state: State, policy: Policy = ADVISORY) -> Quest:
    """Apply the shortest ordinary path to ``state`` (``tests.core.quests``) to Redis, under
    ``policy`` (which the journal records, and the reviews then decide under)."""
    for event in builder_in(state, policy).inputs:
        await journal.apply(event, policy)
    _v, quest = await journal.snapshot(QUEST)
    assert quest is not None and quest.state is state
    return quest
