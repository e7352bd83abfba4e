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
from collections.abc import Sequence
from typing import Any

from bot.adapters import AdapterContext
from bot.agent.evidence import EvidenceBundle
from bot.core import Quest
from bot.core.events import Reopened, Reproduced
from bot.github.forge import CHECK_NAME, CheckRun, Forge
from bot.github.forge.batch import (
    Answer,
    MutationBatch,
    Recording,
    create_check_run,
    permanent,
    update_check_run,
)
from bot.github.forge.graphql import GraphQLRefused
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
                                           check_node=run.node_id,
                                           check_done=int(view.status == "completed"),
                                           check_digest=new_digest)

    async def plan(self, quest: Quest, forge: Forge, evidence: EvidenceBundle | None,
                   batch: MutationBatch, repository_id: str) -> Recording | None:
        """Queue the run's write in ``batch`` (``Projection.sync_with`` holds the ``check``
        lease around planning, sending and recording); ``None`` when there is nothing to write
        or it needs the REST path — a create left unrecorded (``CREATING_CHECK``: its head is
        listed first), a run recorded before node ids were, a quest whose record was lost.

        The same writes as ``_check_run_on`` where it lists nothing: the recorded run
        updated in place; or, on a new head (or a finished run to follow), the old run
        superseded if unfinished and a new one created — reserved before the request, as
        every create is, so a request that dies leaves the reservation for the next path."""
        head = quest.head or await self._pr_head(quest) or quest.base
        if head is None:
            return None
        view = checks.check_run(quest, evidence,
                                (await self.ctx.settings.settings(quest.repo)).to_policy())
        body = view.body(await self.memory.quest(quest.id, "pr_url"))
        new_digest = digest(head, body)
        run_id, node, check_head, done, pending, shown, none_on = await self.memory.quest_fields(
            quest.id, "check_run", "check_node", "check_head", "check_done", CREATING_CHECK,
            "check_digest", CHECK_NONE_ON)
        if pending is not None or (shown == new_digest) or (run_id is not None and not node):
            return None
        reopening = view.status != "completed"
        what = f"the questbot check run of quest {quest.id}"
        old: tuple[int, int] | None = None
        if run_id is not None and check_head == head and not (done == "1" and reopening):
            assert node is not None
            index = batch.add(update_check_run(repository_id, node, body, f"update {what}"))
            create = False
        elif run_id is not None or none_on == head:
            if run_id is not None and node and check_head != head and done != "1":
                old = (int(run_id), batch.add(update_check_run(
                    repository_id, node, checks.superseded_check_run(head).body(),
                    f"finish {what} on {str(check_head)[:12]} as superseded")))
            await self.memory.set_quest_field(quest.id, CREATING_CHECK, head)
            index = batch.add(create_check_run(repository_id, {
                "name": CHECK_NAME, "head_sha": head, "external_id": quest.id, **body},
                f"create {what} on {head[:12]}"))
            create = True
        else:
            return None

        async def record(answers: Sequence[Answer]) -> None:
            if old is not None and isinstance(answers[old[1]], GraphQLRefused):
                refusal = answers[old[1]]
                if not permanent(refusal):  # not finished: the REST write finishes it
                    await self._supersede(forge, old[0], head)
                else:
                    log.warning("could not mark check run %s superseded: %s", old[0], refusal)
            answer = answers[index]
            if isinstance(answer, GraphQLRefused):
                log.info("%s; the REST path writes it (%s)", answer, "create" if create
                         else "update")
                return
            run = answer.get("checkRun") or {}
            await self.memory.record_quest(
                quest.id, clear=CREATING_CHECK, check_run=int(run["databaseId"]),
                check_node=str(run["id"]), check_head=head, check_url=str(run["url"]),
                check_done=int(view.status == "completed"), check_digest=new_digest)
        return record

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
