"""One failure, one quest: every report of one red CI run goes to one quest, and a watched
quest hears about failures and green results on the commits that bear on its merge.

Which quest a failure is: ``bot.quests.quest_of`` decides, as it does for every event. GitHub
tells one red run on one commit many times — a ``check_run`` per failing job, the
``check_suite``, the ``workflow_run`` — in any order, possibly to two workers at once; they
share the repository, the head commit and the check suite (the ``group`` of
``bot.intake.routes``), and the first report to arrive chooses the quest, which every later
report of the same failure follows, whatever its fingerprint: matrix jobs, suite and workflow
run are one quest with several ``signal_attached``. A quest that does not exist yet is named by
the key (``quest_of.failure_quest_id``), so two workers creating it name the same quest and the
journal takes one ``signal_sensed`` and refuses the other, which is then attached. A quest
triage merged into another (a duplicate) passes the reports on to that one.

What a watched quest makes of a failure. Only the merge commit and later commits of the default
branch count (``bot.github.forge.watch.at_or_after``, the compare API): the failure of an older
commit is attached as evidence and reverts nothing. A failure that counts is a *suspect*: the
core keeps it and asks for a re-run (``run_probes``); when another run of the same check on the
same commit fails too, intake reports the confirmed ``regression_detected`` and the core rolls
back. A closed quest is reopened by a failure that counts, from the default branch's head.

A quest still ``sensed`` whose failure triage re-ran (``rules.flaky``) hears the re-run's result:
a failure or a pass of the same check on the same commit from another run is ``rerun_reported``
— failed again, or passed (flaky) — whether GitHub put the re-run in the failed run's check
suite or in a new one (``quest_of`` chooses the waiting quest for a new suite's key).

Green results (``Passed``) of a check are attached, as evidence, to the live quests that hold
its fingerprint: a re-run that passes clears its suspect (flaky), a pass on the commit a quest
started from says the failure was flaky there, one on a later commit that it may be fixed.
"""

from __future__ import annotations

import logging

from bot.adapters import AdapterContext
from bot.core import Event, InvalidTransition, Quest, Severity, SignalKind, State
from bot.core.events import (
    RegressionDetected,
    Reopened,
    RerunReported,
    RerunResult,
    SignalAttached,
    SignalSensed,
)
from bot.core.states import LIVE
from bot.failures.signals import Failure, IssueSignal, Passed
from bot.github.forge import Forges
from bot.github.forge.watch import at_or_after
from bot.journal import Indexes
from bot.journal.memory import ForgeMemory
from bot.quests.desk import Desk, default_head, new_quest_id
from bot.quests.quest_of import QuestOf

log = logging.getLogger(__name__)



class FailureIntake:
    def __init__(self, ctx: AdapterContext, forges: Forges, quest_of: QuestOf,
                 memory: ForgeMemory, indexes: Indexes) -> None:
        self.ctx = ctx
        self.forges = forges
        self.quest_of = quest_of
        self.memory = memory
        self.indexes = indexes

    async def default_head(self, repo: str) -> str:
        return await default_head(self.forges, self.memory, repo)

    async def muted(self, repo: str, fingerprint: str) -> bool:
        if await self.indexes.is_muted(repo, fingerprint):
            log.info("%s %s is muted; ignoring it", repo, fingerprint)
            return True
        return False

    # -- issues --------------------------------------------------------------------------------

    async def issue(self, i: IssueSignal, desk: Desk) -> None:
        """An issue opened with the label, or labelled: a quest, unless one is live for it."""
        settings = await self.ctx.settings.settings(i.repo)
        if settings.label not in i.labels:
            return
        fingerprint = f"issue:{i.number}"
        quest = await self.quest_of.issue(i.repo, i.number)
        if quest is not None and quest.state in LIVE:
            return  # labelled again, or opened with the label and then labelled
        qid = new_quest_id(desk.delivery_id, fingerprint)
        await self.memory.remember_source_issue(qid, i.number)
        await desk.apply(SignalSensed(
            id=f"{desk.delivery_id}:sensed", quest_id=qid, at=self.ctx.clock(), repo=i.repo,
            fingerprint=fingerprint, kind=SignalKind.ISSUE, severity=Severity.MEDIUM,
            title=i.title, source=i.source, base=await self.default_head(i.repo)), i.repo)

    # -- failures ---------------------------------------------------------------------------

    async def failure(self, f: Failure, desk: Desk) -> None:
        delivery_id, apply = desk.delivery_id, desk.racing
        if await self.muted(f.repo, f.fingerprint):
            return
        if not f.sha:
            return  # no commit: nothing to hold it against
        owner = await self.quest_of.failure(f)
        for _ in range(3):  # a refusal here is a race lost to another report: look again
            qid, quest = await self.quest_of.followed(f.repo, owner)
            event = await self._failure_event(qid, quest, f, delivery_id)
            if event is None:
                return
            if f.app and f.run.startswith("check_run:"):
                await self.memory.remember_run_app(qid, f.run, f.app)
            result = await apply(event, f.repo)
            if not isinstance(result, InvalidTransition):
                return
        log.info("gave up attaching %s %s to quest %s: it kept moving", f.repo,
                 f.fingerprint, owner)
    async def _failure_event(self, qid: str, quest: Quest | None, f: Failure,
                             delivery_id: str) -> Event | None:
        """What ``f`` is to the quest as it stands. Whatever it turns out to be, its id is
        the delivery's, so the same delivery handled again is a duplicate in the journal."""
        at, ident = self.ctx.clock(), f"{delivery_id}:failure"
        if quest is None:
            return SignalSensed(id=ident, quest_id=qid, at=at, repo=f.repo,
                                fingerprint=f.fingerprint, kind=SignalKind.CHECK_FAILURE,
                                severity=Severity.HIGH, title=f.title, source=f.source,
                                base=f.sha, run=f.run or None,
                                details_url=f.details_url or None)
        attached = SignalAttached(id=ident, quest_id=qid, at=at,
                                  fingerprint=f.fingerprint, source=f.source,
                                  severity=Severity.HIGH, sha=f.sha, run=f.run or None)
        if quest.state is State.WATCHING:
            if not await self._counts(quest, f.sha):
                log.info("%s failed on %s, older than quest %s's merge: evidence, not a "
                         "regression", f.fingerprint, f.sha[:12], qid)
                return attached
            if f.run and quest.confirms(f.sha, f.fingerprint, f.run):
                return RegressionDetected(id=ident, quest_id=qid, at=at,
                                          source=f.source, sha=f.sha,
                                          fingerprint=f.fingerprint, run=f.run)
            return attached.model_copy(update={"suspect": True})
        if quest.state is State.CLOSED:
            if not quest.holds(f.fingerprint) or not await self._counts(quest, f.sha):
                log.info("%s failed on %s; closed quest %s landed after it: nothing to reopen",
                         f.fingerprint, f.sha[:12], qid)
                return None
            return Reopened(id=ident, quest_id=qid, at=at,
                            fingerprint=f.fingerprint, source=f.source,
                            severity=Severity.HIGH, base=await self.default_head(f.repo),
                            details_url=f.details_url or None)
        if quest.state is State.SENSED and f.run and quest.reruns(f.sha, f.fingerprint, f.run):
            return RerunReported(id=ident, quest_id=qid, at=at, result=RerunResult.FAILED,
                                 run=f.run, source=f.source)
        if quest.state in LIVE:
            return attached
        return None  # abandoned: it absorbs the report

    async def _counts(self, quest: Quest, sha: str) -> bool:
        """``sha`` is the quest's merge commit or a later one of the default branch."""
        if quest.merge_sha is None:
            return True  # landed before merges were recorded: as before, it counts
        forge = await self.forges.for_repo(quest.repo)
        return await at_or_after(forge, quest.merge_sha, sha)

    # -- green results ----------------------------------------------------------------------

    async def passed(self, p: Passed, desk: Desk) -> None:
        """Attach a green result to each live quest that holds its check."""
        delivery_id, apply = desk.delivery_id, desk.racing
        ident = f"passed:{p.run}" if p.run else f"{delivery_id}:passed"
        for quest in await self.quest_of.holding(p.repo, p.fingerprint):
            if quest.state not in LIVE:
                continue
            if quest.state is State.SENSED and p.run and quest.reruns(p.sha, p.fingerprint,
                                                                       p.run):
                await apply(RerunReported(id=ident, quest_id=quest.id, at=self.ctx.clock(),
                                          result=RerunResult.PASSED, run=p.run,
                                          source=p.source), p.repo)
                continue
            await apply(SignalAttached(
                id=ident, quest_id=quest.id, at=self.ctx.clock(), fingerprint=p.fingerprint,
                source=p.source, severity=Severity.LOW, sha=p.sha, run=p.run or None,
                passed=True), p.repo)
