"""A quest at each of its sixteen states, with what the projection would hand the renderers:
its journal's timeline and path, what failed, and evidence once research has run. Built from
``JournalBuilder`` (ids and times from a counter), so every render is the same every time —
what the snapshot tests compare."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bot.agent.evidence import CommandOutput, EvidenceBundle
from bot.agent.machine import RunState
from bot.agent.result import AppliedChange, TaskResult
from bot.agent.validation import Claim, ClaimVerdict, Evidence, Verdict
from bot.core import Quest, State
from bot.core.lifecycle import path
from bot.core.proof import CheckRecord, Reproduction
from bot.words import status_comment as status
from bot.words.timeline import entry_of
from questbot_testing.journals import ZERO_DIGEST, JournalBuilder

PULL = "https://github.com/octo/demo/pull/7"
CHECK = "https://github.com/octo/demo/runs/99"
FAILED = status.FailedRun("https://github.com/octo/demo/runs/11",
                          "https://ci.example.com/octo/demo/jobs/11", "base0")
PYTHON = "/home/worker/questbot/.venv/bin/python"
"""A worker's interpreter, as a proof's argv would name it: never shown."""


def evidence(quest: Quest) -> EvidenceBundle | None:
    """What research (and, from patching on, the proof) established for ``quest``."""
    if quest.state in (State.SENSED, State.TRIAGED, State.RESEARCHING):
        return None
    claims = (
        ClaimVerdict(claim=Claim(statement="pages() drops the last partial page",
                                 confidence=0.9, evidence=(Evidence(
                                     path="pager.py", line=3,
                                     quote="return total // per_page"),)),
                     verdict=Verdict.SUPPORTED),
        ClaimVerdict(claim=Claim(statement="only totals that are not a multiple fail",
                                 confidence=0.7), verdict=Verdict.INCONCLUSIVE),
    )
    proved = quest.head is not None
    checks = (CheckRecord(name="tests", command=(PYTHON, "-m", "unittest", "-q"), exit_code=0,
                          output_sha256=ZERO_DIGEST),) if proved else ()
    result = TaskResult(
        run_id=f"{quest.id}:run", state=RunState.COMPLETED if proved else RunState.NEEDS_HUMAN,
        reason=None if proved else "checkpoint A waits for a person", attempts=1,
        change=AppliedChange(base="base0", head=quest.head, files=("pager.py",))
        if proved else None, checks=checks)
    outputs = (
        CommandOutput.of(name="tests", at="head", command=(PYTHON, "-m", "unittest", "-q"),
                         exit_code=0, output="....\nRan 4 tests in 0.01s\n\nOK\n"),
        CommandOutput.of(name="reproduction", at="base", command=("python3", "-m", "unittest"),
                         exit_code=1, output=(
                             'File "/tmp/questbot-proof-1a2b/base/tests/test_pager.py", line '
                             "9, in test_last_page\nAssertionError: 2 != 3\n\nFAILED "
                             "(failures=1)\n")),
    ) if proved else ()
    return EvidenceBundle(
        hypothesis="pages() rounds down, so the last partial page is lost", claims=claims,
        reproduction=Reproduction(name="reproduction", command=("python3", "-m", "unittest"),
                                  base_exit_code=1, head_exit_code=0) if proved else None,
        plan="round up in pages()" if quest.plan else None, result=result,
        proof_digest=ZERO_DIGEST if proved else None, outputs=outputs,
        lines=(1, 1) if proved else None)


def _main_line(b: JournalBuilder) -> None:
    b.add("signal_sensed", repo=b.repo, fingerprint="check:tests", kind="check_failure",
          severity="high", title="check tests failed", source=FAILED.source, base="base0",
          details_url=FAILED.details_url)


STEPS: list[tuple[str, Callable[[JournalBuilder], object]]] = [
    ("sensed", _main_line),
    ("triaged", lambda b: b.add("triaged", route="auto_fix")),
    ("usage", lambda b: b.add("usage_recorded", tokens=12_345, cost_cents=42)),
    ("hypothesis", lambda b: b.add("hypothesis_written", summary="pages() rounds down")),
    ("A", lambda b: b.decide("A", actor="alice")),
    ("reproduced", lambda b: b.add("reproduced", check="test_last_page",
                                   command=("python3", "-m", "unittest"))),
    ("plan", lambda b: b.add("plan_written", summary="round up", risk="low")),
    ("B", lambda b: b.decide("B", actor="alice")),
    ("patch", lambda b: b.add("patch_pushed", head="head1abcdef0123", pusher="questbot[bot]")),
    ("proof", lambda b: b.prove()),
    ("C", lambda b: b.decide("C", actor="alice")),
    ("landed", lambda b: b.add("landed", merge_sha="merge1abcdef012")),
    ("clean", lambda b: b.add("watch_clean")),
]
"""The main line, failing check to closed."""

BRANCHES: dict[State, list[tuple[str, Callable[[JournalBuilder], object]]]] = {
    State.TRIAGED: [("sensed", _main_line), ("human", lambda b: b.add("triaged", route="human"))],
    State.HANDED_OFF: [*STEPS[:4], ("claim", lambda b: b.add("claimed", actor="bob"))],
    State.PARKED: [*STEPS[:4], ("pause", lambda b: b.add("paused", actor="bob", reason="lunch"))],
    State.ABANDONED: [*STEPS[:4], ("kill", lambda b: b.add("killed", actor="bob",
                                                           reason="not a bug"))],
    State.ROLLED_BACK: [*STEPS[:12], ("regression", lambda b: b.add(
        "regression_detected", source="https://github.com/octo/demo/runs/12"))],
}


@dataclass(frozen=True, slots=True)
class AtState:
    quest: Quest
    view: status.StatusView


def _view(b: JournalBuilder) -> AtState:
    quest = b.quest
    assert quest is not None
    return AtState(quest, status.StatusView(
        quest, [entry_of(e) for e in b.events], evidence(quest), PULL,
        path=path(b.events, b.policy), failed=FAILED, check_url=CHECK))


def every_state() -> dict[State, AtState]:
    """The first time the main line reaches each state, and the branches for the rest."""
    out: dict[State, AtState] = {}
    for state, steps in [(None, STEPS), *BRANCHES.items()]:
        b = JournalBuilder("q-7")
        for _name, do in steps:
            do(b)
            assert b.quest is not None
            if (state is None and b.quest.state not in out) or b.quest.state is state:
                out[b.quest.state] = _view(b)
    return out
