"""``/help`` in people's words: for every quest and every person, the commands that work now —
each one the quest would take from that person — with an example that parses as that command
and what it does next, and nothing of the table's vocabulary."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bot.core import Quest, State
from bot.core.states import TERMINAL
from bot.words.commands import Command, CommandName, parse_commands, render
from bot.words.help import help_text
from bot.words.refusals import now_commands
from tests.words.test_refusals import CODE, QUESTS, SNAKE

ACTORS = st.sampled_from(["maintainer", "alice", "rex"])


def offered(text: str) -> list[str]:
    return [line.split("`")[1] for line in text.splitlines() if line.startswith("- `")]


@given(st.sampled_from(QUESTS), ACTORS, st.booleans())
def test_help_offers_what_the_quest_takes_from_that_person_with_examples_that_parse(
        quest: Quest, actor: str, may_act: bool) -> None:
    text = help_text(quest, actor=actor, may_act=may_act)
    assert text.startswith(f"@{actor} ")
    examples = offered(text)
    commands = [parse_commands(example) for example in examples]
    assert all(len(c) == 1 and isinstance(c[0], Command) for c in commands), examples
    usages = [render(c[0]).replace(c[0].reason or "\0", "<why>")  # type: ignore[union-attr]
              for c in commands]
    expected = now_commands(quest, actor) if may_act else ["/status"]
    assert usages == expected
    assert all(": " in line for line in text.splitlines() if line.startswith("- `"))
    outside = CODE.sub("", text)
    assert not SNAKE.search(outside), outside  # no internal identifier outside code spans
    assert quest.id not in text
    if not may_act:
        assert "write access" in text and examples == ["/status"]


def test_a_claimed_review_offers_its_owner_the_decisions_and_others_only_reading() -> None:
    claimed = next(q for q in QUESTS if q.state is State.HANDED_OFF)
    owner = help_text(claimed, actor=claimed.owner or "", may_act=True)
    other = help_text(claimed, actor="maintainer", may_act=True)
    assert "`/approve C`" in owner and "`/release`" in owner
    assert "`/approve C`" not in other and "claimed by `alice`" in other


def test_an_ended_quest_says_how_a_new_one_starts() -> None:
    for quest in QUESTS:
        if quest.state in TERMINAL:
            text = help_text(quest, actor="maintainer", may_act=True)
            assert offered(text) == ["/status"] and "new" in text


def test_help_is_a_command_of_its_own_that_takes_nothing() -> None:
    (item,) = parse_commands("/help")
    assert isinstance(item, Command) and item.name is CommandName.HELP
    (problem,) = parse_commands("/help me please")
    assert not isinstance(problem, Command) and "`/help`" in problem.message
