"""Fold throughput: questbot's core beside the same lifecycle written with `transitions`.

Builds a generated journal of about 100,000 events (the main line to `closed` and reopened,
with failed proofs, pauses, claims, revisions and usage receipts mixed in), then folds it with
`bot.core.fold` and replays the same events through a `transitions.Machine` that models the
same states, main line and branches (guards as conditions, no effects, no keys), in one process,
best of several rounds each, the sides taking turns. The fold's figure is ``fold`` returning
its result: every transition, guard, effect payload and key computed, effects kept as
``EffectLog`` rows; a second figure also reads every effect back as an ``Effect``. The last
line is a JSON object of the figures.

    .venv/bin/python scripts/bench_fold.py [--events N] [--rounds R] [--clock wall|cpu]

``--clock cpu`` times both sides by the process's CPU time instead of the wall clock: on this
shared two-core machine a side that is descheduled mid-round loses wall time, not CPU time,
so the ratio swings less (both sides still share caches and memory with the neighbours).
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from typing import Any

from transitions import Machine

from bot.core import ACTIVE, Event, State, fold
from bot.core.states import CHECKPOINT_STATES, LIVE
from questbot_testing.journals import JournalBuilder

S = State


def generate(n_events: int) -> JournalBuilder:
    b = JournalBuilder("q-bench").sense()
    cycle = 0
    while len(b.events) < n_events:
        cycle += 1
        b.add("usage_recorded", tokens=1200, cost_cents=3)
        b.add("hypothesis_written", summary="h")
        if cycle % 3 == 0:
            b.add("claimed", actor="alice")
            b.add("released", actor="alice")
        b.decide("A")
        b.add("reproduced", check="t")
        b.add("plan_written", summary="p")
        b.decide("B")
        b.add("patch_pushed", head=f"a{cycle}", pusher="questbot[bot]")
        if cycle % 2 == 0:
            b.add("proof_failed", head=f"a{cycle}", reason="red")
            b.add("paused", actor="maintainer", reason="look")
            b.add("resumed", actor="maintainer")
            b.add("patch_pushed", head=f"b{cycle}", pusher="questbot[bot]")
        b.prove()
        b.decide("C")
        b.add("landed", merge_sha=f"m{cycle}")
        if cycle % 5 == 0:
            b.add("regression_detected", source="r")
            b.add("rollback_confirmed", revert_sha=f"r{cycle}")
            continue
        b.add("watch_clean")
        b.add("reopened", fingerprint="fp-1")
    return b


class BaselineQuest:
    """Just enough state for the guards; `transitions` keeps `state`."""

    def __init__(self, max_attempts: int) -> None:
        self.max_attempts = max_attempts
        self.attempts = 0
        self.resume: str | None = None
        self.claimed_from: str | None = None
        self.verdict = ""

    # guards and callbacks
    def attempts_left(self, ev: Any) -> bool:
        return bool(self.attempts < self.max_attempts)

    def approve(self, ev: Any) -> bool:
        return bool(ev.kwargs["event"].verdict == "approve")

    def revise(self, ev: Any) -> bool:
        return bool(ev.kwargs["event"].verdict == "revise")

    def count_attempt(self, ev: Any) -> None:
        self.attempts += 1

    def remember(self, ev: Any) -> None:
        self.resume = ev.transition.source

    def remember_claim(self, ev: Any) -> None:
        self.claimed_from = ev.transition.source

    def reset(self, ev: Any) -> None:
        self.attempts = 0


def baseline_machine(max_attempts: int) -> tuple[BaselineQuest, Machine]:
    model = BaselineQuest(max_attempts)
    names = [s.value for s in State]
    t: list[dict[str, Any]] = []

    def add(trigger: str, source: Any, dest: str, **kw: Any) -> None:
        t.append({"trigger": trigger, "source": source, "dest": dest, **kw})

    add("signal_sensed", "sensed", "sensed")
    add("triaged", "sensed", "triaged")
    add("research_started", "triaged", "researching")
    add("hypothesis_written", "researching", "hypothesised")
    for src, ok, back in [("hypothesised", "reproducing", "researching"),
                          ("planned", "patching", "reproducing"),
                          ("ready", "landing", "patching")]:
        add("checkpoint_decided", src, ok, conditions="approve")
        add("checkpoint_decided", src, back, conditions="revise")
        add("checkpoint_decided", src, "abandoned")
    add("reproduced", "reproducing", "reproducing")
    add("plan_written", "reproducing", "planned")
    add("patch_pushed", "patching", "proving", before="count_attempt")
    add("proof_completed", "proving", "ready")
    add("proof_failed", "proving", "patching", conditions="attempts_left")
    add("proof_failed", "proving", "parked", before="remember")
    add("landed", "landing", "watching")
    add("watch_clean", "watching", "closed")
    add("regression_detected", "watching", "rolled_back")
    add("rollback_confirmed", "rolled_back", "researching", after="reset")
    add("reopened", "closed", "researching", after="reset")
    add("paused", [s.value for s in ACTIVE], "parked", before="remember")
    for target in ACTIVE:
        add("resumed", "parked", target.value,
            conditions=lambda ev, v=target.value: ev.model.resume == v)
    add("killed", [s.value for s in LIVE], "abandoned")
    add("claimed", [s.value for s in CHECKPOINT_STATES], "handed_off", before="remember_claim")
    for target in CHECKPOINT_STATES:
        add("released", "handed_off", target.value,
            conditions=lambda ev, v=target.value: ev.model.claimed_from == v)
    add("usage_recorded", "*", "=")
    machine = Machine(model=model, states=names, transitions=t, initial="sensed",
                      send_event=True, auto_transitions=False)
    return model, machine


def run_baseline(events: list[Event], max_attempts: int) -> str:
    model, _machine = baseline_machine(max_attempts)
    trigger = model.trigger  # type: ignore[attr-defined]
    for ev in events[1:]:
        trigger(ev.type, event=ev)
    return str(model.state)  # type: ignore[attr-defined]


def best_rates(fns: list[Any], n: int, rounds: int, *, collector: bool,
               clock: Any = time.perf_counter) -> list[float]:
    """Best of ``rounds`` for each function, taking turns round by round, so that a slow
    stretch of this shared machine falls on every side rather than on whichever ran then.
    Each timed call starts from a collected heap; with ``collector`` off, Python's cyclic GC
    is paused around it, as ``timeit`` does by default."""
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for side, fn in enumerate(fns):
            gc.collect()
            if not collector:
                gc.disable()
            try:
                start = clock()
                fn()
                best[side] = min(best[side], clock() - start)
            finally:
                gc.enable()
    return [n / b for b in best]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="time by the wall clock (default) or the process's CPU time")
    args = parser.parse_args()
    clock = time.process_time if args.clock == "cpu" else time.perf_counter

    b = generate(args.events)
    events, policy = b.events, b.policy
    result = fold(events, policy)
    assert result.invalid is None and result.quest == b.quest
    assert run_baseline(events, policy.max_attempts) == b.quest.state.value  # type: ignore[union-attr]

    def ours_fn() -> None:
        fold(events, policy)

    def reading_fn() -> None:
        for effect in fold(events, policy).effects:
            effect.key  # noqa: B018  # each Effect made from its row, read, let go

    def base_fn() -> None:
        run_baseline(events, policy.max_attempts)

    n = len(events)
    ours, reading, base = best_rates([ours_fn, reading_fn, base_fn], n, args.rounds,
                                     collector=True, clock=clock)
    ours_paused, base_paused = best_rates([ours_fn, base_fn], n, args.rounds, collector=False,
                                          clock=clock)
    figures = {"events": n, "effects": len(result.effects), "clock": args.clock,
               "events_per_s": round(ours), "baseline_events_per_s": round(base),
               "ratio": round(ours / base, 2),
               "events_per_s_gc_paused": round(ours_paused),
               "baseline_events_per_s_gc_paused": round(base_paused),
               "ratio_gc_paused": round(ours_paused / base_paused, 2),
               "events_per_s_reading_every_effect": round(reading),
               "ratio_reading_every_effect": round(reading / base, 2)}
    print(f"journal: {n} events, {len(result.effects)} effects, final state "
          f"{result.quest.state.value} at revision {result.quest.revision}")  # type: ignore[union-attr]
    print("                      collector on     collector paused (as timeit)")
    print(f"questbot fold:        {ours:>10,.0f}/s     {ours_paused:>10,.0f}/s"
          "   (step + guards + effects + keys)")
    print(f"transitions baseline: {base:>10,.0f}/s     {base_paused:>10,.0f}/s"
          "   (states + guards only)")
    print(f"ratio:                {ours / base:>10.2f}x     {ours_paused / base_paused:>10.2f}x")
    print(f"fold, then read every effect: {reading:,.0f}/s, {reading / base:.2f}x the baseline"
          " (an Effect made from each row as it is read)")
    print(json.dumps(figures))

if __name__ == "__main__":
    main()
