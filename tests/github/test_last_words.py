"""What the model said last, read for the status comment of a quest whose stage failed: from
the newest transcript at the quest's revision, of the stage it parked in — never of a stage
that went well, never for a quest that is not parked by a failed stage."""

from __future__ import annotations

from bot.agent.transcript import Ending, Kind, Recorder, TranscriptStore, Turn
from bot.core import State
from bot.core.quest import ParkReason
from bot.views.last_words import last_words
from bot.words.status_comment import LastWords
from questbot_testing.journals import JournalBuilder
from tests.github.conftest import World


async def keep(world: World, stage: str, ended: Ending, turns: list[Turn]) -> None:
    await Recorder(TranscriptStore(world.redis), "q-w", 1).keep(stage=stage, ended=ended,
                                                                 turns=turns)


async def test_the_failed_stages_last_words_and_no_other(world: World) -> None:
    b = JournalBuilder("q-w").sense(base=world.main_sha)
    b.add("agent_halted", stage="research", outcome="failed", reason="prose")
    quest = b.quest
    assert quest is not None and quest.park_reason is ParkReason.AGENT_FAILED
    assert await last_words(world.redis, quest) is None  # nothing kept yet
    await keep(world, "research", Ending.FAILED, [
        Turn(kind=Kind.PROMPT, text="stage: research"), Turn(kind=Kind.TEXT, text="Well…"),
        Turn(kind=Kind.RETRY, text="call a tool")])
    assert await last_words(world.redis, quest) == LastWords(stage="research", text="Well…")
    await keep(world, "research", Ending.FAILED, [
        Turn(kind=Kind.CALL, tool="read_file", text='{"path": "x"}')])
    assert await last_words(world.redis, quest) == LastWords(
        stage="research", text='{"path": "x"}', tool="read_file")
    # a quest parked in patching whose newest transcript is research's: not its failed stage
    patching = quest.evolve({"resume_state": State.PATCHING})
    assert await last_words(world.redis, patching) is None
    # nor a quest working, or parked for another reason
    assert await last_words(world.redis, quest.evolve({"state": State.RESEARCHING})) is None
    assert await last_words(world.redis, quest.evolve(
        {"park_reason": ParkReason.PAUSED})) is None
