"""The invariant of issue 25: after any effect fails for good, no quest sits in a working state
with nothing running (``bot.core.rules.gave_up``).

A hypothesis state machine drives a quest through ordinary progress and arbitrary events, and
makes any effect asked so far fail for good (``effect_failed`` with its real key and type, as
``bot.worker.process.failure_reporter`` reports it). After every step: when the quest is in a
state only questbot's own work moves on (``WAITS_ON``), an effect of that work, asked since
the quest entered the state, has not failed — it is still running or queued, and will move the
quest. Otherwise the quest is parked for a person, waits for one, or has ended.

On today's code before the fix (``effect_failed`` only counted), the first failed
``start_agent`` left the quest ``researching`` for ever, and this fails at once."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from bot.core import EVENT_TYPES, Event, InvalidTransition, Policy, State, steps
from bot.core.effects import EffectType
from bot.core.quest import ParkReason
from bot.core.states import CHECKPOINT_AT
from bot.core.table import WAITS_ON
from questbot_testing.journals import JournalBuilder
from tests.core.quests import plausible

S = State


class NeverStuck(RuleBasedStateMachine):
    b: JournalBuilder

    @initialize(route=st.sampled_from(["auto_fix", "research_only", "human"]),
                max_attempts=st.integers(1, 3))
    def start(self, route: str, max_attempts: int) -> None:
        self.b = JournalBuilder("q-s", policy=Policy(max_attempts=max_attempts))
        self.b.sense(route=route)
        self.failed: set[str] = set()
        self.entered = 0
        """Where in ``b.effects`` the quest's current stay in its state began."""
        self.heads = 0

    def _apply(self, event: Event) -> None:
        before = self.b.quest
        assert before is not None
        try:
            moves = steps(before, event, self.b.policy)
        except InvalidTransition:
            return
        for moved, t in moves:
            was = self.b.quest
            assert was is not None
            if t.quest.state is not was.state:
                self.entered = len(self.b.effects)
            self.b.quest = t.quest
            self.b.events.append(moved)
            self.b.effects.extend(t.effects)

    @rule(event_type=st.sampled_from([t for t in EVENT_TYPES if t != "effect_failed"]))
    def anything(self, event_type: str) -> None:
        self._apply(plausible(self.b, event_type, "maintainer"))

    @rule()
    def progress(self) -> None:
        q = self.b.quest
        assert q is not None
        ev = self.b.event
        if q.state in CHECKPOINT_AT:
            self._apply(ev("checkpoint_decided", checkpoint=CHECKPOINT_AT[q.state].value,
                           verdict="approve", actor="carol"))
            return
        if q.state is S.PROVING and q.head and q.base:
            bundle = self.b.bundle()
            self._apply(ev("proof_completed", bundle=bundle.as_json(), digest=bundle.digest()))
            return
        self.heads += 1
        nxt: dict[State, tuple[str, dict[str, object]]] = {
            S.TRIAGED: ("triaged", {"route": "auto_fix", "actor": "maintainer"}),
            S.RESEARCHING: ("hypothesis_written", {"summary": "h"}),
            S.REPRODUCING: (("plan_written", {"summary": "p"}) if q.reproduction
                            else ("reproduced", {"check": "t"})),
            S.PATCHING: ("patch_pushed", {"head": f"p{self.heads}", "pusher": "questbot[bot]"}),
            S.LANDING: ("landed", {"merge_sha": f"m{self.heads}"}),
            S.WATCHING: ("watch_clean", {}),
            S.ROLLED_BACK: ("rollback_confirmed", {"revert_sha": "r"}),
            S.PARKED: ("resumed", {"actor": "maintainer"}),
        }
        if q.state in nxt:
            name, fields = nxt[q.state]
            self._apply(ev(name, **fields))

    @rule(data=st.data())
    def an_effect_fails_for_good(self, data: st.DataObject) -> None:
        pending = [e for e in self.b.effects if e.key not in self.failed]
        if not pending:
            return
        effect = data.draw(st.sampled_from(pending))
        self.failed.add(effect.key)
        self._apply(self.b.event("effect_failed", effect_key=effect.key,
                                 effect_type=effect.type.value, error="it broke", tries=8))

    @invariant()
    def nothing_sits_in_a_working_state_with_nothing_running(self) -> None:
        q = self.b.quest
        assert q is not None
        waits_on = WAITS_ON.get(q.state)
        if waits_on is None:
            return
        running = [e for e in self.b.effects[self.entered:]
                   if e.type.value in waits_on and e.key not in self.failed]
        assert running, (f"{q.state.value} at revision {q.revision} waits on "
                         f"{sorted(waits_on)}, and every one asked since it got there failed")

    @invariant()
    def a_park_for_failed_work_says_what_failed(self) -> None:
        q = self.b.quest
        assert q is not None
        if q.state is S.PARKED and q.park_reason is ParkReason.WORK_FAILED:
            assert q.park_note and "could not" in q.park_note and "it broke" in q.park_note
            assert q.resume_state in WAITS_ON  # /resume asks for the work again


NeverStuck.TestCase.settings = settings(
    max_examples=int(os.environ.get("QUESTBOT_PROPERTY_EXAMPLES", "150")),
    stateful_step_count=40, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
test_never_stuck = NeverStuck.TestCase


def test_every_working_state_names_only_effects_that_exist() -> None:
    types = {t.value for t in EffectType}
    assert all(waits <= types for waits in WAITS_ON.values())
