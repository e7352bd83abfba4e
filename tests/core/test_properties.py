"""Property tests: a hypothesis state machine drives quests through random mixes of ordinary
progress and arbitrary events, and checks the lifecycle's invariants after every step."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from bot.core import (
    EVENT_TYPES,
    TERMINAL,
    CheckpointMode,
    Event,
    InvalidTransition,
    Policy,
    State,
    fold,
    step,
    steps,
)
from bot.core.rules.budget import allowance, waits_for_spend
from bot.core.states import CHECKPOINT_AT
from bot.core.table import TABLE
from bot.journal.records import (
    dump_effect,
    dump_event,
    dump_policy,
    dump_quest,
    load_effect,
    load_event,
    load_policy,
    load_quest,
)
from questbot_testing.journals import JournalBuilder
from tests.core.quests import plausible

S = State
ACTORS = ["maintainer", "alice", "bob", None]

policies = st.builds(
    Policy,
    checkpoints=st.fixed_dictionaries(
        {c: st.builds(CheckpointMode, blocking=st.booleans()) for c in ("A", "B", "C")}),
    shadow=st.booleans(),
    max_attempts=st.integers(1, 3),
    budget_cents=st.sampled_from([None, 500, 20, 3]),  # small ones: spend requests come often
    budget_tokens=st.sampled_from([None, 2_000_000, 40, 5]),
)


class QuestMachine(RuleBasedStateMachine):
    b: JournalBuilder

    @initialize(policy=policies, route=st.sampled_from(["auto_fix", "research_only", "human",
                                                          "ignore"]))
    def start(self, policy: Policy, route: str) -> None:
        self.b = JournalBuilder("q-p", policy=policy)
        self.b.sense(route=route)
        self.prev_revision = 1
        self.last_effects: list[str] = []
        self.heads = 0

    def _apply(self, event: Event) -> None:
        before = self.b.quest
        n_events, n_effects = len(self.b.events), len(self.b.effects)
        assert before is not None
        try:
            moves = steps(before, event, self.b.policy)  # the event and its follow-ups
        except InvalidTransition as exc:
            assert exc.state == before.state.value and exc.event_type == event.type
            assert self.b.quest is before and len(self.b.events) == n_events
            self.last_effects = []
            return
        first = moves[0][1]
        assert first == step(before, event, self.b.policy)
        if before.state in TERMINAL and event.type not in TABLE[before.state]:
            assert first.absorbed and first.quest == before and first.effects == ()
            assert len(moves) == 1
        self.last_effects = []
        for moved, t in moves:
            self.b.quest = t.quest
            self.b.events.append(moved)
            self.b.effects.extend(t.effects)
            self.last_effects += [e.key for e in t.effects]
            for effect in t.effects:
                if effect.type == "land":
                    q = t.quest
                    assert q.c_approval_counts, "land without a C approval that still counts"
                    assert effect.payload == q.snapshot.model_dump(mode="json") | {"head": q.head}
                    assert effect.payload["head"] == q.head
                if effect.type == "start_agent":  # a stage starts only within the budget
                    cents, tokens = allowance(t.quest, self.b.policy)
                    assert cents is None or t.quest.usage_cost_cents < cents
                    assert tokens is None or t.quest.usage_tokens < tokens
                if effect.type == "request_spend" and "spent_cents" in effect.payload:
                    assert waits_for_spend(t.quest), "a spend request on a quest not parked"
        assert len(self.b.effects) == n_effects + len(self.last_effects)

    @rule(event_type=st.sampled_from(EVENT_TYPES), actor=st.sampled_from(ACTORS))
    def anything(self, event_type: str, actor: str | None) -> None:
        self._apply(plausible(self.b, event_type, actor or "maintainer")
                    .model_copy(update={"actor": actor}))

    @rule(digest_ok=st.booleans())
    def tampered_or_good_proof(self, digest_ok: bool) -> None:
        q = self.b.quest
        if q is None or q.head is None or q.base is None:
            return
        bundle = self.b.bundle()
        digest = bundle.digest() if digest_ok else "f" * 64
        self._apply(self.b.event("proof_completed", bundle=bundle.as_json(), digest=digest))

    @rule()
    def progress(self) -> None:
        """The ordinary next step from wherever the quest is, so deep states are reached."""
        q = self.b.quest
        assert q is not None
        ev = self.b.event
        state = q.state
        if state is S.HANDED_OFF:
            cp = CHECKPOINT_AT.get(q.checkpoint_state)
            if cp is not None and q.head_pusher != q.owner:
                self._apply(ev("checkpoint_decided", checkpoint=cp.value, verdict="approve",
                               actor=q.owner))
            else:
                self._apply(ev("released", actor=q.owner))
            return
        if state in CHECKPOINT_AT:
            self._apply(ev("checkpoint_decided", checkpoint=CHECKPOINT_AT[state].value,
                           verdict="approve", actor="carol"))
            return
        self.heads += 1
        nxt: dict[State, tuple[str, dict[str, object]]] = {
            S.SENSED: ("triaged", {"route": "auto_fix"}),
            S.TRIAGED: ("triaged", {"route": "auto_fix", "actor": "maintainer"}),
            S.RESEARCHING: ("hypothesis_written", {"summary": "h"}),
            S.REPRODUCING: (("plan_written", {"summary": "p"}) if q.reproduction
                            else ("reproduced", {"check": "t"})),
            S.PATCHING: ("patch_pushed", {"head": f"p{self.heads}", "pusher": "questbot[bot]"}),
            S.LANDING: ("landed", {"merge_sha": f"m{self.heads}"}),
            S.WATCHING: ("watch_clean", {}),
            S.CLOSED: ("reopened", {"fingerprint": q.fingerprint}),
            S.ROLLED_BACK: ("rollback_confirmed", {"revert_sha": "r"}),
            S.PARKED: (("triaged", {"route": "auto_fix", "actor": "maintainer"})
                       if q.park_reason == "research_complete" else
                       ("spend_decided", {"request_id": q.spend_pending[-1], "approved": True,
                                          "actor": "maintainer"}) if waits_for_spend(q) else
                       ("resumed", {"actor": "maintainer"})),
        }.get(state, ("usage_recorded", {"tokens": 1}))
        if state is S.PROVING:
            bundle = self.b.bundle()
            self._apply(ev("proof_completed", bundle=bundle.as_json(), digest=bundle.digest()))
            return
        self._apply(ev(nxt[0], **nxt[1]))

    @invariant()
    def revision_never_decreases(self) -> None:
        q = self.b.quest
        assert q is not None and q.revision >= self.prev_revision
        self.prev_revision = q.revision

    @invariant()
    def ready_only_with_a_bound_proof(self) -> None:
        q = self.b.quest
        assert q is not None
        if q.checkpoint_state is S.READY:
            assert q.proof_bound

    @invariant()
    def effect_keys_are_unique(self) -> None:
        keys = [e.key for e in self.b.effects]
        assert len(keys) == len(set(keys))

    @invariant()
    def quest_survives_json(self) -> None:
        q = self.b.quest
        assert q is not None and load_quest(dump_quest(q)) == q

    def teardown(self) -> None:
        if not hasattr(self, "b"):
            return
        once = fold(self.b.events, self.b.policy)
        twice = fold(self.b.events, self.b.policy)
        assert once.invalid is None
        assert once == twice
        recorded = [self.b.policy] * len(self.b.events)  # as the journal records them
        assert fold(self.b.events, Policy(max_attempts=100, shadow=True),
                    policies=recorded) == once
        assert once.quest == self.b.quest
        assert [e.key for e in once.effects] == [e.key for e in self.b.effects]
        assert [dump_effect(e) for e in once.effects] == [dump_effect(e) for e in twice.effects]
        for event in self.b.events:
            assert load_event(dump_event(event)) == event
        for effect in self.b.effects:
            assert load_effect(dump_effect(effect)) == effect
        assert load_policy(dump_policy(self.b.policy)) == self.b.policy


QuestMachine.TestCase.settings = settings(
    max_examples=int(os.environ.get("QUESTBOT_PROPERTY_EXAMPLES", "75")),
    stateful_step_count=50, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestQuestMachine = QuestMachine.TestCase
