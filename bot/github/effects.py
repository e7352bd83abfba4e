"""Effect adapters for GitHub: each effect type the core asks of the forge, done once.

``github_adapters(ctx, forges)`` returns the adapters by effect type for the effect runner;
``GitHubEffects(ctx, forges).sync`` is the projection the worker calls after every applied
event. Every write goes through the ``Forge`` (``bot.github.forge``).

Idempotency by effect key. The runner may deliver an effect again after a crash, so each
adapter first looks for its own earlier write: the merge by the pull request's ``merged``
flag, the rebase by the head it recorded, the revert by its branch ``quest/<id>-revert-<rev>``
and the pull request from it (``Forge.find_pull``), a reply by the comment id remembered under
the effect key or else by the key's hidden marker among the thread's comments, a review
request by the record under its key or else by the reviewers GitHub shows as requested; a
reaction is idempotent on GitHub's side. Each create holds the lease on its name
(``bot.journal.memory``), so two deliveries of one effect never both create. Outcome events
get ids from ``outcome_id(effect, name)``, so reporting the same outcome twice is absorbed by
the journal.

Where the world moved under an effect — the head changed before ``land`` or ``rebase`` —
the adapter reports nothing: the push's own webhook becomes a ``human_revision`` and the quest
learns from that. The reason is logged and kept under ``note:<effect key>``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence

import gidgethub

from bot.adapters import AdapterContext, outcome_id
from bot.core import Effect, EffectType, Event, Quest
from bot.core.events import Landed, PatchPushed, RollbackConfirmed
from bot.core.quest import Outcome
from bot.core.states import CHECKPOINT_AT
from bot.github import conversation, render, spend_words
from bot.github.forge import Forge, Forges, is_permanent, refused, status_of
from bot.github.inbox import Inbox
from bot.github.landing import Lander
from bot.github.projection import (
    EvidenceLookup,
    Projection,
    open_pull,
    quest_branch,
    reviewable,
)
from bot.github.revert import revert_tree
from bot.journal import Adapter, PermanentError

log = logging.getLogger(__name__)

ASKING = "?"
"""A review request's record while it is being made (``GitHubEffects._ask_reviewers``)."""

RevertTree = Callable[[Forge, Quest, str], Awaitable[str]]
"""``(forge, quest, merge_sha) → tree sha`` of the merge with the quest's changes undone."""


async def default_revert_tree(forge: Forge, quest: Quest, merge_sha: str) -> str:
    approval = quest.c_approval
    base, head = (approval.base, approval.head) if approval else (quest.base, quest.head)
    if base is None or head is None:
        raise PermanentError(f"quest {quest.id} has no approved base and head to revert; "
                             f"revert {merge_sha[:12]} by hand on {quest.repo}")
    return await revert_tree(forge.git, base=base, head=head, merge_sha=merge_sha)


class GitHubEffects:
    def __init__(self, ctx: AdapterContext, forges: Forges, *, draft_pulls: bool = True,
                 revert: RevertTree = default_revert_tree,
                 evidence: EvidenceLookup | None = None) -> None:
        """``revert`` builds the rollback's tree (``bot.github.revert`` explains how)."""
        self.ctx = ctx
        self.forges = forges
        self.projection = Projection(ctx, forges, draft_pulls=draft_pulls, evidence=evidence)
        self.memory = self.projection.memory
        self.inbox = Inbox(ctx, forges, self.memory)
        self.revert = revert
        self.lander = Lander(ctx, self.memory, self._note)

    def adapters(self) -> dict[EffectType, Adapter]:
        return {
            EffectType.REQUEST_CHECKPOINT: self.request_checkpoint,
            EffectType.LAND: self.land,
            EffectType.REBASE: self.rebase,
            EffectType.ROLLBACK: self.rollback,
            EffectType.NOTIFY_INBOX: self.notify_inbox,
            EffectType.REPLY_COMMENT: self.reply_comment,
            EffectType.REACT: self.react,
            EffectType.REQUEST_SPEND: self.request_spend,
        }

    async def sync(self, quest: Quest) -> None:
        """After every applied event: status comment, check run and inbox in line."""
        await self.projection.sync(quest)
        await self.inbox.sync_quest(quest)

    async def _note(self, effect: Effect, why: str) -> None:
        log.info("effect %s: %s", effect.key, why)
        await self.memory.set_quest_field(effect.quest_id, f"note:{effect.key}", why)

    async def _pr_number(self, effect: Effect) -> int:
        number = await self.projection.recorded_pull(await self.ctx.quest(effect.quest_id))
        if number is None:
            raise PermanentError(f"quest {effect.quest_id} has no pull request recorded, so "
                                 f"{effect.type.value} has nothing to act on; /kill the quest "
                                 "or push to its branch to open one")
        return number

    # -- request_checkpoint ----------------------------------------------------------------

    async def request_checkpoint(self, effect: Effect) -> Sequence[Event] | None:
        quest = await self.ctx.quest(effect.quest_id)
        forge = await self.forges.for_repo(quest.repo)
        number = await self.projection.ensure_pull(quest, forge)
        if number is not None and reviewable(quest):  # asking at C: the draft is ready now
            await self.projection.mark_ready(quest, forge)
        await self.projection.sync_with(quest, forge)
        await self.inbox.sync_quest(quest)
        still_open = (CHECKPOINT_AT.get(quest.state) is not None
                      and CHECKPOINT_AT[quest.state].value == effect.payload.get("checkpoint")
                      and quest.revision == effect.revision)
        if not (effect.payload.get("blocking") and still_open and number is not None):
            return None
        done_field = f"reviews:{effect.key}"
        if (await self.memory.quest(quest.id, done_field) or ASKING) != ASKING:
            return None
        async with self.memory.quest_creating(quest.id, done_field):
            await self._ask_reviewers(quest, forge, number, done_field)
        return None

    async def _ask_reviewers(self, quest: Quest, forge: Forge, number: int,
                             done_field: str) -> None:
        """Ask the configured reviewers once per effect. The field is ``ASKING`` from just
        before the request until it is recorded: finding it so, a delivery knows an earlier
        one may have asked and died, and leaves out whoever GitHub shows as requested
        already. (One who reviewed in the seconds between would be asked again — GitHub's
        re-request; only the reviews listing could tell, and this window is that narrow.)
        Only then is the pull request read: its author is questbot, which opened it (GitHub
        answers 422 for a review request from the PR's author)."""
        state = await self.memory.quest(quest.id, done_field)
        if state is not None and state != ASKING:
            return  # asked by the path that held the lease before us
        pull = await forge.pull(number) if state == ASKING else None
        skip = {(quest.head_pusher or "").lower(), self.ctx.bot_login.lower()}
        if pull is not None:
            skip.add(pull.author.lower())
        settings = await self.ctx.settings.settings(quest.repo)
        reviewers = [r for r in settings.reviewers if r.lower() not in skip]
        asked = {r.lower() for r in pull.requested_reviewers} if pull is not None else set()
        ask = [r for r in reviewers if r.lower() not in asked]
        if ask:
            await self.memory.set_quest_field(quest.id, done_field, ASKING)
            await forge.request_reviewers(number, ask)
        await self.memory.set_quest_field(quest.id, done_field, ",".join(reviewers) or "-")

    # -- land ------------------------------------------------------------------------------

    async def land(self, effect: Effect) -> Sequence[Event] | None:
        """Merge at the approved head, as the repository allows (``bot.github.landing``)."""
        head = str(effect.payload["head"])
        quest = await self.ctx.quest(effect.quest_id)
        forge = await self.forges.for_repo(quest.repo)
        number = await self._pr_number(effect)
        pull = await forge.pull(number)
        if pull.merged:
            return self._landed(effect, pull.merge_commit_sha, pull.head_sha, head)
        if pull.state != "open":
            await self._note(effect, f"not merged: #{number} is closed; reopening it resumes "
                             "the quest")
            return None
        if pull.head_sha != head:
            await self._note(effect, f"not merged: #{number}'s head is {pull.head_sha[:12]}, "
                             f"the approval was for {head[:12]}")
            return None
        if pull.draft and not await self.projection.mark_ready(quest, forge, pull):
            raise PermanentError(f"#{number} of {quest.repo} is a draft again: someone "
                                 "converted it after questbot marked it ready for review, and "
                                 "GitHub does not merge a draft; mark it ready for review, "
                                 "then /pause and /resume the quest to land it")
        title = f"questbot: {quest.title or quest.id} (#{number})"[:250]
        try:
            return await self.lander.land(effect, quest, forge, pull, title)
        except gidgethub.BadRequest as exc:
            if status_of(exc) == 409:  # the head moved between our read and the merge
                await self._note(effect, f"not merged: #{number}'s head moved from "
                                 f"{head[:12]} ({exc})")
                return None
            if is_permanent(exc):
                raise refused(exc, f"merge #{number} of {quest.repo}", "check branch "
                              "protection and the App's contents: write permission") from exc
            raise

    def _landed(self, effect: Effect, merge_sha: str | None, merged_head: str,
                approved: str) -> list[Event]:
        if merge_sha is None or merged_head != approved:
            raise PermanentError(f"pull request of quest {effect.quest_id} was merged at "
                                 f"{merged_head[:12]}, not the approved {approved[:12]}; "
                                 "questbot did not merge it — check the merge, then /kill or "
                                 "let the watch judge it")
        return [Landed(id=outcome_id(effect, "landed"), quest_id=effect.quest_id,
                       at=self.ctx.clock(), merge_sha=merge_sha)]

    # -- rebase ----------------------------------------------------------------------------

    async def rebase(self, effect: Effect) -> Sequence[Event] | None:
        expected = str(effect.payload["head"])
        quest = await self.ctx.quest(effect.quest_id)
        forge = await self.forges.for_repo(quest.repo)
        number = await self._pr_number(effect)
        done_field = f"rebased:{effect.key}"
        done = await self.memory.quest(quest.id, done_field)
        if done is None:
            current = False
            try:
                await forge.update_branch(number, expected)
            except gidgethub.BadRequest as exc:
                text = str(exc).lower()
                if status_of(exc) == 422 and "expected_head_sha" in text:
                    await self._note(effect, f"not rebased: #{number}'s head moved from "
                                     f"{expected[:12]} ({exc})")
                    return None
                # "There are no new commits on the base branch.": the head holds the base
                # already (an earlier delivery's update, or a person's merge)
                current = status_of(exc) == 422 and "no new commits" in text
                if not current and is_permanent(exc):
                    raise refused(exc, f"update #{number} of {quest.repo} with its base",
                                  f"resolve the conflict by pushing to {quest.branch}"
                                  "; questbot proves the new head") from exc
                if not current:
                    raise
            pull = await forge.pull(number)
            if pull.head_sha == expected and not current:  # GitHub updates asynchronously
                raise RuntimeError(f"#{number} was accepted for update but its head is still "
                                   f"{expected[:12]}; trying again shortly")
            done = pull.head_sha
            await self.memory.set_quest_field(quest.id, done_field, done)
        return [PatchPushed(id=outcome_id(effect, "patch_pushed"), quest_id=quest.id,
                            at=self.ctx.clock(), head=done, pusher=self.ctx.bot_login)]

    # -- rollback --------------------------------------------------------------------------

    async def rollback(self, effect: Effect) -> Sequence[Event] | None:
        """Revert the landed merge through a pull request of questbot's own, merged like any
        other — at the head questbot made (``revert_head:<key>``), so a push to the revert
        branch is never merged unseen."""
        merge_sha = effect.payload.get("merge_sha")
        quest = await self.ctx.quest(effect.quest_id)
        if not merge_sha:
            raise PermanentError(f"quest {quest.id} has no merge to roll back")
        forge = await self.forges.for_repo(quest.repo)
        pr_field = f"revert:{effect.key}"
        number = await self.memory.quest_int(quest.id, pr_field)
        if number is None:
            async with self.memory.quest_creating(quest.id, pr_field):
                number = await self._revert_pull(effect, quest, forge, merge_sha, pr_field)
        pull = await forge.pull(number)
        if not pull.merged:
            head = await self.memory.quest(quest.id, f"revert_head:{effect.key}")
            if head is None:  # recorded before heads were: the head it was opened with
                head = pull.head_sha
                await self.memory.set_quest_field(quest.id, f"revert_head:{effect.key}", head)
            await self._merge_revert(quest, forge, number, pull.head_sha, head)
            pull = await forge.pull(number)
        if pull.merge_commit_sha is None:
            raise RuntimeError(f"revert #{number} merged but GitHub has not said its sha yet")
        return [RollbackConfirmed(id=outcome_id(effect, "rollback_confirmed"),
                                  quest_id=quest.id, at=self.ctx.clock(),
                                  revert_sha=pull.merge_commit_sha)]

    async def _merge_revert(self, quest: Quest, forge: Forge, number: int, now: str,
                            head: str) -> None:
        def moved(to: str) -> PermanentError:
            return PermanentError(
                f"revert #{number} of {quest.repo} moved to {to}, away from the revert questbot "
                f"made ({head[:12]}): someone pushed to its branch. Review it and merge it by "
                "hand; the quest stays rolled back until then")

        if now != head:
            raise moved(now[:12])
        try:
            await forge.merge(number, head, f"Revert questbot quest {quest.id}",
                              await self.lander.method(quest, forge))
        except gidgethub.BadRequest as exc:
            if status_of(exc) == 409:
                raise moved("a new head while it was merged") from exc
            if status_of(exc) == 405 and (await forge.pull(number)).merged:
                return  # merged meanwhile by another delivery
            if is_permanent(exc) or status_of(exc) == 405:
                raise refused(exc, f"merge revert #{number} of {quest.repo} at {head[:12]}",
                              "resolve what GitHub shows on the pull request and merge it by "
                              "hand") from exc
            raise

    async def _revert_pull(self, effect: Effect, quest: Quest, forge: Forge, merge_sha: str,
                           pr_field: str) -> int:
        """The revert's pull request, made once: each step looks for what an earlier
        delivery left — the recorded number, then a pull request from the revert branch,
        then the branch itself — and does only what is missing. The revert commit is
        recorded as soon as it exists: it is the head the merge is pinned to."""
        number = await self.memory.quest_int(quest.id, pr_field)
        if number is not None:
            return number
        head_field = f"revert_head:{effect.key}"
        branch = f"{quest_branch(quest.id)}-revert-{effect.revision}"
        pull = await forge.find_pull(branch, author=self.ctx.bot_login)
        if pull is None:
            made = await forge.git.branch_head(branch)
            if made is None:
                tree = await self.revert(forge, quest, merge_sha)
                commit = await forge.git.create_commit(
                    tree=tree, parents=[merge_sha],
                    message=f"Revert {merge_sha[:12]}: questbot quest {quest.id} regressed")
                await self.memory.set_quest_field(quest.id, head_field, commit)
                made = await forge.git.ensure_branch(branch, commit)
            if await self.memory.quest(quest.id, head_field) is None:
                await self.memory.set_quest_field(quest.id, head_field, made)
            base = await self.memory.default_branch(quest.repo)
            pull = await open_pull(
                forge, head=branch, base=base, title=f"Revert questbot quest {quest.id}"[:200],
                body=f"{render.key_marker(effect.key)}\nA regression followed "
                f"{render.sha(merge_sha)}; this reverts it.\n", draft=False,
                author=self.ctx.bot_login)
        if pull is None:
            raise PermanentError(f"the revert branch {branch} has no commits beyond the base "
                                 f"of {quest.repo}; revert {merge_sha[:12]} by hand")
        await self.memory.set_quest_field(quest.id, pr_field, pull.number)
        return pull.number

    # -- messages to people ----------------------------------------------------------------

    async def notify_inbox(self, effect: Effect) -> Sequence[Event] | None:
        if effect.payload.get("rewrite"):  # a person changed the inbox (conversation.py)
            await self.inbox.refresh(str(effect.payload["repo"]), force=True)
            return None
        quest = await self.ctx.quest(effect.quest_id)
        reason = str(effect.payload.get("reason") or "")
        await self.inbox.note_reason(quest, reason)
        if quest.outcome is Outcome.FLAKY:
            await self.inbox.record_flaky(quest)
        await self.inbox.refresh(quest.repo)
        return None

    async def reply_comment(self, effect: Effect) -> Sequence[Event] | None:
        """A reply, posted once. The core's replies (``to``, ``message``) go on the quest's pull
        request, or its source issue before there is one; a conversation reply
        (``bot.github.conversation.reply``) names its thread and carries its whole ``body``.
        Before posting, the thread's comments are searched for the key's marker: a delivery
        that posted and then crashed before anything recorded it finds its reply there."""
        done_field = f"reply:{effect.key}"
        if await self.memory.quest(effect.quest_id, done_field):
            return None
        payload = effect.payload
        if "number" in payload:
            repo, target = str(payload["repo"]), int(payload["number"])
            marker = conversation.reply_marker(effect.key)
            body = conversation.reply_body(str(payload.get("body") or ""), effect.key)
        else:
            quest = await self.ctx.quest(effect.quest_id)
            found = (await self.projection.recorded_pull(quest)
                     or await self.projection.source_issue(quest))
            if found is None:
                raise PermanentError(f"quest {quest.id} has no pull request or source issue to "
                                     "reply on; the reply was: "
                                     f"{str(payload.get('message'))[:200]}")
            repo, target, marker = quest.repo, found, render.key_marker(effect.key)
            to = payload.get("to")
            body = render.reply(str(to) if to else None, str(payload.get("message") or ""),
                                effect.key)
        forge = await self.forges.for_repo(repo)
        async with self.memory.quest_creating(effect.quest_id, done_field):
            if await self.memory.quest(effect.quest_id, done_field):
                return None  # posted by the path that held the lease
            comment = (await forge.find_comment(target, marker, author=self.ctx.bot_login)
                       or await forge.comment(target, body))
            await self.memory.set_quest_field(effect.quest_id, done_field, comment.id)
        return None

    async def request_spend(self, effect: Effect) -> Sequence[Event] | None:
        """The spend request, once, on the quest's pull request (or its source issue before
        there is one): spent, budget, what approving buys, how to approve
        (``bot.github.spend_words``). The check run's buttons come with the projection."""
        quest = await self.ctx.quest(effect.quest_id)
        forge = await self.forges.for_repo(quest.repo)
        await self.projection.sync_with(quest, forge)
        await self.inbox.sync_quest(quest)
        if "spent_cents" not in effect.payload:
            return None  # a request of another kind: nothing of the budget's to say
        done_field = f"reply:{effect.key}"
        if await self.memory.quest(quest.id, done_field):
            return None
        target = (await self.projection.recorded_pull(quest)
                  or await self.projection.source_issue(quest))
        if target is None:
            raise PermanentError(f"quest {quest.id} has no pull request or source issue to "
                                 "ask for spend on; its status shows the request")
        marker = render.key_marker(effect.key)
        body = f"{marker}\n{spend_words.request_text(effect.payload)}\n"
        async with self.memory.quest_creating(quest.id, done_field):
            if await self.memory.quest(quest.id, done_field):
                return None
            comment = (await forge.find_comment(target, marker, author=self.ctx.bot_login)
                       or await forge.comment(target, body))
            await self.memory.set_quest_field(quest.id, done_field, comment.id)
        return None

    async def react(self, effect: Effect) -> Sequence[Event] | None:
        """A reaction to a comment (``bot.github.conversation.reaction``); GitHub answers a
        repeat with the reaction it has, so a redelivery changes nothing."""
        payload = effect.payload
        forge = await self.forges.for_repo(str(payload["repo"]))
        await forge.react(int(payload["comment_id"]), str(payload["content"]))
        return None


def github_adapters(ctx: AdapterContext, forges: Forges, *, draft_pulls: bool = True,
                    revert: RevertTree = default_revert_tree) -> dict[EffectType, Adapter]:
    """The GitHub adapters by effect type. To share state with ``sync``, build one
    ``GitHubEffects`` and use its ``adapters()`` and ``sync`` instead."""
    return GitHubEffects(ctx, forges, draft_pulls=draft_pulls, revert=revert).adapters()
