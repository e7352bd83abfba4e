"""The ``questbot inbox`` issue: one per repository, listing the quests that wait for a person.

Opened once, remembered by number, and pinned (GraphQL ``pinIssue``) once per issue: GitHub
allows three pinned issues per repository, and when three are pinned already questbot leaves
the inbox unpinned and says so in its log — a maintainer's pins are theirs. Its body is
re-rendered from the repository's live quests whenever one starts or stops waiting for a
person, and written only when it changed — or when a person changed it (a ticked box,
``bot.words.inbox_marks``; a close), which ``refresh(force=True)`` answers. Every entry links
to its pull request or issue, else to the commit its quest started from.

Once per repository. Two paths refresh it — the projection after every event and the
``notify_inbox`` effect — on one worker or several, so a refresh holds the repository's lease on
creating it (``bot.journal.memory``) and reads the record again inside. With no record, it looks
on GitHub first: the issues questbot opened, open or closed, for the inbox's hidden marker —
how an inbox opened by a worker that died before recording it, or recorded in writes a failover
lost, is found rather than doubled. One a person closed is opened again as it is written (the
same ``issues/update``): the inbox is how quests routed to a person reach one.

Below what waits, the latest flaky failures (``rules.flaky``): quests that ended because their
failed check passed when re-run, each with both runs, so a person sees what questbot chose not
to spend an agent on. Their ids are kept in the repository's GitHub record (``flaky``, the
newest ``FLAKY_SHOWN``). After what waits, the latest lessons closed quests taught
(``bot.words.inbox_lessons``), each with a box that drops it and linked to its quest's pull
request or issue; beside the reflection wave, what
questbot's reflection runs used so far (``bot.journal.model_use``).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence

from bot.adapters import AdapterContext
from bot.core import Quest, State
from bot.core.quest import Outcome
from bot.core.states import CHECKPOINT_AT
from bot.github.forge import Forge, Forges
from bot.github.forge import batch as batch_mutations
from bot.github.forge.batch import Answer, MutationBatch, Recording
from bot.github.forge.graphql import GraphQLRefused
from bot.github.forge.records import Issue
from bot.journal import Indexes
from bot.journal.lessons import LessonStore
from bot.journal.limits import RepoLimits
from bot.journal.memory import ForgeMemory, digest
from bot.journal.model_use import ModelUse
from bot.journal.reflection_attempts import ReflectionAttempts
from bot.reviews.agreement import Agreement
from bot.words import render
from bot.words.inbox_lessons import SHOWN as LESSONS_SHOWN
from bot.words.inbox_lessons import lessons_lines
from bot.words.inbox_limits import Waiting, Wave, limits_lines
from bot.words.inbox_marks import INBOX_MARKER

log = logging.getLogger(__name__)

FLAKY_SHOWN = 10


def _stood(quest: Quest) -> str:
    """Where a quest stands, as far as why it waits goes: its state, revision, park reason
    and hold."""
    held = quest.held.value if quest.held is not None else ""
    return f"{quest.state.value}:{quest.revision}:{quest.park_reason or ''}:{held}"


class Inbox:
    def __init__(self, ctx: AdapterContext, forges: Forges, memory: ForgeMemory) -> None:
        self.ctx = ctx
        self.forges = forges
        self.memory = memory
        self.indexes = Indexes(ctx.journal.client)
        self.limits = RepoLimits(ctx.journal.client)

    async def _waits(self, quest: Quest) -> bool:
        checkpoint = CHECKPOINT_AT.get(quest.state)
        blocking = False
        if checkpoint is not None:
            policy = (await self.ctx.settings.settings(quest.repo)).to_policy()
            # in shadow mode automatic decisions never advance: every checkpoint waits
            blocking = policy.blocking(checkpoint) or policy.shadow
        return render.waits_for_person(quest, blocking)

    async def _shown(self, quest: Quest) -> str:
        """How the inbox lists ``quest`` now, as ``inbox_listed`` records it."""
        shown = (f"{quest.state.value}:{quest.park_reason or ''}:{quest.revision}:"
                 f"{quest.owner or ''}" if await self._waits(quest) else "0")
        if quest.held is not None and quest.state is State.SENSED:
            shown = f"held:{quest.held.value}"  # waiting to start (``bot.core.limits``)
        return shown

    async def sync_quest(self, quest: Quest) -> None:
        """Refresh the inbox if this quest started or stopped waiting for a person, or waits
        differently (a checkpoint, then parked: its entry and box change)."""
        shown = await self._shown(quest)
        listed = await self.memory.quest(quest.id, "inbox_listed") or "0"
        if shown != listed:
            await self.refresh(quest.repo)
            await self.memory.set_quest_field(quest.id, "inbox_listed", shown)

    async def plan(self, quest: Quest, batch: MutationBatch,
                   leases: contextlib.AsyncExitStack) -> Recording | None:
        """The inbox's edit in the quest's one request (``bot.views.projection.BatchPart``):
        when ``quest``'s entry changed and the inbox is recorded, with its global id, and
        pinned, its ``updateIssue`` (reopening it, as the REST edit does) goes in ``batch``
        under the repository's ``inbox`` lease, held in ``leases`` until it is recorded.
        ``None``: nothing changed, or ``sync_quest`` after writes it by REST (opens, finds or
        pins it)."""
        shown = await self._shown(quest)
        if shown == (await self.memory.quest(quest.id, "inbox_listed") or "0"):
            return None
        repo = quest.repo
        number = await self.memory.repo(repo, "inbox")
        node = await self.memory.repo(repo, "inbox_node")
        if number is None or not node or await self.memory.repo(repo, "inbox_pinned") != number:
            return None
        await leases.enter_async_context(self.memory.repo_creating(repo, "inbox"))
        if await self.memory.repo(repo, "inbox") != number:
            return None  # another path changed the record meanwhile: the REST path looks
        body = await self._body(repo)
        new_digest = digest(body)
        index = (None if await self.memory.repo(repo, "inbox_digest") == new_digest
                 else batch.add(batch_mutations.edit_issue(
                     node, body, f"rewrite the inbox #{number}", reopen=True)))

        async def record(answers: Sequence[Answer]) -> None:
            if index is not None:
                if isinstance(answers[index], GraphQLRefused):
                    return  # gone or refused: ``sync_quest`` writes it by REST
                await self.memory.set_repo(repo, "inbox_digest", new_digest)
            await self.memory.set_quest_field(quest.id, "inbox_listed", shown)
        return record

    async def note_reason(self, quest: Quest, reason: str) -> None:
        """Why ``quest`` waits, as its inbox entry says, for as long as it waits so: kept with
        where the quest stood (``_stood``), the entry shows it only while the quest stands
        there — a quest started since, or resumed, no longer waits for what it said."""
        await self.memory.set_quest_field(quest.id, "inbox_reason", reason)
        await self.memory.set_quest_field(quest.id, "inbox_reason_at", _stood(quest))

    async def _reason(self, quest: Quest) -> str | None:
        at = await self.memory.quest(quest.id, "inbox_reason_at")
        if at is not None and at != _stood(quest):
            return None  # said of an earlier wait (none recorded: said before this rule)
        return await self.memory.quest(quest.id, "inbox_reason")

    async def record_flaky(self, quest: Quest) -> None:
        """Keep ``quest`` among the latest flaky failures shown, once."""
        async with self.memory.repo_creating(quest.repo, "flaky"):
            ids = (await self.memory.repo(quest.repo, "flaky") or "").split()
            if quest.id not in ids:
                ids = [*ids, quest.id][-FLAKY_SHOWN:]
                await self.memory.set_repo(quest.repo, "flaky", " ".join(ids))

    async def refresh(self, repo: str, *, force: bool = False) -> int:
        """Re-render the inbox of ``repo``; returns its issue number. Rendered inside the
        lease, so of two refreshes the one that writes last read the latest quests.
        ``force``: write it even if questbot wrote the same — a person changed it since."""
        async with self.memory.repo_creating(repo, "inbox"):
            return await self._write(repo, await self._body(repo), force=force)

    async def number(self, repo: str) -> int | None:
        """The inbox's issue number as recorded, if questbot has one."""
        number = await self.memory.repo(repo, "inbox")
        return int(number) if number else None

    async def _thread(self, quest_id: str) -> str | None:
        """The quest's pull request, else the issue it came from, as ``#12``."""
        pr, source = await self.memory.quest_fields(quest_id, "pr", "source_issue")
        number = int(pr or 0) or int(source or 0)
        return f"#{number}" if number else None

    async def _where(self, quest: Quest) -> str | None:
        commit = quest.rerun.sha if quest.rerun is not None else quest.base
        return await self._thread(quest.id) or commit

    async def _body(self, repo: str) -> str:
        entries: list[render.InboxEntry] = []
        for quest_id in sorted(await self.indexes.live_quests(repo)):
            _version, quest = await self.ctx.journal.snapshot(quest_id)
            if quest is None or not await self._waits(quest):
                continue
            reason = await self._reason(quest)
            entries.append(render.InboxEntry(quest, await self._where(quest), reason))
        flaky: list[render.InboxEntry] = []
        for quest_id in reversed((await self.memory.repo(repo, "flaky") or "").split()):
            _version, quest = await self.ctx.journal.snapshot(quest_id)
            if quest is not None and quest.outcome is Outcome.FLAKY:
                flaky.append(render.InboxEntry(quest, await self._where(quest)))
        agreement = await Agreement(self.ctx.journal.client).counts(repo)
        lessons = await LessonStore(self.ctx.journal.client).lessons(repo)
        threads = {lesson.quest_id: thread for lesson in lessons[:LESSONS_SHOWN]
                   if (thread := await self._thread(lesson.quest_id)) is not None}
        taught = lessons_lines(repo, lessons, threads)
        return render.inbox_body(entries, flaky, [*await self._limits(repo), *taught],
                                 agreement=agreement)

    async def _limits(self, repo: str) -> list[str]:
        """Quests waiting to start, oldest first, and the reflection wave."""
        waiting: list[Waiting] = []
        for quest_id, _since in await self.limits.held(repo):
            _version, quest = await self.ctx.journal.snapshot(quest_id)
            if quest is not None and quest.held is not None and quest.state is State.SENSED:
                waiting.append(Waiting(quest.id, quest.title, quest.held,
                                       await self._where(quest)))
        settings = await self.ctx.settings.settings(repo)
        passed = await self.limits.passed(repo)
        reflection = settings.reflection
        due = await self.limits.wave_due(repo, reflection.after_bad_endings,
                                         reflection.window_hours)
        rejected = await ReflectionAttempts(self.ctx.journal.client).rejected(repo)
        wave = Wave(due, reflection.after_bad_endings, reflection.window_hours,
                    await self.limits.pending(repo), passed, rejected,
                    await ModelUse(self.ctx.journal.client).spent(repo))
        return limits_lines(waiting, wave, settings.max_live_quests)

    async def _write(self, repo: str, body: str, *, force: bool = False) -> int:
        number = await self.memory.repo(repo, "inbox")
        if (number is not None and not force
                and await self.memory.repo(repo, "inbox_digest") == digest(body)):
            return int(number)
        forge = await self.forges.for_repo(repo)
        if number is None:
            found = await forge.find_issue(self.ctx.bot_login, INBOX_MARKER)
            number = str(found.number) if found is not None else None
        issue = (await forge.edit_issue(int(number), body, reopen=True)
                 if number is not None else None)
        if issue is None:
            issue = await forge.create_issue(render.INBOX_TITLE, body)
        await self.memory.set_repo(repo, "inbox", str(issue.number))
        if issue.node_id:
            await self.memory.set_repo(repo, "inbox_node", issue.node_id)
        await self._pin(repo, forge, issue)  # before the digest: a retry pins what failed
        await self.memory.set_repo(repo, "inbox_digest", digest(body))
        return issue.number

    async def _pin(self, repo: str, forge: Forge, issue: Issue) -> None:
        """Pin the inbox once per issue. Three pinned issues already: leave it unpinned,
        log it once, and do not ask again for this issue (unpinning another is a person's
        choice; their pins are not questbot's to move)."""
        if await self.memory.repo(repo, "inbox_pinned") == str(issue.number) or not issue.node_id:
            return
        try:
            await forge.graphql.pin_issue(issue.node_id)
        except GraphQLRefused as exc:
            log.warning("left the inbox #%s of %s unpinned: %s — a repository pins at most "
                        "three issues; unpin one and pin the inbox by hand to show it on top",
                        issue.number, repo, exc.reason)
        await self.memory.set_repo(repo, "inbox_pinned", str(issue.number))
