"""The quest as GitHub shows it: its pull request, its check run and its status comment.

``Projection.sync(quest)`` brings what GitHub shows in line with the quest; the worker calls
it after every applied event, and so does ``request_checkpoint``. Each write is skipped when the
rendered content has not changed since the last write (a digest per target in
``ForgeMemory``), because most events change nothing a person would see and each write costs
rate limit.

Each object is created once (``bot.journal.memory`` explains the lease): the pull request is
found by its head branch (``pulls/list``), the status comment by its hidden marker among the
thread's comments, the check run by ``external_id`` (the quest id) among the runs on its head,
whenever questbot has no record of one — so neither a worker that died between a create and
its record nor two paths syncing at once leaves two. A check run left on a commit that is no
longer the quest's head is completed as superseded, so nothing waits on it forever
(``bot.views.check_run_writes``).

Where things go. The quest's home is a draft pull request on ``quest/<id>``, opened when the
quest starts research. GitHub refuses a pull request whose head has no commits beyond its base
(422 "No commits between …"), so the branch starts with questbot's own first commit: an empty
one, on the base's tree, whose message names the quest (docs/decisions.md says why that shape).
Before research starts — a quest routed to a person waits in ``triaged`` — the status comment
lives on the source issue (if the quest came from one) and the check run on the commit the
quest is about (its base); when the pull request appears, both move there and the old comment
says where, which links the pull request from the issue.

The pull request is a draft until the change is there to review: at checkpoint C (``ready``,
a claimed C review, or ``landing`` if C was decided at once) questbot marks it ready for review
through GraphQL, once — a person who turns it back into a draft after that is not overruled,
and GitHub will not merge a draft, so ``land`` says so. A repository whose plan has no drafts
(422 "Draft pull requests are not supported") gets an ordinary pull request.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

import gidgethub

from bot.adapters import AdapterContext
from bot.agent.evidence import EvidenceBundle
from bot.core import Quest
from bot.core.events import Route
from bot.core.states import State
from bot.github.forge import Forge, Forges, Pull, refused
from bot.github.forge import batch as batch_mutations
from bot.github.forge.batch import Answer, MutationBatch, Recording
from bot.github.forge.graphql import GraphQLRefused
from bot.journal import PermanentError
from bot.journal.memory import ForgeMemory, digest
from bot.runner import REDIS_AWAY, failures
from bot.views.check_run_writes import CHECK_NONE_ON, CheckRunWrites
from bot.views.last_words import last_words
from bot.views.quest_story import read_story
from bot.words import pull_request as pull_words
from bot.words import render
from bot.words import status_comment as status
from bot.words.commits import first_commit_message
from bot.words.failed_effects import could_not

log = logging.getLogger(__name__)

EvidenceLookup = Callable[[Quest], Awaitable[EvidenceBundle | None]]
_NO_PR_YET = ("no commits between", "no commits")
_NO_DRAFTS = "draft pull requests are not supported"
STATUS_NONE_ON = "status_none_on"
"""The pull request the quest opened on a branch it made, while it has no status comment
there: its first is posted without looking for one (dropped before the post)."""


class BatchPart(Protocol):
    """Another view whose edit goes in the quest's one request (``Projection._batched``):
    the inbox (``bot.inbox.issue``)."""

    async def plan(self, quest: Quest, batch: MutationBatch,
                   leases: contextlib.AsyncExitStack) -> Recording | None:
        """Queue the edit (holding its lease in ``leases``) and say how to record it, or
        ``None``: nothing to write, or the part writes it by its own path after."""


def quest_branch(quest_id: str) -> str:
    return f"quest/{quest_id}"


async def open_pull(forge: Forge, *, head: str, base: str, title: str, body: str, draft: bool,
                    author: str) -> Pull | None:
    """``pulls/create`` from ``head``; ``None`` while GitHub refuses it because ``head`` has no
    commits beyond ``base``. A 422 "already exists" is a pull request opened by a path that
    died before recording it: found by its head branch and returned, if ``author`` opened it.
    Call it holding the lease on creating it, after looking with ``Forge.find_pull``."""
    try:
        return await forge.create_pull(head=head, base=base, title=title, body=body,
                                       draft=draft)
    except gidgethub.BadRequest as exc:
        text = str(exc).lower() + json.dumps(getattr(exc, "errors", None) or "").lower()
        if int(exc.status_code) == 422 and draft and _NO_DRAFTS in text:
            return await open_pull(forge, head=head, base=base, title=title, body=body,
                                   draft=False, author=author)
        if int(exc.status_code) == 422 and any(s in text for s in _NO_PR_YET):
            return None
        if int(exc.status_code) == 422 and "already exists" in text:
            found = await forge.find_pull(head, author=author)
            if found is not None:
                return found
            raise refused(exc, f"open a pull request for {head}", "someone else opened one "
                          "from that branch; close it and questbot opens its own on the next "
                          "event") from exc
        if int(exc.status_code) in (403, 404, 422):
            raise refused(exc, f"open a pull request from {head} in {forge.repo}",
                          "check the App has pull_requests: write") from exc
        raise


def repo_web_url(pull_url: str | None) -> str | None:
    """The repository's web address from one of its pull requests' (``…/pull/7``)."""
    if not pull_url or "/pull/" not in pull_url:
        return None
    return pull_url.rsplit("/pull/", 1)[0]


def source_issue_of(quest: Quest) -> int | None:
    """``issue:12`` / ``issues:12`` / ``#12`` as a signal source names issue 12."""
    source = quest.last_signal.strip()
    for prefix in ("issue:", "issues:", "#"):
        if source.startswith(prefix) and source[len(prefix):].isdigit():
            return int(source[len(prefix):])
    return None


def reviewable(quest: Quest) -> bool:
    """Whether the quest's change is there to review: checkpoint C and after."""
    return (quest.state in (State.READY, State.LANDING)
            or (quest.state is State.HANDED_OFF and quest.checkpoint_state is State.READY))


class Projection:
    def __init__(self, ctx: AdapterContext, forges: Forges, *, draft_pulls: bool = True,
                 timeline: int = 1_000_000, evidence: EvidenceLookup | None = None) -> None:
        self.ctx = ctx
        self.forges = forges
        self.memory = ForgeMemory(ctx.journal.client)
        self.check_runs = CheckRunWrites(ctx, self.memory)
        self.draft_pulls = draft_pulls
        self.timeline = timeline
        self.evidence = evidence
        self._opened_text: dict[str, str] = {}
        """The digest of the title and description a pull request is being opened with."""

    # -- the pull request ------------------------------------------------------------------

    async def pull(self, quest: Quest, forge: Forge) -> Pull | None:
        number = await self.recorded_pull(quest)
        return await forge.pull(number) if number is not None else None

    async def recorded_pull(self, quest: Quest) -> int | None:
        """The pull request recorded for the quest's current branch (``Quest.branch``): a
        quest that starts again after a rollback or a reopening works on a fresh branch, and
        the pull request of its old one, merged, is not its home any more."""
        return await self.memory.quest_pull(quest.id, quest.branch)

    async def ensure_pull(self, quest: Quest, forge: Forge) -> int | None:
        """The quest's pull request number, opening it (and its branch) if needed; ``None``
        while GitHub refuses it because the branch has no commits beyond the base yet.
        Opened once (``bot.journal.memory``): under the lease, and only when GitHub has no
        pull request of questbot's from ``quest/<id>`` already."""
        number = await self.recorded_pull(quest)
        if number is not None:
            return number
        async with self.memory.quest_creating(quest.id, "pr"):
            number = await self.recorded_pull(quest)
            if number is not None:  # opened by the path that held the lease before us
                return number
            branch = quest.branch
            pull, fresh = await self._open_on_new_branch(quest, forge, branch)
            if not fresh:
                head = await forge.git.branch_head(branch)
                # a pull request questbot opened and did not record has its branch: with
                # none, there is nothing to find (and a 422 "already exists" still finds one)
                pull = (await forge.find_pull(branch, author=self.ctx.bot_login)
                        if head is not None else None)
                if pull is None:
                    pull = await self._open_pull(quest, forge, branch, head)
            if pull is None:
                return None
            earlier = await self._earlier_pull(quest, branch)
            # on a branch this path made, the pull request and its head are new: no status
            # comment and no check run of questbot's can be there yet, so the first of each
            # is made without looking (each record is dropped before its create: a path that
            # dies after the create leaves the look-up to the next one)
            empty: dict[str, str | int] = (
                {STATUS_NONE_ON: pull.number, CHECK_NONE_ON: pull.head_sha} if fresh else {})
            await self.memory.record_pull(quest.repo, quest.id, pull.number, branch=branch,
                                          url=pull.html_url, head=pull.head_sha,
                                          draft=pull.draft, node=pull.node_id,
                                          repo_node=pull.repo_node,
                                          pr_text=self._opened_text.pop(quest.id, ""),
                                          **earlier, **empty)
            return pull.number

    async def _open_on_new_branch(self, quest: Quest, forge: Forge,
                                  branch: str) -> tuple[Pull | None, bool]:
        """Make ``branch`` on questbot's first commit and open the pull request from it,
        without reading the branch first (``GitData.create_branch``: the create is its own
        look-up). ``(pull, True)`` when this call made the branch — a pull request opened
        and not recorded by a path that died would have left the branch, so there is none to
        find; ``(None, False)`` when the branch was there (or the quest already has a head
        of its own), for ``ensure_pull`` to look."""
        default = await self.memory.default_branch(quest.repo)
        base_sha = quest.base or await forge.git.branch_head(default)
        if base_sha is None or (quest.head and quest.head != base_sha):
            return None, False  # ``_open_pull`` says what is wrong, or starts at the head
        first = await forge.git.create_commit(
            tree=await forge.git.commit_tree(base_sha), parents=[base_sha],
            message=first_commit_message(quest))
        if not await forge.git.create_branch(branch, first):
            return None, False  # the unreferenced commit left behind is harmless
        return await self._open_text(quest, forge, branch, default), True

    async def _open_text(self, quest: Quest, forge: Forge, branch: str,
                         default: str) -> Pull | None:
        """``pulls/create`` from ``branch`` with the quest's title and description."""
        view = await self.pull_view(quest, None, None, await self._earlier_pull(quest, branch))
        title, body = pull_words.pull_title(view), pull_words.pull_body(view)
        self._opened_text[quest.id] = digest(title, body)
        return await open_pull(forge, head=branch, base=default, title=title, body=body,
                               draft=self.draft_pulls, author=self.ctx.bot_login)

    async def _open_pull(self, quest: Quest, forge: Forge, branch: str,
                         head: str | None) -> Pull | None:
        """Open the pull request from ``branch`` (at ``head``, ``None``: not there yet)."""
        default = await self.memory.default_branch(quest.repo)
        base_sha = quest.base or await forge.git.branch_head(default)
        if base_sha is None:
            raise PermanentError(f"cannot open a branch for quest {quest.id}: {quest.repo} has "
                                 f"no branch {default}; the worker records the default branch "
                                 "from webhooks — redeliver one")
        if head is None and quest.head and quest.head != base_sha:
            head = await forge.git.ensure_branch(branch, quest.head)
        if head is None or head == base_sha:
            # the first commit is questbot's own (an interrupted path may have left the
            # branch at the base, or an unreferenced commit, which is harmless)
            first = await forge.git.create_commit(
                tree=await forge.git.commit_tree(base_sha), parents=[base_sha],
                message=first_commit_message(quest))
            await forge.git.set_branch(branch, first, exists=head is not None)
        return await self._open_text(quest, forge, branch, default)

    async def _earlier_pull(self, quest: Quest, branch: str) -> dict[str, str | int]:
        """The pull request of the quest's earlier revision, when a new one opens on ``branch``
        (a regression or a rollback): kept as ``earlier_pr``, for the new one to link."""
        number, recorded, url = await self.memory.quest_fields(quest.id, "pr", "pr_branch",
                                                                "pr_url")
        if number is not None and (recorded or quest_branch(quest.id)) != branch:
            return {"earlier_pr": number, "earlier_pr_url": url or ""}
        found = await self.memory.quest_fields(quest.id, "earlier_pr", "earlier_pr_url")
        return {"earlier_pr": found[0], "earlier_pr_url": found[1] or ""} if found[0] else {}

    async def pull_view(self, quest: Quest, evidence: EvidenceBundle | None,
                        pull_url: str | None,
                        earlier: dict[str, str | int] | None = None) -> pull_words.PullView:
        """What the pull request's title and description are written from."""
        policy = (await self.ctx.settings.settings(quest.repo)).to_policy()
        story = await read_story(self.ctx.journal, quest, policy, timeline=0)
        fix = None
        if quest.revision > 1:
            if earlier is None:
                number, url = await self.memory.quest_fields(quest.id, "earlier_pr",
                                                             "earlier_pr_url")
                earlier = {"earlier_pr": number or "", "earlier_pr_url": url or ""}
            url = str(earlier.get("earlier_pr_url") or "") or None
            number = str(earlier.get("earlier_pr") or "")
            fix = pull_words.EarlierFix(
                pull_number=int(number) if number.isdigit() else None, pull_url=url,
                merge_sha=story.earlier_merge,
                back_on=(story.failed.sha if story.failed is not None and story.earlier_merge
                         else None),  # a reopening's: a rollback's failure is the first one
                repo_url=repo_web_url(url or pull_url))
        return pull_words.PullView(quest, story.failed, evidence, pull_url, fix,
                                   await self.source_issue(quest))

    async def _pull_text(self, quest: Quest,
                         evidence: EvidenceBundle | None) -> tuple[str, str, str]:
        """The pull request's title, description and their digest, as they should read."""
        pull_url = await self.memory.quest(quest.id, "pr_url")
        view = await self.pull_view(quest, evidence, pull_url)
        title, body = pull_words.pull_title(view), pull_words.pull_body(view)
        return title, body, digest(title, body)

    async def upsert_pull_text(self, quest: Quest, forge: Forge,
                               evidence: EvidenceBundle | None = None) -> None:
        """Keep the pull request's title and description current (``bot.words.pull_request``):
        written only when their text changed since the last write (a digest, ``pr_text``), so
        a quest's many events cost a write at each checkpoint, not one each."""
        number = await self.recorded_pull(quest)
        if number is None:
            return
        title, body, new_digest = await self._pull_text(quest, evidence)
        if await self.memory.quest(quest.id, "pr_text") == new_digest:
            return
        async with self.memory.quest_creating(quest.id, "pr_text"):
            if await self.memory.quest(quest.id, "pr_text") == new_digest:
                return  # written meanwhile by the path that held the lease
            await forge.edit_pull(number, title=title, body=body)
            await self.memory.set_quest_field(quest.id, "pr_text", new_digest)

    async def _plan_pull_text(self, quest: Quest, evidence: EvidenceBundle | None,
                              batch: MutationBatch) -> Recording | None:
        """``updatePullRequest`` in ``batch`` when the text changed (``pr_text`` lease held)."""
        node, shown = await self.memory.quest_fields(quest.id, "pr_node", "pr_text")
        if not node:
            return None
        title, body, new_digest = await self._pull_text(quest, evidence)
        if shown == new_digest:
            return None
        index = batch.add(batch_mutations.edit_pull(
            node, title, body, f"edit the title and description of quest {quest.id}'s pull "
            "request"))

        async def record(answers: Sequence[Answer]) -> None:
            if not isinstance(answers[index], GraphQLRefused):
                await self.memory.set_quest_field(quest.id, "pr_text", new_digest)
        return record

    async def mark_ready(self, quest: Quest, forge: Forge, pull: Pull | None = None) -> bool:
        """Mark the quest's pull request ready for review, if questbot opened it as a draft
        and has not marked it yet (``markPullRequestReadyForReview``). Whether it is ready
        now: ``False`` when it is a draft questbot already marked ready once — a person made
        it a draft again, and questbot does not overrule them."""
        number = await self.recorded_pull(quest)
        if number is None:
            return False
        if await self.memory.quest(quest.id, "pr_draft") != "1":
            return pull is None or not pull.draft
        # the checkpoint's request and the projector may both get here at once: one marks
        async with self.memory.quest_creating(quest.id, "ready"):
            return await self._mark_ready(quest, forge, number, pull)

    async def _mark_ready(self, quest: Quest, forge: Forge, number: int,
                          pull: Pull | None) -> bool:
        if await self.memory.quest(quest.id, "pr_draft") != "1":  # marked meanwhile
            return pull is None or not pull.draft
        # questbot opened it as a draft and has not marked it: with its node id recorded at
        # opening, it is marked without being read first — one a person marked ready meanwhile
        # stays as it is (``markPullRequestReadyForReview`` on a ready one changes nothing)
        node = pull.node_id if pull is not None else await self.memory.quest(quest.id, "pr_node")
        if not node:  # recorded before node ids were
            pull = await forge.pull(number)
            node = pull.node_id
        if pull is None or pull.draft:
            try:
                await forge.graphql.mark_ready(node)
            except GraphQLRefused:
                # GitHub may refuse to mark one that is not a draft: a person marked it ready
                # meanwhile, which is as good; anything else stands
                if (await forge.pull(number)).draft:
                    raise
            log.info("marked #%s of %s ready for review (quest %s at %s)", number, quest.repo,
                     quest.id, quest.state.value)
        await self.memory.set_quest(quest.id, pr_draft=0)
        return True

    async def source_issue(self, quest: Quest) -> int | None:
        return await self.memory.quest_int(quest.id, "source_issue") or source_issue_of(quest)

    # -- sync ------------------------------------------------------------------------------

    async def sync(self, quest: Quest, also: Sequence[BatchPart] = ()) -> None:
        """Make the status comment and check run show ``quest``; open the PR once it works.
        ``also``: other views whose edits go in the same request (the inbox)."""
        forge = await self.forges.for_repo(quest.repo)
        if self._wants_pull(quest):
            await self.ensure_pull(quest, forge)
        await self.sync_with(quest, forge, also)
        if self._wants_pull(quest) and reviewable(quest):
            await self.mark_ready(quest, forge)  # done in the batch unless it was refused

    async def sync_with(self, quest: Quest, forge: Forge,
                        also: Sequence[BatchPart] = ()) -> None:
        """Bring the status comment and check run in line with the quest as it is *now*.

        Every worker projects the quests whose events it applied, so two may project one quest
        at once, each holding a different version of it; the one that writes last would win.
        So one projects at a time (a lease per quest), and each shows the snapshot it reads
        inside the lease, not the copy it was handed: an older view never overwrites a newer
        one (a chaos run showed a stale sync reopen a closed quest's check run).

        On the quest's pull request the edits go first as one GraphQL request
        (``_batched``); whatever it did not write — a first create, a record to look for, a
        refusal — then takes the REST path below, which finds the rest written (their
        digests) and sends nothing for them."""
        async with self.memory.quest_creating(quest.id, "view"):
            _version, latest = await self.ctx.journal.snapshot(quest.id)
            quest = latest if latest is not None else quest
            evidence = await self.evidence(quest) if self.evidence else None
            comment_url: str | None = None
            failed: Exception | None = None
            pr = await self.recorded_pull(quest)
            if pr is not None:
                try:
                    await self._batched(quest, forge, pr, evidence, also)
                except (gidgethub.GitHubException, OSError, TimeoutError) as exc:
                    # GitHub refused or dropped the request as a whole (a 403 or 429 limit, a
                    # 502): each view by REST, as before batching, the run first
                    log.warning("the view edits of quest %s in one request failed (%s); "
                                "writing each on its own", quest.id, exc)
                # The check run first: on a pull request its details link to the pull request,
                # and the comment links the pull request's checks.
                try:
                    await self.upsert_check_run(quest, forge, None, evidence)
                except REDIS_AWAY:
                    raise
                except Exception as exc:  # the comment is still worth writing
                    failed = exc
                try:
                    await self.upsert_pull_text(quest, forge, evidence)
                except REDIS_AWAY:
                    raise
                except Exception as exc:  # so is the comment
                    failed = failed or exc
                await self.upsert_status(quest, forge, evidence)
            else:
                try:
                    comment_url = await self.upsert_status(quest, forge, evidence)
                except REDIS_AWAY:
                    raise
                except Exception as exc:  # the check run is still worth writing: CI shows it
                    failed = exc
                await self.upsert_check_run(quest, forge, comment_url, evidence)
            if failed is not None:
                raise failed

    async def _batched(self, quest: Quest, forge: Forge, pr: int,
                       evidence: EvidenceBundle | None, also: Sequence[BatchPart]) -> None:
        """The quest's edits on its pull request as one GraphQL request
        (``bot.github.forge.batch``): the check run (updated, or superseded and followed),
        the title and description, the status comment, the draft marked ready at C, and
        ``also``'s (the inbox's entry). Each is planned under its own lease, as its REST
        write is, and the leases are held until the answers are recorded: a write is recorded
        only after GitHub answered it, and one GitHub refused is left to the REST path."""
        repository_id = await self.memory.quest(quest.id, "repo_node")
        async with contextlib.AsyncExitStack() as leases:
            batch = MutationBatch(forge.graphql)
            plans: list[Recording] = []

            async def held(name: str) -> None:
                await leases.enter_async_context(self.memory.quest_creating(quest.id, name))

            if repository_id:
                await held("check")
                if (plan := await self.check_runs.plan(quest, forge, evidence, batch,
                                                       repository_id)) is not None:
                    plans.append(plan)
            await held("pr_text")
            if (plan := await self._plan_pull_text(quest, evidence, batch)) is not None:
                plans.append(plan)
            await held("status")
            if (plan := await self._plan_status(quest, pr, evidence, batch)) is not None:
                plans.append(plan)
            if self._wants_pull(quest) and reviewable(quest):
                await held("ready")
                if (plan := await self._plan_ready(quest, forge, batch)) is not None:
                    plans.append(plan)
            for part in also:
                if (plan := await part.plan(quest, batch, leases)) is not None:
                    plans.append(plan)
            answers = await batch.send() if len(batch) else []  # nothing to send: records only
            first: Exception | None = None
            for plan in plans:  # every answer recorded, even if one record fails
                try:
                    await plan(answers)
                except REDIS_AWAY:
                    raise
                except Exception as exc:
                    first = first or exc
            if first is not None:
                raise first

    async def _plan_ready(self, quest: Quest, forge: Forge,
                          batch: MutationBatch) -> Recording | None:
        """``markPullRequestReadyForReview`` in ``batch`` for the draft questbot opened and
        has not marked yet (``ready`` lease held); refused, ``mark_ready`` after looks."""
        draft, node = await self.memory.quest_fields(quest.id, "pr_draft", "pr_node")
        if draft != "1" or not node:
            return None
        index = batch.add(batch_mutations.mark_ready(
            node, f"mark quest {quest.id}'s pull request ready for review"))

        async def record(answers: Sequence[Answer]) -> None:
            if isinstance(answers[index], GraphQLRefused):
                # GitHub may refuse to mark one that is not a draft: a person marked it ready
                # meanwhile, which is as good (as ``_mark_ready``); a draft still is owed
                number = await self.recorded_pull(quest)
                if number is None or (await forge.pull(number)).draft:
                    return
            log.info("marked the pull request of quest %s ready for review", quest.id)
            await self.memory.set_quest(quest.id, pr_draft=0)
        return record

    @staticmethod
    def _wants_pull(quest: Quest) -> bool:
        return (quest.route in (Route.AUTO_FIX, Route.RESEARCH_ONLY)
                and quest.state not in (State.SENSED, State.TRIAGED, State.CLOSED,
                                        State.ABANDONED))

    async def _status_text(self, quest: Quest, target: int, pr: int | None,
                           evidence: EvidenceBundle | None) -> tuple[str, str]:
        """The status comment's body on ``target`` and its digest. On a pull request it
        links the pull request's checks (``…/pull/7/checks``), where GitHub shows the
        newest ``questbot`` run of its head with its buttons: a link that stays right when
        a new run is made in the same request as the comment's edit
        (``bot.github.forge.batch``), which a run's own address cannot be."""
        settings = await self.ctx.settings.settings(quest.repo)
        policy = settings.to_policy()
        story = await read_story(self.ctx.journal, quest, policy, timeline=self.timeline)
        pull_url = await self.memory.quest(quest.id, "pr_url") if pr is not None else None
        view = status.StatusView(
            quest, story.timeline, evidence, pull_url,
            [could_not(f.effect_type, f.error) for f in
             (await failures(self.ctx.journal.client, quest.id))[-3:]],
            path=story.path, failed=story.failed,
            check_url=(f"{pull_url}/checks" if pull_url
                       else await self.memory.quest(quest.id, "check_url")),
            budget=(policy.budget_cents, policy.budget_tokens), policy=policy,
            last_words=await last_words(self.ctx.journal.client, quest))
        body = status.status_comment(view)
        return body, digest(target, body)

    async def upsert_status(self, quest: Quest, forge: Forge,
                            evidence: EvidenceBundle | None = None) -> str | None:
        """Post or edit the one status comment; returns its URL (``None``: nowhere to post).
        ``evidence`` is what ``sync_with`` looked up for this quest, shown in the comment."""
        pr = await self.recorded_pull(quest)
        target = pr if pr is not None else await self.source_issue(quest)
        if target is None:
            return None
        body, new_digest = await self._status_text(quest, target, pr, evidence)
        if await self.memory.quest(quest.id, "status_digest") == new_digest:
            return await self.memory.quest(quest.id, "status_url")
        async with self.memory.quest_creating(quest.id, "status"):
            return await self._write_status(quest, forge, target, body, new_digest)

    async def _plan_status(self, quest: Quest, pr: int, evidence: EvidenceBundle | None,
                           batch: MutationBatch) -> Recording | None:
        """``updateIssueComment`` in ``batch`` when the comment recorded on the pull request
        should read otherwise (``status`` lease held); a first comment, or one on another
        thread, takes the REST path."""
        comment_id, node, target, shown = await self.memory.quest_fields(
            quest.id, "status_comment", "status_node", "status_target", "status_digest")
        if comment_id is None or not node or target != str(pr):
            return None
        body, new_digest = await self._status_text(quest, pr, pr, evidence)
        if shown == new_digest:
            return None
        index = batch.add(batch_mutations.edit_comment(
            node, body, f"edit the status comment of quest {quest.id}"))

        async def record(answers: Sequence[Answer]) -> None:
            answer = answers[index]
            if isinstance(answer, GraphQLRefused):
                return  # gone (a person deleted it) or refused: the REST path after says
            comment = answer.get("issueComment") or {}
            await self.memory.set_quest(quest.id, status_digest=new_digest,
                                        status_url=str(comment.get("url") or ""))
        return record

    async def _write_status(self, quest: Quest, forge: Forge, target: int, body: str,
                            new_digest: str) -> str:
        if await self.memory.quest(quest.id, "status_digest") == new_digest:
            return await self.memory.quest(quest.id, "status_url") or ""  # written meanwhile
        comment_id = await self.memory.quest_int(quest.id, "status_comment")
        old_target = await self.memory.quest_int(quest.id, "status_target")
        marker = render.quest_marker(quest.id)
        if comment_id is not None and old_target != target:
            await forge.edit_comment(comment_id, f"{marker}\nquestbot's status for this quest "
                                     f"now lives on #{target}.\n")
            comment_id = None
        comment = await forge.edit_comment(comment_id, body) if comment_id else None
        if comment is None and await self.memory.quest(quest.id, STATUS_NONE_ON) == str(target):
            # a pull request this quest just opened: nothing to find; the record goes first,
            # so a path that dies after posting leaves the look-up below to the next one
            await self.memory.clear_quest_field(quest.id, STATUS_NONE_ON)
            comment = await forge.comment(target, body)
        if comment is None:  # none recorded here: one posted by a path that died unrecorded?
            found = await forge.find_comment(target, marker, author=self.ctx.bot_login)
            if found is not None and found.body != body:
                found = await forge.edit_comment(found.id, body)
            comment = found or await forge.comment(target, body)
        await self.memory.set_quest(quest.id, status_comment=comment.id, status_target=target,
                                    status_node=comment.node_id, status_digest=new_digest,
                                    status_url=comment.html_url)
        return comment.html_url

    async def upsert_check_run(self, quest: Quest, forge: Forge, details_url: str | None,
                               evidence: EvidenceBundle | None = None) -> None:
        """Create or update the ``questbot`` check run on the quest's head
        (``bot.views.check_run_writes``)."""
        await self.check_runs.upsert(quest, forge, details_url, evidence,
                                     on_pull=await self.recorded_pull(quest) is not None)
