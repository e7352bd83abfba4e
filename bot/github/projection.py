"""The quest as GitHub shows it: its pull request, its check run and its status comment.

``Projection.sync(quest)`` brings what GitHub shows in line with the quest; the worker calls
it after every applied event. Each write is idempotent — the pull request and branch by name,
the check run by ``external_id`` (the quest id) on its head, the status comment by the id
remembered when it was posted — and skipped when the rendered content has not changed since
the last write (a digest per target in ``ForgeMemory``), because most events change nothing a
person would see and each write costs rate limit.

Where things go. The quest's home is a draft pull request on ``quest/<id>`` opened once the
quest starts research. GitHub refuses a pull request with no commits, so until the agent has
pushed one the status comment lives on the source issue (if the quest came from one) and the
check run on the commit the quest is about (its base); when the pull request appears, both
move there and the old comment says where.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Awaitable, Callable

import gidgethub

from bot.adapters import AdapterContext
from bot.agent.evidence import EvidenceBundle
from bot.core import Quest
from bot.core.events import Route
from bot.core.states import CHECKPOINT_AT, State
from bot.github import render
from bot.github.forge import CHECK_NAME, Forge, Forges, Pull, refused
from bot.github.markdown import inline_code
from bot.journal import PermanentError, failures, quest_keys
from bot.journal.memory import ForgeMemory
from bot.journal.records import load_event
from bot.journal.store import stream_rows

log = logging.getLogger(__name__)

EvidenceLookup = Callable[[Quest], Awaitable[EvidenceBundle | None]]
_NO_PR_YET = ("no commits between", "no commits")


def digest(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def quest_branch(quest_id: str) -> str:
    return f"quest/{quest_id}"


def source_issue_of(quest: Quest) -> int | None:
    """``issue:12`` / ``issues:12`` / ``#12`` as a signal source names issue 12."""
    source = quest.last_signal.strip()
    for prefix in ("issue:", "issues:", "#"):
        if source.startswith(prefix) and source[len(prefix):].isdigit():
            return int(source[len(prefix):])
    return None


class Projection:
    def __init__(self, ctx: AdapterContext, forges: Forges, *, draft_pulls: bool = True,
                 timeline: int = 10, evidence: EvidenceLookup | None = None) -> None:
        self.ctx = ctx
        self.forges = forges
        self.memory = ForgeMemory(ctx.journal.client)
        self.draft_pulls = draft_pulls
        self.timeline = timeline
        self.evidence = evidence

    # -- the pull request ------------------------------------------------------------------

    async def pull(self, quest: Quest, forge: Forge) -> Pull | None:
        number = await self.memory.quest_int(quest.id, "pr")
        return await forge.pull(number) if number is not None else None

    async def ensure_pull(self, quest: Quest, forge: Forge) -> int | None:
        """The quest's pull request number, opening it (and its branch) if needed; ``None``
        while GitHub refuses it because the branch has no commits beyond the base yet."""
        number = await self.memory.quest_int(quest.id, "pr")
        if number is not None:
            return number
        default = await self.memory.default_branch(quest.repo)
        base_sha = quest.base or await forge.git.branch_head(default)
        if base_sha is None:
            raise PermanentError(f"cannot open a branch for quest {quest.id}: {quest.repo} has "
                                 f"no branch {default}; the worker records the default branch "
                                 "from webhooks — redeliver one")
        branch = quest_branch(quest.id)
        head = await forge.git.ensure_branch(branch, quest.head or base_sha)
        source = await self.source_issue(quest)
        body = "\n".join([
            render.quest_marker(quest.id),
            f"questbot's work on quest {inline_code(quest.id)}"
            + (f", from #{source}." if source else f" (signal {inline_code(quest.last_signal)})."),
            "", "The status comment below says where it stands and what you can do.", ""])
        title = f"questbot: {quest.title or quest.id}"[:200]
        try:
            pull = await forge.create_pull(head=branch, base=default, title=title, body=body,
                                           draft=self.draft_pulls)
        except gidgethub.BadRequest as exc:
            text = str(exc).lower() + json.dumps(getattr(exc, "errors", None) or "").lower()
            if int(exc.status_code) == 422 and any(s in text for s in _NO_PR_YET):
                return None
            if int(exc.status_code) == 422 and "already exists" in text:
                raise refused(exc, f"open a pull request for {branch}", "one is open that "
                              "questbot did not record; close it and questbot opens its own "
                              "on the next event") from exc
            if int(exc.status_code) in (403, 404, 422):
                raise refused(exc, f"open a pull request from {branch} in {quest.repo}",
                              "check the App has pull_requests: write") from exc
            raise
        await self.memory.set_quest(quest.id, pr=pull.number, pr_url=pull.html_url,
                                    pr_head=head)
        return pull.number

    async def source_issue(self, quest: Quest) -> int | None:
        return await self.memory.quest_int(quest.id, "source_issue") or source_issue_of(quest)

    # -- sync ------------------------------------------------------------------------------

    async def sync(self, quest: Quest) -> None:
        """Make the status comment and check run show ``quest``; open the PR once it works."""
        forge = await self.forges.for_repo(quest.repo)
        if self._wants_pull(quest):
            await self.ensure_pull(quest, forge)
        await self.sync_with(quest, forge)

    async def sync_with(self, quest: Quest, forge: Forge) -> None:
        evidence = await self.evidence(quest) if self.evidence else None
        comment_url = await self.upsert_status(quest, forge, evidence)
        await self.upsert_check_run(quest, forge, comment_url, evidence)

    @staticmethod
    def _wants_pull(quest: Quest) -> bool:
        return (quest.route in (Route.AUTO_FIX, Route.RESEARCH_ONLY)
                and quest.state not in (State.SENSED, State.TRIAGED, State.CLOSED,
                                        State.ABANDONED))

    async def upsert_status(self, quest: Quest, forge: Forge,
                            evidence: EvidenceBundle | None = None) -> str | None:
        """Post or edit the one status comment; returns its URL (``None``: nowhere to post).
        ``evidence`` is what ``sync_with`` looked up for this quest, shown in the comment."""
        pr = await self.memory.quest_int(quest.id, "pr")
        target = pr if pr is not None else await self.source_issue(quest)
        if target is None:
            return None
        view = render.StatusView(
            quest, await self._timeline(quest.id),
            evidence,
            await self.memory.quest(quest.id, "pr_url"),
            [f"{f.effect_type}: {f.error}" for f in
             (await failures(self.ctx.journal.client, quest.id))[-3:]])
        body = render.status_comment(view)
        new_digest = digest(target, body)
        old = await self.memory.quest(quest.id, "status_digest")
        url = await self.memory.quest(quest.id, "status_url")
        if old == new_digest:
            return url
        comment_id = await self.memory.quest_int(quest.id, "status_comment")
        old_target = await self.memory.quest_int(quest.id, "status_target")
        if comment_id is not None and old_target != target:
            await forge.edit_comment(comment_id, f"{render.quest_marker(quest.id)}\nquestbot's "
                                     f"status for this quest now lives on #{target}.\n")
            comment_id = None
        comment = await forge.edit_comment(comment_id, body) if comment_id else None
        if comment is None:
            comment = await forge.comment(target, body)
        await self.memory.set_quest(quest.id, status_comment=comment.id, status_target=target,
                                    status_digest=new_digest, status_url=comment.html_url)
        return comment.html_url

    async def _timeline(self, quest_id: str) -> list[render.TimelineEntry]:
        rows = stream_rows(await self.ctx.journal.client.xrevrange(
            quest_keys(quest_id).events, "+", "-", count=self.timeline))
        out = []
        for _, fields in reversed(rows):
            try:
                event = load_event(fields["e"])
            except (KeyError, ValueError):
                continue
            out.append(render.TimelineEntry(event.at, event.type, None, event.actor))
        return out

    async def upsert_check_run(self, quest: Quest, forge: Forge, details_url: str | None,
                               evidence: EvidenceBundle | None = None) -> None:
        """Create or update the ``questbot`` check run on the quest's head; its details
        (``output.text``) carry the evidence too, cut to GitHub's limit."""
        head = (quest.head or await self.memory.quest(quest.id, "pr_head") or quest.base)
        if head is None:
            return
        view = render.check_run(quest, evidence)
        details = await self.memory.quest(quest.id, "pr_url") or details_url
        body = view.body(details)
        new_digest = digest(head, body)
        if await self.memory.quest(quest.id, "check_digest") == new_digest:
            return
        run_id = await self.memory.quest_int(quest.id, "check_run")
        same_head = await self.memory.quest(quest.id, "check_head") == head
        was_done = await self.memory.quest(quest.id, "check_done") == "1"
        reopening = was_done and view.status != "completed"
        if run_id is None or not same_head:
            found = await forge.find_check_run(head, quest.id)
            run_id = found.id if found else None
            was_done = found is not None and found.status == "completed"
            reopening = was_done and view.status != "completed"
        if run_id is None or reopening:  # GitHub shows the newest run of a name per commit
            run = await forge.create_check_run({"name": CHECK_NAME, "head_sha": head,
                                                "external_id": quest.id, **body})
        else:
            run = await forge.update_check_run(run_id, body)
        await self.memory.set_quest(quest.id, check_run=run.id, check_head=head,
                                    check_done=int(view.status == "completed"),
                                    check_digest=new_digest)

    async def blocking_here(self, quest: Quest) -> bool:
        checkpoint = CHECKPOINT_AT.get(quest.state)
        if checkpoint is None:
            return False
        settings = await self.ctx.settings.settings(quest.repo)
        return settings.to_policy().blocking(checkpoint)
