"""One failure, one quest: every report of one red CI run goes to one quest, and a watched
quest hears about failures and green results on the commits that bear on its merge.

Which quest a failure is. GitHub tells one red run on one commit many times — a ``check_run``
per failing job, the ``check_suite``, the ``workflow_run`` — in any order, possibly to two
workers at once. They share the repository, the head commit and the check suite (the
``group`` of ``bot.github.signals``), and that is the failure's identity, its *key*. The first
report to arrive chooses the quest: a watched quest that holds its fingerprint (the fix may
have regressed), else a closed one (a regression reopens it), else a new quest whose id is
derived from the key (``failure_quest_id``), so two workers creating it name the same quest and
the journal takes one ``signal_sensed`` and refuses the other, which is then attached. The
choice is kept under the key (``SET NX``, so the first chooser wins a race) and every later
report of the same failure follows it, whatever its fingerprint: matrix jobs, suite and
workflow run are one quest with several ``signal_attached``. A quest triage merged into another
(a duplicate) passes the reports on to that one.

What a watched quest makes of a failure. Only the merge commit and later commits of the default
branch count (``bot.github.forge.watch.at_or_after``, the compare API): the failure of an older
commit is attached as evidence and reverts nothing. A failure that counts is a *suspect*: the
core keeps it and asks for a re-run (``run_probes``); when another run of the same check on the
same commit fails too, intake reports the confirmed ``regression_detected`` and the core rolls
back. A closed quest is reopened by a failure that counts, from the default branch's head.

A quest still ``sensed`` whose failure triage re-ran (``rules.flaky``) hears the re-run's result:
a failure or a pass of the same check on the same commit from another run is ``rerun_reported``
— failed again, or passed (flaky).

Green results (``Passed``) of a check are attached, as evidence, to the live quests that hold
its fingerprint: a re-run that passes clears its suspect (flaky), a pass on the commit a quest
started from says the failure was flaky there, one on a later commit that it may be fixed.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Awaitable, Callable

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
from bot.github.forge import Forges
from bot.github.forge.watch import at_or_after
from bot.github.signals import Failure, Passed
from bot.journal import Applied, Indexes
from bot.journal.keys import hash_tag
from bot.journal.wire import RedisClient

log = logging.getLogger(__name__)

KEPT_S = 30 * 24 * 3600
"""How long a failure's choice of quest is kept: GitHub re-runs a workflow up to 30 days after
its first run, and a re-run reports the same failure again."""

Apply = Callable[[Event, str], Awaitable[Applied | InvalidTransition]]
"""Intake's apply: the event, its repository; a refusal is returned, not raised."""


def failure_key(repo: str, sha: str, group: str) -> str:
    """Where the quest a failure went to is kept: the repository's hash tag, then the commit
    and the suite (or, when a payload names no suite, the fingerprint)."""
    return f"repo:{hash_tag(repo.lower())}:failure:{sha}:{group}"


def failure_quest_id(repo: str, sha: str, group: str) -> str:
    """The id of a failure's own quest: derived from what every report of it shares, so two
    workers handling two of them at once name the same quest; branch-safe."""
    digest = hashlib.sha256(f"{repo.lower()}:{sha}:{group}".encode()).hexdigest()
    return "q" + digest[:10]


def _group(f: Failure | Passed) -> str:
    return f.group or f.fingerprint


class FailureIntake:
    def __init__(self, ctx: AdapterContext, forges: Forges, indexes: Indexes,
                 default_head: Callable[[str], Awaitable[str]]) -> None:
        """``default_head(repo)`` reads the default branch's head, where a reopened quest
        starts again."""
        self.ctx = ctx
        self.forges = forges
        self.indexes = indexes
        self.default_head = default_head

    @property
    def client(self) -> RedisClient:
        return self.ctx.journal.client

    async def _quest(self, quest_id: str) -> Quest | None:
        return (await self.ctx.journal.snapshot(quest_id))[1]

    async def _holding(self, repo: str, fingerprint: str) -> list[Quest]:
        """The quests that hold ``fingerprint`` (their first signal's, or attached), by id."""
        found = []
        for qid in sorted(await self.indexes.quests_with_fingerprint(repo, fingerprint)):
            quest = await self._quest(qid)
            if quest is not None and quest.holds(fingerprint):
                found.append(quest)
        return found

    # -- which quest ------------------------------------------------------------------------

    async def _owner(self, f: Failure) -> str:
        """The quest this failure belongs to: the one chosen by its first report, or chosen
        now and kept for the others."""
        key = failure_key(f.repo, f.sha, _group(f))
        chosen = await self.client.get(key)
        if chosen is None:
            mine = await self._choose(f)
            await self.client.set(key, mine, nx=True, ex=KEPT_S)
            chosen = await self.client.get(key)
            if chosen is None:  # gone between the two calls (flushed): ours stands
                return mine
        return chosen.decode() if isinstance(chosen, bytes) else str(chosen)

    async def _choose(self, f: Failure) -> str:
        quests = await self._holding(f.repo, f.fingerprint)
        for state in (State.WATCHING, State.CLOSED):
            landed = [q for q in quests if q.state is state]
            if landed:
                return landed[-1].id
        return failure_quest_id(f.repo, f.sha, _group(f))

    async def _followed(self, quest_id: str) -> tuple[str, Quest | None]:
        """The quest and its snapshot, following a duplicate to the quest it joined."""
        quest = await self._quest(quest_id)
        if quest is not None and quest.state is State.ABANDONED and quest.duplicate_of:
            joined = await self._quest(quest.duplicate_of)
            if joined is not None:
                return joined.id, joined
        return quest_id, quest

    # -- failures ---------------------------------------------------------------------------

    async def failure(self, f: Failure, delivery_id: str, apply: Apply) -> None:
        if not f.sha:
            return  # no commit: nothing to hold it against
        owner = await self._owner(f)
        for _ in range(3):  # a refusal here is a race lost to another report: look again
            qid, quest = await self._followed(owner)
            event = await self._failure_event(qid, quest, f, delivery_id)
            if event is None:
                return
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

    async def passed(self, p: Passed, delivery_id: str, apply: Apply) -> None:
        """Attach a green result to each live quest that holds its check."""
        ident = f"passed:{p.run}" if p.run else f"{delivery_id}:passed"
        for quest in await self._holding(p.repo, p.fingerprint):
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
