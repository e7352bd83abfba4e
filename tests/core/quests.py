"""Quests in every state and a plausible event of every type for each, for the table tests and
the property tests. Built through the real core with ``JournalBuilder``."""

from __future__ import annotations

from typing import Any

from bot.core import Event, Policy, Quest, State
from questbot_testing.journals import JournalBuilder

S = State


def builder_in(state: State, policy: Policy | None = None) -> JournalBuilder:
    """A journal that leaves its quest in ``state`` by the shortest ordinary path."""
    b = JournalBuilder("q-1", policy=policy)
    if state is S.SENSED:
        b.add("signal_sensed", repo="octo/demo", fingerprint="fp-1", kind="check_failure",
              severity="high", source="check_run:1", base="base0")
        return b
    if state is S.TRIAGED:
        return b.sense(route="human")
    if state is S.ABANDONED:
        b.sense()
        b.add("killed", actor="maintainer", reason="not worth it")
        return b
    b.sense()
    if state is S.RESEARCHING:
        return b
    if state is S.PARKED:
        b.add("paused", actor="maintainer", reason="holiday")
        return b
    b.add("hypothesis_written", summary="off-by-one")
    if state is S.HYPOTHESISED:
        return b
    b.decide("A")
    if state is S.REPRODUCING:
        return b
    b.add("reproduced", check="test_pager")
    b.add("plan_written", summary="fix the bound")
    if state is S.PLANNED:
        return b
    b.decide("B")
    if state is S.PATCHING:
        return b
    b.add("patch_pushed", head="head1", pusher="questbot[bot]")
    if state is S.PROVING:
        return b
    b.prove()
    if state is S.READY:
        return b
    if state is S.HANDED_OFF:
        b.add("claimed", actor="alice")
        return b
    b.decide("C")
    if state is S.LANDING:
        return b
    b.add("landed", merge_sha="merge1")
    if state is S.WATCHING:
        return b
    if state is S.ROLLED_BACK:
        b.add("regression_detected", source="check_run:9")
        return b
    b.add("watch_clean")
    assert state is S.CLOSED
    return b


def quest_in(state: State, policy: Policy | None = None) -> Quest:
    q = builder_in(state, policy).quest
    assert q is not None and q.state is state
    return q


def plausible(b: JournalBuilder, event_type: str, actor: str = "maintainer") -> Event:
    """A well-formed event of ``event_type`` that fits ``b``'s quest as well as it can."""
    q = b.quest
    fields: dict[str, Any] = {
        "signal_sensed": {"repo": "octo/demo", "fingerprint": "fp-1", "kind": "check_failure"},
        "triaged": {"route": "auto_fix", "actor": actor},
        "research_started": {},
        "held": {"reason": "slot"},
        "rerun_requested": {"route": "auto_fix", "sha": "base-1", "run": "check_run:1"},
        "rerun_reported": {"result": "failed", "run": "check_run:2"},
        "signal_attached": {"fingerprint": "fp-1", "source": "check_run:2"},
        "hypothesis_written": {"summary": "h"},
        "reproduced": {"check": "test_x"},
        "reproduction_failed": {"reason": "passes on base"},
        "agent_halted": {"stage": "research", "outcome": "needs_human", "reason": "high risk"},
        "plan_written": {"summary": "p"},
        "patch_pushed": {"head": "head-new", "pusher": "questbot[bot]"},
        "proof_failed": {"head": (q.head if q and q.head else "h"), "reason": "tests fail"},
        "checkpoint_decided": {"checkpoint": _open_checkpoint(q), "verdict": "approve",
                               "actor": actor},
        "claimed": {"actor": actor},
        "released": {"actor": actor},
        "paused": {"actor": actor, "reason": "wait"},
        "resumed": {"actor": actor},
        "killed": {"actor": actor, "reason": "no"},
        "human_revision": {"head": "human-head", "pusher": "bob"},
        "base_moved": {"base": "base-new"},
        "landed": {"merge_sha": "m2"},
        "watch_clean": {},
        "regression_detected": {"source": "check_run:5"},
        "rollback_confirmed": {"revert_sha": "r1"},
        "reopened": {"fingerprint": "fp-1", "severity": "critical"},
        "parent_landed": {"parent": (q.parent if q and q.parent else "q-0")},
        "child_evidence": {"child": "q-9"},
        "spend_requested": {"amount_cents": 500, "purpose": "user study"},
        "spend_decided": {"request_id": (q.spend_pending[0] if q and q.spend_pending else "x"),
                          "approved": True},
        "usage_recorded": {"tokens": 10, "cost_cents": 2},
        "comment_posted": {"comment_id": 1},
        "effect_failed": {"effect_key": "q-1:1:land:e:0", "effect_type": "land",
                          "error": "403 forbidden", "tries": 5},
    }[event_type] if event_type != "proof_completed" else _proof_fields(b)
    return b.event(event_type, **fields)


def _open_checkpoint(q: Quest | None) -> str:
    from bot.core.states import CHECKPOINT_AT

    if q is None:
        return "A"
    cp = CHECKPOINT_AT.get(q.checkpoint_state)
    return cp.value if cp else "A"


def _proof_fields(b: JournalBuilder) -> dict[str, Any]:
    q = b.quest
    if q is None or q.head is None or q.base is None:
        from bot.core import ProofBundle

        bundle = ProofBundle(quest_id="q-1", revision=1, risk="low", base="b", head="h")
        return {"bundle": bundle.as_json(), "digest": bundle.digest()}
    bundle = b.bundle()
    return {"bundle": bundle.as_json(), "digest": bundle.digest()}
