"""One quest stage as one agent run: checkout, agent, validation, verify, review.

``run_stage`` drives ``bot.agent.machine`` through the moves the stage needs and returns a
``StageOutcome``; ``bot.agent.runs`` turns that into quest events. Where each stage stops:

* **research** — discover → understand → validate. Supported claims leave the run at ``plan``:
  the hypothesis is done, and authorising what comes next is checkpoint A, a person's call.
  Rejected claims end it ``failed``, inconclusive ones ``needs_human``.
* **reproduce** — discover → understand → validate, where the claim validated is the
  reproduction itself: the checkout may change its own files and nothing else, nothing under
  ``.github/`` (``bot.agent.scope``), and its command must *fail* at the base with its own
  files laid over it (exit 124 "timed out" and 127 "could not start" do not count as
  failing). Then the reproduction is pushed as one commit on ``quest/<id>`` and the run
  stops at ``plan`` with the agent's plan — its files written as its last line, the scope
  the patch keeps to (``scope.scoped_plan``) — which checkpoint B authorises.
* **plan** (revise at B) — the reproduction stands; the agent writes a new plan.
* **patch** — the whole pipeline: plan → execute (the agent changes the checkout) → verify
  (the configured checks and the reproduction, in the checkout) → review (the change must not
  touch the reproduction's files, ``.github/``, or a file the approved plan does not name:
  ``bot.agent.scope``) → completed, with in-run repair up to ``INNER_ATTEMPTS``. Only a
  ``TaskResult`` that is ``verified`` is pushed: that flag is the one gate, so a failed
  verification can never leave this module as a patch. A high-risk quest stops at
  ``needs_human`` before execute, as the machine's rule says.

Every ``StageOutcome`` carries a ``TaskResult`` for the evidence store
(``bot.agent.evidence_store``): the run's own when it ended, and for a run that stopped at
``plan`` for a checkpoint, that run escalated to ``needs_human`` with the checkpoint as the
reason (on a copy: ``state`` stays ``plan``, which is what ``bot.agent.runs`` reads). So the
report of a run waiting for a person says exactly that, never "verified".
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.adapters import GitHost
from bot.agent.commit_words import commit_message
from bot.agent.machine import AgentRun, EventType, RunEvent, RunState, step
from bot.agent.proof_runner import EXIT_NOT_STARTED, EXIT_TIMED_OUT, CheckCommand, run_command
from bot.agent.result import AppliedChange, TaskResult
from bot.agent.scope import patch_problem, plan_scope, reproduction_problem, scoped_plan
from bot.agent.task import Agent, AgentReply, AgentTask, ReplyStatus, Stage, Usage
from bot.agent.validation import (
    CheckoutView,
    ClaimVerdict,
    Verdict,
    overall_verdict,
    validate_claims,
)
from bot.agent.workspace import (
    Checkout,
    PushNotes,
    apply_changes,
    changes_in,
    earlier_push,
    git,
    materialise,
    push_change,
)
from bot.core import Quest
from bot.core.canonical import canonical_digest
from bot.core.proof import CheckRecord, Risk

INNER_ATTEMPTS = 2
"""Plans per patch run unless the settings say (``agent.max_attempts``): the first, and one
repair with the failing output."""
CHECK_TIMEOUT_SECONDS = 600.0
E = EventType


_WAITS = {
    Stage.RESEARCH: "the hypothesis waits for checkpoint A: a person decides whether to go on",
    Stage.REPRODUCE: "the reproduction and plan wait for checkpoint B: a person decides "
    "whether to patch",
    Stage.PLAN: "the plan waits for checkpoint B: a person decides whether to patch",
}
"""Why a run that stopped at ``plan`` is not finished: a checkpoint is a person's call."""


@dataclass(frozen=True, slots=True)
class StageOutcome:
    """What a stage produced; ``state`` is where the agent run stopped."""

    stage: Stage
    state: RunState
    reason: str | None = None
    hypothesis: str | None = None
    evidence_digest: str | None = None
    claims: tuple[ClaimVerdict, ...] = ()
    reproduction: str | None = None
    reproduction_command: tuple[str, ...] = ()
    reproduced: bool = False
    reproduction_exit: int | None = None
    """The reproduction's exit code on the base with its files laid over it (the tree of the
    commit it is pushed as), when it ran."""
    commit: str | None = None
    plan: str | None = None
    risk: Risk = Risk.LOW
    head: str | None = None
    result: TaskResult | None = None
    """The run's terminal result (see the module docs); ``None`` only for outcomes built by
    hand. A patch result is pushed only when ``verified``."""
    usage: Usage = field(default_factory=Usage)


@dataclass
class StageRun:
    """Inputs of one stage, and the machine as it goes."""

    quest: Quest
    task: AgentTask
    agent: Agent
    host: GitHost
    workdir: Path
    checks: Sequence[CheckCommand] = ()
    protected: frozenset[str] = frozenset()
    """The reproduction's files: a patch must leave them as they are."""
    effect_key: str | None = None
    """The ``start_agent`` effect this run is for: named in the commit it pushes."""
    notes: PushNotes | None = None
    """Where the push is noted before it is made, so a rerun of the effect pushes once."""
    max_attempts: int = INNER_ATTEMPTS
    """Plans a patch run may try: failing checks go back to the agent until they are spent."""
    run: AgentRun = field(init=False)
    usage: Usage = field(default_factory=Usage)
    _moves: int = 0

    def __post_init__(self) -> None:
        self.run = AgentRun(run_id=f"{self.quest.id}:{self.task.stage.value}",
                            max_attempts=self.max_attempts)

    @property
    def state(self) -> RunState:
        return self.run.state

    def move(self, type_: EventType, **fields: Any) -> RunState:
        self._moves += 1
        event = RunEvent(id=f"{self.run.run_id}/{self._moves}", type=type_, **fields)
        self.run = step(self.run, event)
        return self.run.state

    def ended(self, *, checks: Sequence[CheckRecord] = (), **fields: Any) -> StageOutcome:
        """The outcome as the run stands; ``checks`` are those it executed, for its result."""
        fields.setdefault("result", self.report(tuple(checks)))
        fields.setdefault("reason", self.run.reason)
        return StageOutcome(stage=self.task.stage, state=self.run.state, usage=self.usage,
                            **fields)

    def report(self, checks: tuple[CheckRecord, ...] = ()) -> TaskResult:
        """The run's result; a run stopped at a checkpoint is reported waiting for a person."""
        run = self.run
        if not run.finished:
            why = _WAITS.get(self.task.stage, f"the {self.task.stage.value} run stopped at "
                             f"{run.state.value}; a person decides what comes next")
            run = step(run, RunEvent(id=f"{run.run_id}/report", type=E.ESCALATED, reason=why))
        return TaskResult.from_run(run, checks=checks)

    async def ask(self, checkout: Checkout, **changes: Any) -> AgentReply:
        task = self.task.model_copy(update={"checkout": str(checkout.path), **changes})
        reply = await self.agent.run(task, checkout.path)
        if reply.usage is not None:
            self.usage = self.usage + reply.usage
        return reply

    def refuse_reply(self, reply: AgentReply) -> bool:
        """End the run if the agent ended it; whether it did."""
        why = reply.reason or f"the agent answered {reply.status.value} without a reason"
        if reply.status is ReplyStatus.OK:
            return False
        if reply.status is ReplyStatus.FAILED:
            self.move(E.FAILED, reason=why)
        elif reply.status is ReplyStatus.REFUSED and self.run.state is RunState.PLAN:
            self.move(E.PLAN_REFUSED, reason=why)
        else:
            self.move(E.ESCALATED, reason=f"the agent asked for a person: {why}")
        return True


def _digest(hypothesis: str, verdicts: Sequence[ClaimVerdict]) -> str:
    return canonical_digest({"hypothesis": hypothesis,
                             "claims": [v.model_dump(mode="json") for v in verdicts]})


def _validate(s: StageRun, checkout: Checkout, reply: AgentReply) -> tuple[ClaimVerdict, ...]:
    verdicts = validate_claims(reply.claims, CheckoutView(checkout.path))
    overall = overall_verdict(verdicts)
    reasons = "; ".join(r.message for v in verdicts for r in v.reasons) or "no claims were made"
    if overall is Verdict.SUPPORTED:
        s.move(E.CLAIM_SUPPORTED)
    elif overall is Verdict.INCONCLUSIVE:
        s.move(E.CLAIM_INCONCLUSIVE, reason=f"claims are inconclusive: {reasons}")
    else:
        s.move(E.CLAIM_REJECTED, reason=f"claims were rejected: {reasons}")
    return verdicts


async def run_checks(commands: Sequence[CheckCommand], where: Path,
                     home: Path) -> tuple[list[CheckRecord], str]:
    """Run ``commands`` in ``where`` off the event loop, in the sandbox (``where`` and ``home``
    writable, no network, no worker secrets); the records and the failing output."""
    home.mkdir(parents=True, exist_ok=True)
    records: list[CheckRecord] = []
    failing: list[str] = []
    for command in commands:
        result = await asyncio.to_thread(run_command, command.argv, where, home=home,
                                         timeout_seconds=CHECK_TIMEOUT_SECONDS)
        records.append(CheckRecord(name=command.name, command=command.argv,
                                   exit_code=result.exit_code, output_sha256=result.output_sha256))
        if result.exit_code != 0:
            failing.append(f"$ {' '.join(command.argv)}  (exit {result.exit_code})\n"
                           f"{result.output_tail[-4000:]}")
    return records, "\n\n".join(failing)


async def research(s: StageRun) -> StageOutcome:
    checkout = await _checkout(s, s.quest.base)
    reply = await s.ask(checkout)
    if s.refuse_reply(reply):
        return s.ended()
    if not reply.hypothesis:
        s.move(E.FAILED, reason="the research reply has no hypothesis")
        return s.ended()
    s.move(E.UNDERSTOOD)
    verdicts = _validate(s, checkout, reply)
    return s.ended(hypothesis=reply.hypothesis, claims=verdicts,
                   evidence_digest=_digest(reply.hypothesis, verdicts))


async def reproduce(s: StageRun) -> StageOutcome:
    base = s.quest.base
    checkout = await _checkout(s, base)
    reply = await s.ask(checkout)
    if s.refuse_reply(reply):
        return s.ended()
    repro, plan = reply.reproduction, reply.plan
    if repro is None or plan is None:
        s.move(E.FAILED, reason="the reproduce reply needs both a reproduction and a plan")
        return s.ended()
    apply_changes(checkout, {p: c.encode() for p, c in repro.files.items()})
    changes = await changes_in(checkout)
    s.move(E.UNDERSTOOD, risk=plan.risk)
    facts: dict[str, Any] = {"reproduction": repro.name, "reproduction_command": repro.command,
                             "plan": scoped_plan(plan.summary, plan.files), "risk": plan.risk}
    if not changes:
        s.move(E.CLAIM_REJECTED, reason="the reproduction adds no files to the repository")
        return s.ended(**facts)
    if (problem := reproduction_problem(changes, repro.files)) is not None:
        s.move(E.CLAIM_REJECTED, reason=f"the reproduction was refused: {problem}; nothing "
               "was pushed")
        return s.ended(**facts)
    records, _ = await run_checks([CheckCommand(name=repro.name, argv=repro.command)],
                                  checkout.path, s.workdir / "home")
    code = records[0].exit_code
    if code == 0:
        s.move(E.CLAIM_REJECTED, reason=f"{repro.name} passes on the base {base}; it does not "
               "reproduce the failure")
    elif code in (EXIT_TIMED_OUT, EXIT_NOT_STARTED):
        what = "timed out" if code == EXIT_TIMED_OUT else "could not be started"
        s.move(E.CLAIM_REJECTED, reason=f"{repro.name} {what} on the base; that is not a "
               "reproduction")
    else:
        s.move(E.CLAIM_SUPPORTED)
    facts["reproduction_exit"] = code
    if s.run.state is not RunState.PLAN:
        return s.ended(**facts)
    onto = await _onto(s, checkout, {p: c.encode() for p, c in repro.files.items()})
    commit = await push_change(s.host, branch=s.quest.branch,
                               parent=onto, changes=changes,
                               message=commit_message(f"Reproduce: {repro.name}",
                                                      f"questbot quest {s.quest.id}"),
                               effect_key=s.effect_key, notes=s.notes)
    return s.ended(reproduced=True, commit=commit, **facts)


async def _onto(s: StageRun, checkout: Checkout, files: dict[str, bytes]) -> Checkout:
    """Where the reproduction's commit goes: on top of what the quest branch holds — the
    commit that opened the pull request, and any commit a person pushed there — never over
    it (it was proved failing on the base with its files laid over, in ``checkout``). A run
    of this effect that pushed before a crash goes where that push went, so it is found and
    not made twice."""
    earlier = (await earlier_push(s.host, s.notes, s.workdir / "onto")
               if s.notes is not None else None)
    head = (earlier[0].parent if earlier is not None
            else await s.host.branch_head(s.quest.branch))
    if head is None or head == checkout.commit:
        return checkout
    onto = await materialise(s.host, head, s.workdir / "onto")
    apply_changes(onto, files)  # on disk too, so each file keeps the mode it has here
    return onto


async def plan(s: StageRun) -> StageOutcome:
    checkout = await _checkout(s, s.quest.head or s.quest.base)
    reply = await s.ask(checkout)
    if s.refuse_reply(reply):
        return s.ended()
    if reply.plan is None:
        s.move(E.FAILED, reason="the plan reply has no plan")
        return s.ended()
    s.move(E.UNDERSTOOD, risk=reply.plan.risk)
    if reply.claims:
        _validate(s, checkout, reply)
    else:
        s.move(E.CLAIM_SUPPORTED)  # the recorded reproduction is the evidence; it stands
    return s.ended(plan=scoped_plan(reply.plan.summary, reply.plan.files), risk=reply.plan.risk)


async def patch(s: StageRun) -> StageOutcome:
    branch = s.quest.branch
    # a run of this effect before a crash may have pushed already: work on what it worked on
    earlier = (await earlier_push(s.host, s.notes, s.workdir / "checkout")
               if s.notes is not None else None)
    parent = (earlier[0].parent if earlier is not None else
              await s.host.branch_head(branch) or s.quest.head or s.quest.base)
    checkout = await _checkout(s, parent)
    repair = s.task.repair
    checks: list[CheckRecord] = []
    changes: dict[str, bytes | None] = {}
    if s.quest.risk is Risk.HIGH and s.run.state is RunState.UNDERSTAND:
        # a high-impact change stops for a person before execute whatever the agent would
        # write: stop before asking it, so no patch is paid for that is never pushed
        s.move(E.UNDERSTOOD)
        s.move(E.CLAIM_SUPPORTED)  # the reproduction approved at B is the evidence
        s.move(E.PLAN_AUTHORIZED, risk=s.quest.risk)
        return s.ended()
    while True:
        reply = await s.ask(checkout, repair=repair, attempt=s.run.attempts + 1)
        if s.refuse_reply(reply):
            return s.ended()
        if s.run.state is RunState.UNDERSTAND:
            s.move(E.UNDERSTOOD)
            if reply.claims:
                _validate(s, checkout, reply)
            else:
                s.move(E.CLAIM_SUPPORTED)  # the reproduction approved at B is the evidence
            if s.state is not RunState.PLAN:
                return s.ended()
        if s.move(E.PLAN_AUTHORIZED, risk=s.quest.risk) is not RunState.EXECUTE:
            return s.ended()
        apply_changes(checkout, {p: None if c is None else c.encode()
                                 for p, c in reply.files.items()})
        changes = await changes_in(checkout)
        if not changes:
            s.move(E.FAILED, reason="the agent changed nothing; there is no patch to push")
            return s.ended()
        s.move(E.CHANGE_APPLIED)
        checks, failing = await run_checks(s.checks, checkout.path, s.workdir / "home")
        if failing:
            s.move(E.CHECKS_FAILED, reason="checks failed in the patched checkout",
                   output=failing)
        elif problem := patch_problem(changes, s.protected, plan_scope(s.quest.plan)):
            s.move(E.CHECKS_PASSED)
            s.move(E.REVIEW_REJECTED, reason=problem)
        else:
            s.move(E.CHECKS_PASSED)
            s.move(E.REVIEW_PASSED)
            break
        if s.run.state is not RunState.REPAIR:
            return s.ended(checks=checks)
        repair = s.run.repair_context
        s.move(E.REPLAN)
    local = await _commit(checkout, s.task.quest.id)
    result = TaskResult.from_run(s.run, checks=tuple(checks), change=AppliedChange(
        base=checkout.local_commit, head=local, files=tuple(sorted(changes))))
    if not result.verified:  # the one gate: nothing unverified is pushed
        return s.ended(result=result, reason="; ".join(result.verification_gaps()))
    message = commit_message(reply.message or "Patch", f"questbot quest {s.quest.id}")
    head = await push_change(s.host, branch=branch, parent=checkout, changes=changes,
                             message=message,
                             effect_key=s.effect_key, notes=s.notes)
    return s.ended(result=result, head=head)


async def _checkout(s: StageRun, sha: str | None) -> Checkout:
    if sha is None:
        raise ValueError(f"quest {s.quest.id} has no base commit to check out")
    checkout = await materialise(s.host, sha, s.workdir / "checkout")
    s.move(E.DISCOVERED)
    return checkout


async def _commit(checkout: Checkout, quest_id: str) -> str:
    await git(checkout.path, "add", "-A")
    await git(checkout.path, "commit", "-q", "--no-verify", "-m", f"quest {quest_id}")
    return await git(checkout.path, "rev-parse", "HEAD")


STAGES = {Stage.RESEARCH: research, Stage.REPRODUCE: reproduce, Stage.PLAN: plan,
          Stage.PATCH: patch}


async def run_stage(s: StageRun) -> StageOutcome:
    return await STAGES[s.task.stage](s)
