"""The ``questbot`` check run written to GitHub: created once per head, updated in place,
and the runs left behind completed as superseded, so nothing waits on a commit questbot has
moved on from. ``Projection`` calls it; ``bot.words.check_run`` says what a run shows.

Each write is skipped when the rendered run has not changed (``check_digest`` in
``ForgeMemory``); a create is reserved first (``CREATING_CHECK``), so a worker that died between
GitHub's answer and its record leaves a reservation saying where to look, and neither that nor
two paths at once leaves two runs (``bot.journal.memory`` explains the lease).
"""

from __future__ import annotations

import logging
from typing import Any

from bot.adapters import AdapterContext
from bot.agent.evidence import EvidenceBundle
from bot.core import Quest
from bot.core.events import Reopened, Reproduced
from bot.github.forge import CHECK_NAME, CheckRun, Forge
from bot.journal import PermanentError, quest_keys
from bot.journal.memory import ForgeMemory, digest
from bot.journal.records import load_event
from bot.journal.store import stream_rows
from bot.words import check_run as checks

log = logging.getLogger(__name__)

_HEAD_LOOKBACK = 50
"""Events searched, newest first, for the reproduction's commit (research to B is a few)."""
CHECK_NONE_ON = "check_none_on"
"""The quest's first commit, made by ``Projection.ensure_pull`` with its branch: no check run
can be on it, so its first is created without listing (the reservation below then stands in
for the record, should the create die unrecorded)."""
CREATING_CHECK = "check_creating"
"""The head a check run is being created on, until the run is recorded."""


class CheckRunWrites:
    def __init__(self, ctx: AdapterContext, memory: ForgeMemory) -> None:
        self.ctx = ctx
        self.memory = memory

    async def upsert(self, quest: Quest, forge: Forge, details_url: str | None,
                     evidence: EvidenceBundle | None = None, *, on_pull: bool) -> None:
        """Create or update the ``questbot`` check run on the quest's head; its details
        (``output.text``) carry the evidence too, cut to GitHub's limit. ``on_pull``: the
        quest has its pull request, whose head the run belongs on and links to."""
        current = on_pull
        head = quest.head or (await self._pr_head(quest) if current else None) or quest.base
        if head is None:
            return
        settings = await self.ctx.settings.settings(quest.repo)
        view = checks.check_run(quest, evidence, settings.to_policy())
        details = (await self.memory.quest(quest.id, "pr_url") if current else None) or details_url
        body = view.body(details)
        new_digest = digest(head, body)
        if await self.memory.quest_fields(quest.id, "check_digest", CREATING_CHECK) == [
                new_digest, None]:
            return  # shown already, and no create was left unrecorded
        async with self.memory.quest_creating(quest.id, "check"):
            if await self.memory.quest_fields(quest.id, "check_digest", CREATING_CHECK) == [
                    new_digest, None]:
                return  # written meanwhile by the path that held the lease
            run = await self._check_run_on(quest, forge, head, view, body)
            await self.memory.record_quest(quest.id, clear=CREATING_CHECK, check_run=run.id,
                                           check_head=head, check_url=run.html_url,
                                           check_done=int(view.status == "completed"),
                                           check_digest=new_digest)

    async def _pr_head(self, quest: Quest) -> str | None:
        """Where the quest's branch points while the quest has no head of its own (research
        to checkpoint B), the pull request's head, where its check run belongs: the
        reproduction the agent pushed over questbot's first commit, else that first commit.
        The reproduction reaches the core as no head, so it is read from the journal's
        ``reproduced`` event — no request to GitHub."""
        rows = stream_rows(await self.ctx.journal.client.xrevrange(
            quest_keys(quest.id).events, "+", "-", count=_HEAD_LOOKBACK))
        for _, fields in rows:
            try:
                event = load_event(fields["e"])
            except (KeyError, ValueError):
                continue
            if isinstance(event, Reopened):
                break  # an earlier revision's reproduction is not this one's head
            if isinstance(event, Reproduced) and event.commit:
                return event.commit
        return await self.memory.quest(quest.id, "pr_head")

    async def _check_run_on(self, quest: Quest, forge: Forge, head: str,
                            view: checks.CheckRunView, body: dict[str, Any]) -> CheckRun:
        """The run that shows ``body`` on ``head``: the recorded one, updated; else one
        GitHub has for this quest and head (created by a path that died before recording
        it), updated; else a new one. GitHub shows the newest run of a name per commit, so
        a finished run is followed by a new one rather than reopened. Runs left behind — on
        the previous head, or unfinished on this one — are completed as superseded.

        Every create is reserved first (``CREATING_CHECK`` names the head), because a run
        recorded as finished may be followed by one that was created and not recorded; the
        reservation left by a path that died says where to look. So with a run recorded and
        no reservation left, there is nothing to look for: every run of the quest on ``head``
        was recorded in its time and finished (or superseded) when the view moved on, and a
        new one is created without listing them. Only a quest whose record was lost (or
        that never had a run) lists what GitHub has."""
        run_id = await self.memory.quest_int(quest.id, "check_run")
        recorded = run_id is not None
        done = await self.memory.quest(quest.id, "check_done") == "1"
        reopening = view.status != "completed"
        pending = await self.memory.quest(quest.id, CREATING_CHECK)
        if run_id is not None and await self.memory.quest(quest.id, "check_head") != head:
            if not done:
                await self._supersede(forge, run_id, head)
            run_id = None
        if pending is not None and pending != head:  # a run there may be orphaned
            for orphan in await self._runs(forge, quest, pending):
                if orphan.status != "completed":
                    await self._supersede(forge, orphan.id, head)
        if run_id is not None and pending is None and not (done and reopening):
            return await forge.update_check_run(run_id, body)
        new_head = (pending is None
                    and await self.memory.quest(quest.id, CHECK_NONE_ON) == head)
        runs = ([] if (recorded or new_head) and pending is None
                else await self._runs(forge, quest, head))
        keep = runs[0] if runs and not (runs[0].status == "completed" and reopening) else None
        for stale in runs:
            if stale is not keep and stale.status != "completed":
                await self._supersede(forge, stale.id, head)
        if keep is not None:
            return await forge.update_check_run(keep.id, body)
        await self.memory.set_quest_field(quest.id, CREATING_CHECK, head)
        return await forge.create_check_run({"name": CHECK_NAME, "head_sha": head,
                                             "external_id": quest.id, **body})

    @staticmethod
    async def _runs(forge: Forge, quest: Quest, head: str) -> list[CheckRun]:
        """The quest's ``questbot`` runs on ``head``, newest first."""
        return sorted((r for r in await forge.check_runs(head, name=CHECK_NAME, latest=False)
                       if r.external_id == quest.id), key=lambda r: -r.id)

    async def _supersede(self, forge: Forge, run_id: int, head: str) -> None:
        try:
            await forge.update_check_run(run_id, checks.superseded_check_run(head).body())
        except PermanentError as exc:  # gone or not ours any more: nothing left to finish
            log.warning("could not mark check run %s superseded: %s", run_id, exc)
