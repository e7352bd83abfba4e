"""Effect adapters for agent work: ``start_agent``, ``stop_agent``, ``run_proof`` and
``start_respondent_run``.

``agent_adapters(ctx)`` is what the worker registers. ``start_agent`` runs one quest stage as
an agent run (``bot.agent.stages``) through the agent ``.github/questbot.yml`` selects
(``agent.kind``: ``model`` — the default, at the worker's endpoint — or ``command``) and
reports what came of it as quest events, with ids from ``outcome_id(effect, …)`` so a
redelivered effect reports the same events. The ``scripted`` agent is a test tool: where the
worker was given a script for a repository it answers there in the model's place.

How outcomes become quest events (the core accepts nothing else in those states):

============  ===============================  =============================================
stage         the run …                        quest events
============  ===============================  =============================================
research      validated its claims             ``hypothesis_written`` (summary, evidence digest)
research      validated nothing: failed, needs a  ``agent_halted`` with the run's outcome
              person, refused                  (``failed``, ``needs_human``, ``refused``) and
                                               reason: the quest parks where people see it
reproduce     failed on the base, pushed       ``reproduced`` (check, argv, commit) then
                                               ``plan_written`` (summary, risk)
reproduce     passed on the base, or failed    ``reproduction_failed`` (reason): the quest parks
                                               as ``cannot_reproduce`` and the inbox is told
reproduce     needs a person, or refused       ``agent_halted``
plan          wrote a plan (revise at B)       ``plan_written``
plan          anything else                    ``agent_halted``
patch         completed and verified, pushed   ``patch_pushed`` (head, pusher = the App's bot)
patch         anything else (a high-impact     ``agent_halted`` with the run's reason and
              change stops at needs a person)  verification gaps; nothing was pushed
any           had no agent to run: no model    ``agent_halted`` (``unconfigured``) saying what
              configured on the worker         to set and where
any           met a model endpoint that        ``agent_halted`` (``endpoint``) with the
              refused it, or stayed down       endpoint's words and the way out, and the
              through the retries              stage's usage: never retried by the runner
any           was stopped (``stop_agent`` or   no events: the quest moved on on purpose
              the quest left the stage)
any           reported usage                   ``usage_recorded`` as well (applied before a
                                               ``PermanentError`` is raised, so spend is kept)
============  ===============================  =============================================

Agent runs take minutes, so nothing here blocks the event loop: agents and checks run as
asyncio subprocesses or in threads, and the effect runner goes on delivering other quests'
effects meanwhile. The runner delivers one quest's effects in order, so a ``stop_agent`` for
the quest whose agent is running would wait behind it; each run therefore also watches the
quest's snapshot and stops itself when the quest leaves the stage (a pause, a kill, a new
revision). ``stop_agent`` kills whatever is registered, for runners that do deliver it.

Before research and reproduction the failing CI job's log is fetched for the task
(``bot.agent.ci_log``, through ``AdapterContext.logs``), trimmed to the failing step; the
``command`` agent may be a coding-agent CLI (``agent.preset``, ``bot.agent.presets``).

``start_respondent_run`` is the run a person's ``/approve spend`` paid for: the quest's budget
held a stage back (``bot.core.rules.budget``), and the effect carries that stage's
``start_agent`` payload, so it runs here exactly as ``start_agent`` would have — remembered
under its own key, reported with its own ids.

A finished run's events are remembered under the effect's key (``q:{<id>}:outcomes``, in
``bot.agent.outcome_store``) before
they are returned, and a redelivered ``start_agent`` returns the remembered events instead of
running the stage again — while the quest still waits in that stage at that revision, as a run
would check; once it has moved on, there is nothing to report. Redelivery happens when the
worker dies, or the journal cannot take the events, after the run: running again would push a
second commit for one effect — or, for a patch, find its own patch already on the branch and
fail with nothing to push — and spend the agent's tokens twice. A crash between the branch
update and that ``HSET`` runs the stage again, but does not push again: each push is noted
first (``PushNotes``, field ``<effect key>/push`` of the same hash), and the rerun finds the
commit the earlier run made — the branch's head, holding the noted files, with a
``Questbot-Effect`` trailer naming the effect — works on its parent, and reports it
(``bot.agent.workspace.push_change``).

What each finished stage run and each proof established (hypothesis and claim verdicts,
reproduction, plan, the ``TaskResult``, the proof's checks and digest) is kept in the
``EvidenceStore`` (``bot.agent.evidence_store``) under the effect's revision before its events
are returned — also when the run failed, so people see why — and the GitHub projection shows
it in the status comment and the check run. A stopped run records nothing. A ``model`` agent's
conversation is kept as the stage's transcript however it ended (``bot.agent.transcript``,
the endpoint's key redacted from it): ``python -m bot transcript`` reads it, and the status
comment shows what the model said last when the stage failed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from bot.adapters import AdapterContext, GitHostError, outcome_id
from bot.agent.ci_log import failing_log
from bot.agent.command import CommandAgent, RunningAgents, Stopped
from bot.agent.evidence_store import EvidenceStore, Piece, StageRecord
from bot.agent.machine import RunState
from bot.agent.model import ModelEndpoint, ModelRuns
from bot.agent.model.errors import EndpointFailed
from bot.agent.outcome import RunOutcome, outcome_of
from bot.agent.outcome_store import Outcomes, PushNotes
from bot.agent.presets import PRESETS
from bot.agent.proof_runner import CheckCommand
from bot.agent.proofs import check_commands, prove, reproduction_record
from bot.agent.result import RUN_ENDED
from bot.agent.scripted import ScriptedAgent, ScriptedSpec
from bot.agent.stages import StageOutcome, StageRun, run_stage
from bot.agent.task import MAX_REASON_CHARS, Agent, AgentTask, QuestBrief, Stage, Usage
from bot.agent.transcript import Recorder, TranscriptStore
from bot.agent.workspace import WorkspaceError
from bot.core import Effect, EffectType, Event, Quest, State
from bot.core.events.agent_work import (
    AgentHalted,
    HypothesisWritten,
    PatchPushed,
    PlanWritten,
    Reproduced,
    ReproductionFailed,
)
from bot.core.events.bookkeeping import UsageRecorded
from bot.core.gates import status_and_next
from bot.core.proof import Reproduction
from bot.errors import ConfigurationError
from bot.journal import PermanentError
from bot.journal.lessons import LessonStore, lesson_lines
from bot.runner import Adapter
from bot.settings.repository.schema import AgentKind, Settings

log = logging.getLogger(__name__)

STAGE_STATES: Mapping[Stage, State] = {
    Stage.RESEARCH: State.RESEARCHING, Stage.REPRODUCE: State.REPRODUCING,
    Stage.PLAN: State.REPRODUCING, Stage.PATCH: State.PATCHING,
}  # fmt: skip
"""Where the quest must stay while a stage's agent runs; leaving it stops the run."""


def stage_record(outcome: StageOutcome, revision: int) -> StageRecord | None:
    """What ``outcome`` established, for the evidence store (``None`` without a result).

    The reproduce stage runs the reproduction once, on the base with the reproduction's files
    laid over it: the very tree it then pushes as the quest branch's head. So until a proof
    runs it at a patched head, its exit code there is both the base and the head outcome, and
    the report says "not confirmed" — which is true until the patch exists."""
    if outcome.result is None:
        return None
    reproduction = None
    if outcome.reproduction is not None and outcome.reproduction_exit is not None:
        reproduction = Reproduction(name=outcome.reproduction,
                                    command=outcome.reproduction_command,
                                    base_exit_code=outcome.reproduction_exit,
                                    head_exit_code=outcome.reproduction_exit)
    return StageRecord(piece=Piece(outcome.stage.value), revision=revision,
                       result=outcome.result, hypothesis=outcome.hypothesis,
                       claims=outcome.claims, reproduction=reproduction, commit=outcome.commit,
                       plan=outcome.plan, risk=outcome.risk, head=outcome.head)


NO_MODEL = (
    "no model is configured on questbot's worker, so no agent can work on this quest. The "
    "operator sets QUESTBOT_MODEL (the model's name), QUESTBOT_MODEL_URL (the endpoint), "
    "QUESTBOT_MODEL_API_KEY and QUESTBOT_MODEL_PROTOCOL (openai or anthropic) in the "
    "worker's environment and restarts it; or the repository chooses its own agent with "
    "`agent: {kind: command, command: [...]}` in .github/questbot.yml. Then /resume")
NO_SCRIPT = (
    "`agent.kind: scripted` in .github/questbot.yml chooses the scripted agent, a test tool "
    "with no script for this repository. Set `agent: {kind: model}` (the model the worker is "
    "configured with) or `agent: {kind: command, command: [...]}`, then /resume")
HALTS: Mapping[RunOutcome, Literal["failed", "needs_human", "refused"]] = {
    RunOutcome.FAILURE: "failed", RunOutcome.UNVERIFIED: "failed",
    RunOutcome.ACTION_REQUIRED: "needs_human", RunOutcome.REFUSED: "refused",
}
"""A run's provider-neutral outcome as ``agent_halted``'s: what the check run will show."""


class NoAgent(ConfigurationError):
    """No agent can run for the quest; the message says what to set, and where."""


class AgentRuns:
    def __init__(self, ctx: AdapterContext, *,
                 scripted_specs: Mapping[str, ScriptedSpec] | None = None,
                 model: ModelEndpoint | None = None,
                 poll_seconds: float = 2.0, evidence: EvidenceStore | None = None) -> None:
        self.ctx = ctx
        self.evidence = evidence or EvidenceStore(ctx.journal.client)
        self.outcomes = Outcomes(ctx.journal.client)
        self.specs = {repo.lower(): spec for repo, spec in (scripted_specs or {}).items()}
        self.scripted: dict[str, ScriptedAgent] = {}
        self.model = model
        self.registry = RunningAgents()
        self.conversations = ModelRuns()
        self.poll_seconds = poll_seconds

    def agent(self, quest: Quest, settings: Settings) -> Agent:
        """The agent for ``quest``; ``NoAgent`` when the settings choose one that cannot run."""
        chosen = settings.agent
        if chosen.kind is AgentKind.COMMAND:  # a command, or a preset: the settings ensure it
            return CommandAgent(chosen.command or (), quest_id=quest.id,
                                timeout_seconds=chosen.timeout_seconds, registry=self.registry,
                                network=chosen.network, model=chosen.model,
                                preset=PRESETS[chosen.preset] if chosen.preset else None,
                                key_env=chosen.api_key_env)
        spec = self.specs.get(quest.repo.lower())
        if spec is not None:  # the test tool, standing in for the model
            return self.scripted.setdefault(quest.repo.lower(), ScriptedAgent(spec))
        if chosen.kind is AgentKind.SCRIPTED:
            raise NoAgent(NO_SCRIPT)
        if self.model is None:
            raise NoAgent(NO_MODEL)
        from bot.agent.model.conversation import ModelAgent  # pydantic-ai: only when used

        key = self.model.api_key.get_secret_value() if self.model.api_key else ""
        recorder = Recorder(TranscriptStore(self.ctx.journal.client), quest.id, quest.revision,
                            secrets=(key,) if key else (), clock=self.ctx.clock)
        return ModelAgent(self.model, quest_id=quest.id, runs=self.conversations,
                          model=chosen.model, max_attempts=chosen.max_attempts,
                          timeout_seconds=chosen.timeout_seconds, recorder=recorder)

    async def start_agent(self, effect: Effect) -> Sequence[Event] | None:
        remembered = await self.outcomes.recall(effect)
        if remembered is not None:
            # as a run would: report only while the quest still waits for this stage
            quest = await self.ctx.quest(effect.quest_id)
            waits_in = STAGE_STATES[Stage(effect.payload["stage"])]  # it ran: the stage is valid
            if quest.revision != effect.revision or quest.state is not waits_in:
                log.info("start_agent %s ran before and its quest has moved on; nothing to "
                         "report", effect.key)
                return None
            log.info("start_agent %s ran before; reporting its events again", effect.key)
            return remembered
        events = await self._start_agent(effect)
        if events is not None:
            await self.outcomes.remember(effect, events)
        return events

    async def _start_agent(self, effect: Effect) -> Sequence[Event] | None:
        payload = effect.payload
        try:
            stage = Stage(payload["stage"])
        except (KeyError, ValueError) as exc:
            raise PermanentError(f"start_agent names no known stage: {payload!r}") from exc
        quest = await self.ctx.quest(effect.quest_id)
        settings = await self.ctx.settings.settings(quest.repo)
        try:
            agent = self.agent(quest, settings)
        except NoAgent as exc:
            return [AgentHalted(id=outcome_id(effect, "halted"), quest_id=quest.id,
                                at=self.ctx.clock(), stage=stage.value, outcome="unconfigured",
                                reason=str(exc))]
        host = await self.ctx.hosts(quest.repo)
        task = AgentTask(stage=stage, quest=QuestBrief.of(quest), signal=quest.last_signal,
                         repair=payload.get("repair"), revise=payload.get("revise"),
                         resumed=bool(payload.get("resumed")),
                         attempt=int(payload.get("attempt") or 1),
                         log=await failing_log(self.ctx, quest, stage),
                         status=status_and_next(quest, settings.to_policy()).text(),
                         lessons=lesson_lines(await LessonStore(self.ctx.journal.client)
                                              .lessons(quest.repo)))
        checks: list[CheckCommand] = []
        protected: frozenset[str] = frozenset()
        if stage is Stage.PATCH:
            checks = check_commands(settings)
            if quest.reproduction_command:
                checks.append(CheckCommand(name=quest.reproduction or "reproduction",
                                           argv=quest.reproduction_command))
        done = asyncio.Event()
        watch = asyncio.create_task(self._watch(quest, stage, done))
        try:
            with tempfile.TemporaryDirectory(prefix="questbot-agent-") as tmp:
                if stage is Stage.PATCH:  # in the run's own repository: its checkout reuses it
                    record = await reproduction_record(self.ctx, host, quest,
                                                       Path(tmp) / "checkout")
                    protected = frozenset(record.files) if record else frozenset()
                outcome = await run_stage(StageRun(
                    quest=quest, task=task, agent=agent, host=host, workdir=Path(tmp),
                    checks=checks, protected=protected, effect_key=effect.key,
                    notes=PushNotes(self.ctx.journal.client, effect),
                    max_attempts=settings.agent.max_attempts))
        except Stopped as exc:
            log.info("%s; its outcome is dropped", exc)
            return None
        except EndpointFailed as exc:
            log.warning("%s for quest %s stopped: %s", stage.value, quest.id, exc.reason)
            return self._endpoint_failed(effect, quest, stage, exc)
        except (WorkspaceError, GitHostError, ValueError) as exc:
            raise PermanentError(f"{stage.value} for quest {quest.id} could not run: "
                                 f"{exc}") from exc
        finally:
            done.set()  # not cancel(): on Python 3.11 a cancel can be lost (see _watch)
            await watch
        established = stage_record(outcome, effect.revision)
        if established is not None:
            await self.evidence.record(quest.id, established)
        return await self._events(effect, quest, settings, outcome)

    async def _watch(self, quest: Quest, stage: Stage, done: asyncio.Event) -> None:
        """Stop the quest's runs once it leaves ``stage``'s state or its revision changes;
        end when ``done`` is set.

        Ended by an event, never by ``Task.cancel()``: on Python 3.11 ``asyncio.wait_for``
        (which redis-py wraps every command in when the client has a socket timeout) swallows a
        cancellation that lands as the command finishes (CPython gh-86296), so a cancelled
        watcher could sleep on forever and hold the agent's effect — and its quest — open
        (seen in ``scripts/chaos.py`` runs; docs/reliability.md)."""
        while not done.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(done.wait(), self.poll_seconds)
            if done.is_set():
                return
            _, now = await self.ctx.journal.snapshot(quest.id)
            if now is None or now.state is not STAGE_STATES[stage] or (
                    now.revision != quest.revision):
                self.registry.stop(quest.id)
                self.conversations.stop(quest.id)
                return

    async def start_respondent_run(self, effect: Effect) -> Sequence[Event] | None:
        """The stage a spent budget held back, paid for by a person (the module docstring)."""
        if "stage" not in effect.payload:
            raise PermanentError("the approved spend named no stage to run: questbot pays only "
                                 "for the stage a spent budget held back, so nothing ran")
        return await self.start_agent(effect)

    async def stop_agent(self, effect: Effect) -> Sequence[Event] | None:
        stopped = (self.registry.stop(effect.quest_id)
                   + self.conversations.stop(effect.quest_id))
        log.info("stop_agent for quest %s: %d run(s) killed", effect.quest_id, stopped)
        return None

    async def run_proof(self, effect: Effect) -> Sequence[Event] | None:
        try:
            return await prove(self.ctx, effect, evidence=self.evidence)
        except (WorkspaceError, GitHostError, ValueError) as exc:
            raise PermanentError(f"the proof for quest {effect.quest_id} could not run: "
                                 f"{exc}") from exc

    def _endpoint_failed(self, effect: Effect, quest: Quest, stage: Stage,
                         exc: EndpointFailed) -> list[Event]:
        """The stage ended by its model endpoint: the quest parks with the endpoint's words,
        and what the stage spent until then is a receipt like any other."""
        return [AgentHalted(id=outcome_id(effect, "halted"), quest_id=quest.id,
                            at=self.ctx.clock(), stage=stage.value, outcome="endpoint",
                            reason=exc.reason[:MAX_REASON_CHARS]),
                *self._receipt(effect, quest.id, exc.usage, stage)]

    def _receipt(self, effect: Effect, quest_id: str, usage: Usage,
                 stage: Stage) -> list[Event]:
        """What a run spent, as the quest's receipt (none when it spent nothing)."""
        if not (usage.tokens or usage.cost_cents):
            return []
        return [UsageRecorded(id=outcome_id(effect, "usage"), quest_id=quest_id,
                              at=self.ctx.clock(), tokens=usage.tokens,
                              cost_cents=usage.cost_cents, stage=stage.value, free=usage.free)]

    async def _events(self, effect: Effect, quest: Quest, settings: Settings,
                      outcome: StageOutcome) -> list[Event]:
        at, qid = self.ctx.clock(), quest.id
        usage = self._receipt(effect, qid, outcome.usage, outcome.stage)
        events: list[Event] = []
        reason = outcome.reason or (f"the run {RUN_ENDED[outcome.state]}"
                                    if outcome.state in RUN_ENDED
                                    else f"the run stopped at its {outcome.state.value} step")
        stopped_at_plan = outcome.state is RunState.PLAN
        if outcome.stage is Stage.RESEARCH and stopped_at_plan and outcome.hypothesis:
            events.append(HypothesisWritten(id=outcome_id(effect, "hypothesis"), quest_id=qid,
                                            at=at, summary=outcome.hypothesis,
                                            evidence_digest=outcome.evidence_digest))
        elif outcome.stage is Stage.REPRODUCE and outcome.reproduced:
            assert outcome.reproduction is not None and outcome.plan is not None
            events.append(Reproduced(id=outcome_id(effect, "reproduced"), quest_id=qid, at=at,
                                     check=outcome.reproduction, commit=outcome.commit,
                                     command=outcome.reproduction_command))
            events.append(PlanWritten(id=outcome_id(effect, "plan"), quest_id=qid, at=at,
                                      summary=outcome.plan, risk=outcome.risk))
        elif outcome.stage is Stage.REPRODUCE and outcome.state in (RunState.FAILED,
                                                                    RunState.PLAN):
            events.append(ReproductionFailed(id=outcome_id(effect, "reproduction_failed"),
                                             quest_id=qid, at=at, reason=reason))
        elif outcome.stage is Stage.PLAN and stopped_at_plan and outcome.plan:
            events.append(PlanWritten(id=outcome_id(effect, "plan"), quest_id=qid, at=at,
                                      summary=outcome.plan, risk=outcome.risk))
        elif outcome.stage is Stage.PATCH and outcome.head is not None:
            events.append(PatchPushed(id=outcome_id(effect, "patch"), quest_id=qid, at=at,
                                      head=outcome.head, pusher=self.ctx.bot_login))
        elif outcome.result is not None:
            halted = HALTS[outcome_of(outcome.result)]
            events.append(AgentHalted(id=outcome_id(effect, "halted"), quest_id=qid, at=at,
                                      stage=outcome.stage.value, outcome=halted,
                                      reason=reason))
        else:
            if usage:
                await self.ctx.journal.apply_many(usage, settings.to_policy())
            raise PermanentError(f"{outcome.stage.value} for quest {qid} ended "
                                 f"{outcome.state.value}: {reason}")
        return events + usage  # in the same write: the next stage's start weighs the spend


def agent_adapters(ctx: AdapterContext, *,
                   scripted_specs: Mapping[str, ScriptedSpec] | None = None,
                   model: ModelEndpoint | None = None,
                   poll_seconds: float = 2.0,
                   evidence: EvidenceStore | None = None) -> dict[EffectType, Adapter]:
    """The adapters for ``start_agent``, ``stop_agent`` and ``run_proof``.

    ``model`` is the worker's model endpoint (``None``: no model configured, and quests that
    would use it park saying what to set). ``scripted_specs`` (a test tool) maps a
    repository's full name to the script the ``scripted`` agent follows there in the model's
    place.
    ``evidence`` is where runs and proofs record what they established (by default an
    ``EvidenceStore`` on the journal's Redis).
    """
    runs = AgentRuns(ctx, scripted_specs=scripted_specs, model=model,
                     poll_seconds=poll_seconds, evidence=evidence)
    return {EffectType.START_AGENT: runs.start_agent, EffectType.STOP_AGENT: runs.stop_agent,
            EffectType.RUN_PROOF: runs.run_proof,
            EffectType.START_RESPONDENT_RUN: runs.start_respondent_run}
