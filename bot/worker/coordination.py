"""Adapters for the effects that stay inside questbot: triage, related quests, timers, probes.

Each adapter reads what it needs, decides nothing the core should decide, and reports its
outcome as events (ids from the effect key, so a redelivered effect reports the same event and
the journal absorbs it). Effects that only bookkeep — a mute, a registered probe — are already
recorded by the journal's indexes when the transition is applied; their adapters acknowledge.

Triage routes a sensed quest, in this order: a muted fingerprint is ignored; the same
fingerprint on a quest that is landing makes a *conflict* (wait for that fix to land, then look
again); on any other live quest a *duplicate*; otherwise the repository's route for that kind of
signal. A quest that route would start is *held* instead (``Held``; ``bot.core.limits``) while
the repository works on ``max_live_quests`` quests or a reflection wave is due: it stays
``sensed``, listed in the inbox, and ``release`` triages it again — oldest first, the same
checks — when a quest of the repository ends or a reflection passes. A failing check
routed to the agent is re-run on its commit first (``triage.rerun_failed``, on by default):
triage reports ``rerun_requested`` instead, and ``rerun_check`` asks GitHub for the re-run
(``bot.github.forge.watch.Rerun``: an Actions workflow run's failed jobs). Its result comes
back as a webhook (``bot.failures.intake``); a re-run GitHub will not do for questbot — another
App's check, a run too old — is reported at once as ``unavailable``, with the reason, and the
quest is researched. A re-run with no result for ``RERUN_WAIT`` counts as unavailable too, so
no quest waits in ``sensed`` for ever.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime, timedelta

from bot.adapters import AdapterContext, outcome_id
from bot.core import Effect, EffectType, Event, Quest, Route, Severity, SignalKind, State
from bot.core.events import (
    ChildEvidence,
    Held,
    Hold,
    ParentLanded,
    RerunReported,
    RerunRequested,
    RerunResult,
    SignalAttached,
    Triaged,
    WatchClean,
)
from bot.core.limits import admission
from bot.core.states import LIVE, TERMINAL
from bot.github.forge import Forge, Forges
from bot.github.forge.watch import Rerun
from bot.journal import Indexes, PermanentError
from bot.journal.limits import RepoLimits
from bot.journal.memory import ForgeMemory
from bot.runner import Timers
from bot.runner.outbox import Adapter

log = logging.getLogger(__name__)

RERUN_WAIT = timedelta(hours=6)
"""How long triage waits for a re-run's result before it researches the failure anyway."""
_PAID = frozenset({Route.AUTO_FIX, Route.RESEARCH_ONLY})
"""Routes that start an agent: the ones a flaky failure would waste."""
_CHECKS = frozenset({SignalKind.CHECK_FAILURE, SignalKind.REGRESSION})

WAITING = frozenset({State.SENSED, State.TRIAGED})
"""Live quests that do no work yet: they do not count against the cap."""


class Coordination:
    def __init__(self, ctx: AdapterContext, forges: Forges, indexes: Indexes,
                 timers: Timers) -> None:
        self.ctx = ctx
        self.forges = forges
        self.indexes = indexes
        self.timers = timers
        self.memory = ForgeMemory(ctx.journal.client)
        self.limits = RepoLimits(ctx.journal.client)

    def adapters(self) -> dict[EffectType, Adapter]:
        return {
            EffectType.RUN_TRIAGE: self.run_triage,
            EffectType.RERUN_CHECK: self.rerun_check,
            EffectType.MERGE_SIGNAL: self.merge_signal,
            EffectType.RESUME_DEPENDENTS: self.resume_dependents,
            EffectType.DELIVER_CHILD_EVIDENCE: self.deliver_child_evidence,
            EffectType.MUTE_FINGERPRINT: self.acknowledge,
            EffectType.REGISTER_REGRESSION_PROBE: self.acknowledge,
            EffectType.START_WATCH: self.start_watch,
            EffectType.RUN_PROBES: self.run_probes,
        }

    async def _others(self, quest: Quest) -> list[Quest]:
        found = []
        for qid in sorted(await self.indexes.quests_with_fingerprint(quest.repo,
                                                                    quest.fingerprint)):
            if qid == quest.id:
                continue
            _v, other = await self.ctx.journal.snapshot(qid)
            if other is not None and other.state in LIVE:
                found.append(other)
        return found

    async def _working(self, repo: str, but: str) -> int:
        count = 0
        for qid in await self.indexes.live_quests(repo):
            _v, other = await self.ctx.journal.snapshot(qid)
            if qid != but and other is not None and other.state not in WAITING:
                count += 1
        return count

    async def hold(self, repo: str, but: str, admitted: int = 0) -> Hold | None:
        """Why a quest of ``repo`` (``but``) that triage would start must wait, if it must:
        a reflection wave due, or the repository full (``admitted``: quests released in this
        round, not yet applied)."""
        settings = await self.ctx.settings.settings(repo)
        wave = settings.reflection
        due = await self.limits.wave_due(repo, wave.after_bad_endings, wave.window_hours)
        working = await self._working(repo, but) + admitted
        return admission(working, settings.max_live_quests, due)

    async def run_triage(self, effect: Effect) -> Sequence[Event] | None:
        return await self.triage(effect.quest_id, effect.key)

    async def triage(self, quest_id: str, base: str, *,
                     admitted: int = 0) -> Sequence[Event] | None:
        """Triage a sensed quest; the events' ids are ``base`` and a name (``base`` is the
        ``run_triage`` effect's key, or a release's own), so asking again reports the same."""
        quest = await self.ctx.quest(quest_id)
        if quest.state is not State.SENSED:
            return None  # a person already routed it (/quest fix on an issue)
        settings = await self.ctx.settings.settings(quest.repo)
        at = self.ctx.clock()
        parent = duplicate_of = None
        if await self.indexes.is_muted(quest.repo, quest.fingerprint):
            route = Route.IGNORE
        elif landing := [o for o in await self._others(quest) if o.state is State.LANDING]:
            route, parent = Route.CONFLICT, landing[0].id
        elif others := await self._others(quest):
            route, duplicate_of = Route.DUPLICATE, others[0].id
        else:
            kind = "check_failure" if quest.kind == "regression" else quest.kind.value
            route = Route(getattr(settings.routes, kind).value)
        if route in _PAID and (hold := await self.hold(quest.repo, quest.id, admitted)):
            return [Held(id=f"{base}/held-{hold.value}", quest_id=quest_id, at=at, reason=hold)]
        if (route in _PAID and settings.triage.rerun_failed and quest.kind in _CHECKS
                and quest.source_run and quest.base and quest.rerun is None):
            return [RerunRequested(id=f"{base}/rerun", quest_id=quest_id, at=at, route=route,
                                   sha=quest.base, run=quest.source_run)]
        return [Triaged(id=f"{base}/triaged", quest_id=quest_id, at=at, route=route,
                        parent=parent, duplicate_of=duplicate_of)]

    async def release(self, repo: str) -> int:
        """Triage the held quests of ``repo`` again, oldest first, while they may start; their
        events are applied as timers due now (idempotent: the ids are the hold's own).
        Returns how many were released."""
        admitted = 0
        for quest_id, since in await self.limits.held(repo):
            _v, quest = await self.ctx.journal.snapshot(quest_id)
            if quest is None or quest.state is not State.SENSED or quest.held is None:
                await self.limits.unhold(repo, quest_id)  # started or ended meanwhile
                continue
            events = await self.triage(quest_id, f"{quest_id}:held:{since:.0f}",
                                       admitted=admitted)
            first = events[0] if events else None
            if first is None or isinstance(first, Held):
                if first is not None and first.reason is not quest.held:  # another reason now
                    await self.timers.schedule(first, self.ctx.clock())
                break  # still full, or a reflection is due: the rest wait in order
            for event in events or ():
                await self.timers.schedule(event, self.ctx.clock())
            admitted += 1
        return admitted

    async def after_change(self, quest: Quest) -> None:
        """A quest that ended frees a slot: release what its repository holds."""
        if quest.state in TERMINAL and await self.limits.held(quest.repo):
            await self.release(quest.repo)

    async def rerun_check(self, effect: Effect) -> Sequence[Event] | None:
        """Ask GitHub to re-run the failed check of a sensed quest, once per workflow attempt;
        its result arrives as a webhook. What GitHub will not re-run is reported now."""
        quest = await self.ctx.quest(effect.quest_id)
        run = str(effect.payload.get("run") or "")

        def unavailable(reason: str) -> list[Event]:
            log.info("quest %s: %s not re-run: %s", quest.id, run, reason)
            return [RerunReported(id=outcome_id(effect, "unavailable"), quest_id=quest.id,
                                  at=self.ctx.clock(), result=RerunResult.UNAVAILABLE,
                                  reason=reason)]

        forge = await self.forges.for_repo(quest.repo)
        rerun = Rerun(forge)
        try:
            attempt = await rerun.attempt_of(run, app=await self.memory.run_app(quest.id, run))
            if isinstance(attempt, str):
                return unavailable(attempt)
            done = f"rerun:{attempt.run_id}:{attempt.attempt}"
            async with self.memory.repo_creating(quest.repo, done):
                if await self.memory.repo(quest.repo, done) is None:
                    await self.memory.set_repo(quest.repo, done, await rerun.failed_jobs(attempt))
        except PermanentError as exc:
            return unavailable(str(exc))
        await self.timers.schedule(
            RerunReported(id=outcome_id(effect, "no-result"), quest_id=quest.id,
                          at=self.ctx.clock(), result=RerunResult.UNAVAILABLE,
                          reason=f"the re-run of {run} sent no result within "
                                 f"{RERUN_WAIT.total_seconds() / 3600:g} hours"),
            self.ctx.clock() + RERUN_WAIT)
        return None

    async def merge_signal(self, effect: Effect) -> Sequence[Event] | None:
        p = effect.payload
        return [SignalAttached(id=outcome_id(effect, "attached"), quest_id=p["into"],
                               at=self.ctx.clock(), fingerprint=p["fingerprint"],
                               source=p.get("source") or "",
                               severity=Severity(p.get("severity") or "medium"))]

    async def resume_dependents(self, effect: Effect) -> Sequence[Event] | None:
        p = effect.payload
        return [ParentLanded(id=outcome_id(effect, "parent-landed"), quest_id=p["child"],
                             at=self.ctx.clock(), parent=p["parent"])]

    async def deliver_child_evidence(self, effect: Effect) -> Sequence[Event] | None:
        p = effect.payload
        return [ChildEvidence(id=outcome_id(effect, "child"), quest_id=p["parent"],
                              at=self.ctx.clock(), child=p["child"])]

    async def acknowledge(self, effect: Effect) -> Sequence[Event] | None:
        return None

    async def start_watch(self, effect: Effect) -> Sequence[Event] | None:
        p = effect.payload
        until = p.get("until")
        due = (datetime.fromisoformat(until) if isinstance(until, str)
               else self.ctx.clock() + timedelta(minutes=int(p.get("window_minutes") or 60)))
        await self.timers.schedule(WatchClean(id=outcome_id(effect, "watch-clean"),
                                              quest_id=effect.quest_id, at=self.ctx.clock()),
                                   due)
        return None

    async def run_probes(self, effect: Effect) -> Sequence[Event] | None:
        """Probe a watched quest. With ``rerun``: re-run the failed check the core suspects
        (``bot.github.forge.watch`` says how, and when questbot cannot), once per workflow
        attempt however many of its jobs are suspects; the re-run's result comes back as a
        webhook. Without: look at the checks GitHub already has for the landed commit, and
        report each failure of the quest's checks as a suspect."""
        quest = await self.ctx.quest(effect.quest_id)
        forge = await self.forges.for_repo(quest.repo)
        rerun = effect.payload.get("rerun")
        if rerun:
            await self._rerun(quest, forge, effect, str(rerun))
            return None
        sha = effect.payload.get("merge_sha")
        if not sha:
            return None
        found: list[Event] = []
        for run in await forge.check_runs(str(sha)):
            fingerprint = f"check:{run.name}"
            if quest.holds(fingerprint) and run.conclusion in ("failure", "timed_out"):
                found.append(SignalAttached(
                    id=outcome_id(effect, f"suspect-{run.id}"), quest_id=effect.quest_id,
                    at=self.ctx.clock(), fingerprint=fingerprint, source=run.html_url,
                    severity=Severity.HIGH, sha=str(sha), run=f"check_run:{run.id}",
                    suspect=True))
        return found

    async def _rerun(self, quest: Quest, forge: Forge, effect: Effect, run: str) -> None:
        rerun = Rerun(forge)
        attempt = await rerun.attempt_of(run)
        if isinstance(attempt, str):
            await self.memory.set_quest_field(quest.id, f"note:{effect.key}", attempt)
            log.info("quest %s: no re-run asked: %s", quest.id, attempt)
            return
        done = f"rerun:{attempt.run_id}:{attempt.attempt}"
        if await self.memory.repo(quest.repo, done) is not None:
            return  # asked for already, for another job of the same attempt
        async with self.memory.repo_creating(quest.repo, done):
            if await self.memory.repo(quest.repo, done) is None:
                await self.memory.set_repo(quest.repo, done, await rerun.failed_jobs(attempt))
