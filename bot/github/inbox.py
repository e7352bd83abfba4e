"""The ``questbot inbox`` issue: one per repository, listing the quests that wait for a person.

Opened once and remembered by number (pinning is left to a maintainer — one click, once). Its
body is re-rendered from the repository's live quests whenever one starts or stops waiting for
a person, or waits for something else, and written only when it changed.

Once per repository. Two paths refresh it — the projection after every event and the
``notify_inbox`` effect — on one worker or several, so a refresh holds the repository's lease on
creating it (``bot.journal.memory``) and reads the record again inside. With no record, it looks
on GitHub first: the issues questbot opened, open or closed, for the inbox's hidden marker —
how an inbox opened by a worker that died before recording it, or recorded in writes a failover
lost, is found rather than doubled. One a person closed stays closed and is still written.

Below what waits, the latest flaky failures (``rules.flaky``): quests that ended because their
failed check passed when re-run, each with both runs, so a person sees what questbot chose not
to spend an agent on. Their ids are kept in the repository's GitHub record (``flaky``, the
newest ``FLAKY_SHOWN``).
"""

from __future__ import annotations

from bot.adapters import AdapterContext
from bot.core import Quest
from bot.core.quest import Outcome
from bot.core.states import CHECKPOINT_AT
from bot.github import render
from bot.github.forge import Forges
from bot.github.projection import digest
from bot.journal import Indexes
from bot.journal.memory import ForgeMemory

FLAKY_SHOWN = 10


class Inbox:
    def __init__(self, ctx: AdapterContext, forges: Forges, memory: ForgeMemory) -> None:
        self.ctx = ctx
        self.forges = forges
        self.memory = memory
        self.indexes = Indexes(ctx.journal.client)

    async def _waits(self, quest: Quest) -> bool:
        checkpoint = CHECKPOINT_AT.get(quest.state)
        blocking = False
        if checkpoint is not None:
            settings = await self.ctx.settings.settings(quest.repo)
            blocking = settings.to_policy().blocking(checkpoint)
        return render.waits_for_person(quest, blocking)

    async def sync_quest(self, quest: Quest) -> None:
        """Refresh the inbox if this quest started or stopped waiting for a person, or waits
        for something else now (its line says what: a checkpoint, a claim, a park's reason —
        a quest parked on its budget after checkpoint A waits still, for a spend decision)."""
        waits = (f"1:{quest.state.value}:{quest.park_reason or ''}"
                 if await self._waits(quest) else "0")
        listed = await self.memory.quest(quest.id, "inbox_listed") or "0"
        if waits != listed:
            await self.refresh(quest.repo)
            await self.memory.set_quest_field(quest.id, "inbox_listed", waits)

    async def record_flaky(self, quest: Quest) -> None:
        """Keep ``quest`` among the latest flaky failures shown, once."""
        async with self.memory.repo_creating(quest.repo, "flaky"):
            ids = (await self.memory.repo(quest.repo, "flaky") or "").split()
            if quest.id not in ids:
                ids = [*ids, quest.id][-FLAKY_SHOWN:]
                await self.memory.set_repo(quest.repo, "flaky", " ".join(ids))

    async def refresh(self, repo: str) -> int:
        """Re-render the inbox of ``repo``; returns its issue number. Rendered inside the
        lease, so of two refreshes the one that writes last read the latest quests."""
        async with self.memory.repo_creating(repo, "inbox"):
            return await self._write(repo, await self._body(repo))

    async def _body(self, repo: str) -> str:
        entries: list[render.InboxEntry] = []
        for quest_id in sorted(await self.indexes.live_quests(repo)):
            _version, quest = await self.ctx.journal.snapshot(quest_id)
            if quest is None or not await self._waits(quest):
                continue
            pr = await self.memory.quest_int(quest.id, "pr")
            source = await self.memory.quest_int(quest.id, "source_issue")
            where = f"#{pr}" if pr else (f"#{source}" if source else None)
            reason = await self.memory.quest(quest.id, "inbox_reason")
            entries.append(render.InboxEntry(quest, where, reason))
        flaky: list[render.InboxEntry] = []
        for quest_id in reversed((await self.memory.repo(repo, "flaky") or "").split()):
            _version, quest = await self.ctx.journal.snapshot(quest_id)
            if quest is not None and quest.outcome is Outcome.FLAKY:
                flaky.append(render.InboxEntry(quest))
        return render.inbox_body(entries, flaky)

    async def _write(self, repo: str, body: str) -> int:
        number = await self.memory.repo(repo, "inbox")
        if number is not None and await self.memory.repo(repo, "inbox_digest") == digest(body):
            return int(number)
        forge = await self.forges.for_repo(repo)
        if number is None:
            found = await forge.find_issue(self.ctx.bot_login, render.INBOX_MARKER)
            number = str(found.number) if found is not None else None
        if number is None or not await forge.edit_issue(int(number), body):
            number = str(await forge.create_issue(render.INBOX_TITLE, body))
        await self.memory.set_repo_fields(repo, inbox=number, inbox_digest=digest(body))
        return int(number)
