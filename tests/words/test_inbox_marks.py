"""The inbox's boxes: which an edit ticked (a parser, so property-tested), and the rendered
inbox — a box exactly where ticking acts, a link on every entry, people's words."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core import State
from bot.core.quest import ParkReason
from bot.words.inbox_marks import boxes, entry_marker, tick_command, ticked
from bot.words.render import InboxEntry, inbox_body
from tests.core.quests import quest_in

IDS = st.lists(st.from_regex(r"q[0-9a-f]{4,10}", fullmatch=True), unique=True, max_size=6)
NOISE = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40).map(
    lambda t: t.replace("questbot:inbox-entry", ""))


def body_of(states: dict[str, bool], noise: str) -> str:
    lines = [noise]
    for quest, on in states.items():
        lines.append(f"- [{'x' if on else ' '}] {entry_marker(quest)} #{len(quest)} `{quest}`")
    return "\n".join([*lines, noise])


@settings(max_examples=300, deadline=None)
@given(IDS, st.data(), NOISE)
def test_ticked_is_what_went_from_empty_to_ticked(ids: list[str], data: st.DataObject,
                                                   noise: str) -> None:
    before = {q: data.draw(st.booleans()) for q in ids}
    after = {q: data.draw(st.booleans()) for q in ids}
    dropped = data.draw(st.sets(st.sampled_from(ids))) if ids else set()
    old, new = body_of(before, noise), body_of(
        {q: on for q, on in after.items() if q not in dropped}, noise)
    assert boxes(old) == before
    assert ticked(old, new) == [q for q in ids if q not in dropped and after[q]
                                and not before[q]]
    assert ticked(new, new) == []  # the same body again (a redelivery, questbot's own write)


@given(NOISE, NOISE)
def test_text_without_markers_ticks_nothing(before: str, after: str) -> None:
    assert ticked(f"- [ ] {before}", f"- [x] {after}") == []


def test_a_box_only_where_ticking_acts_and_every_entry_linked() -> None:
    parked = quest_in(State.PARKED)
    quests = [quest_in(State.TRIAGED), quest_in(State.HYPOTHESISED), parked,
              parked.evolve({"id": "q-r", "park_reason": ParkReason.RESEARCH_COMPLETE}),
              parked.evolve({"id": "q-w", "park_reason": ParkReason.WAITING_FOR_PARENT}),
              quest_in(State.READY).evolve({"id": "q-c"}),
              quest_in(State.HANDED_OFF).evolve({"id": "q-h", "owner": "alice"})]
    quests = [q.evolve({"id": f"{q.id}-{n}"}) for n, q in enumerate(quests)]
    entries = [InboxEntry(q, f"#{n + 10}" if n % 2 else str(n) * 40)
               for n, q in enumerate(quests)]
    body = inbox_body(entries)
    for entry in entries:
        (line,) = [x for x in body.splitlines() if f" {entry.where} " in x]
        assert entry.quest.id not in re.sub(r"<!--.*?-->", "", line)  # named by where it is
        assert (entry_marker(entry.quest.id) in line) == (tick_command(entry.quest) is not None)
        assert f"- [ ] {entry_marker(entry.quest.id)} {entry.where} " in line or \
            line.startswith(f"- {entry.where} ")
    assert set(boxes(body)) == {q.id for q in quests if tick_command(q) is not None}
    visible = re.sub(r"<!--.*?-->", "", body)
    assert not re.search(r"\b[a-z]+_[a-z_]+\b", visible), visible
    assert "@" not in visible  # rewritten often: it names people without notifying them
    for line in visible.splitlines():
        assert _bracket_depth(re.sub(r"`[^`]*`", "", line)) <= 1, line


def _bracket_depth(text: str) -> int:
    depth = deepest = 0
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        deepest = max(deepest, depth)
    return deepest


def test_a_box_says_what_ticking_does_in_one_sentence() -> None:
    routed = quest_in(State.TRIAGED)
    assert routed.awaiting_person
    (line,) = [x for x in inbox_body([InboxEntry(routed, "#4")]).splitlines() if "#4" in x]
    assert ("the quest waits for a person to start it; tick the box to start the fix, as "
            "`/quest fix` would. Routed to a person:") in line
    parked = quest_in(State.PARKED)
    (line,) = [x for x in inbox_body([InboxEntry(parked, "#5")]).splitlines() if "#5" in x]
    assert "; tick the box to retry it, as `/resume` would. " in line
