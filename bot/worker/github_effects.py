"""Effect adapters for GitHub: each effect type the core asks of the forge, done once.

``github_adapters(ctx, forges)`` returns the adapters by effect type for the effect runner;
``GitHubEffects(ctx, forges).sync`` is the projection the worker calls after every applied
event. Every write goes through the ``Forge`` (``bot.github.forge``).

Idempotency by effect key. The runner may deliver an effect again after a crash, so each
adapter first looks for its own earlier write: the merge by the pull request's ``merged``
flag, the rebase by the head it recorded, the revert by its branch ``quest/<id>-revert-<rev>``
and the pull request from it (``Forge.find_pull``; ``bot.pulls.rollback``), a reply by the
comment id remembered under the effect key or else by the key's hidden marker among the
thread's comments, a review request by the record under its key or else by the reviewers
GitHub shows as requested; a reaction is idempotent on GitHub's side. Each create holds the
lease on its name (``bot.journal.memory``), so two deliveries of one effect never both create.
Outcome events get ids from ``outcome_id(effect, name)``, so reporting the same outcome twice
is absorbed by the journal.

Where the world moved under an effect — the head changed before ``land`` or ``rebase`` —
the adapter reports nothing: the push's own webhook becomes a ``human_revision`` and the quest
learns from that. The reason is logged and kept under ``note:<effect key>``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import gidgethub

from bot.adapters import AdapterContext, outcome_id
from bot.commands import replies as conversation
from bot.commands.claims import ClaimsShown
from bot.core import Effect, EffectType, Event, Quest
from bot.core.events import Landed, PatchPushed
from bot.core.quest import Outcome
from bot.core.states import CHECKPOINT_AT, State
from bot.github.forge import Forge, Forges, is_permanent, refused, status_of
from bot.inbox.issue import Inbox
from bot.journal import PermanentError
from bot.journal.memory import PAUSED_BY_CLOSE
from bot.pulls.landing import Lander
from bot.pulls.rollback import Reverter, RevertTree, default_revert_tree
from bot.runner import Adapter
from bot.views.projection import EvidenceLookup, Projection, reviewable
from bot.words import render
from bot.words import spend as spend_words

log = logging.getLogger(__name__)

ASKING = "?"
"""A review request's record while it is being made (``GitHubEffects._ask_reviewers``)."""


class GitHubEffects:
    def __init__(self, ctx: AdapterContext, forges: Forges, *, draft_pulls: bool = True,
                 revert: RevertTree = default_revert_tree,
                 evidence: EvidenceLookup | None = None) -> None:
        """``revert`` builds the rollback's tree (``bot.pulls.rollback``)."""
        self.ctx = ctx
        self.forges = forges
        self.projection = Projection(ctx, forges, draft_pulls=draft_pulls, evidence=evidence)
        self.memory = self.projection.memory
        self.inbox = Inbox(ctx, forges, self.memory)
        self.lander = Lander(ctx, self.memory, self._note)
        self.reverter = Reverter(ctx, forges, self.memory, self.lander, revert)
        self.claims = ClaimsShown(ctx, forges, self.memory, self.projection.recorded_pull)

    def adapters(self) -> dict[EffectType, Adapter]:
        return {
            EffectType.REQUEST_CHECKPOINT: self.request_checkpoint,
            EffectType.LAND: self.land,
            EffectType.REBASE: self.rebase,
            EffectType.ROLLBACK: self.reverter.rollback,
            EffectType.NOTIFY_INBOX: self.notify_inbox,
            EffectType.REPLY_COMMENT: self.reply_comment,
            EffectType.REACT: self.react,
            EffectType.RESTORE_PULL: self.restore_pull,
            EffectType.REQUEST_SPEND: self.request_spend,
            EffectType.SHOW_CLAIM: self.claims.show_claim,
        }

    async def sync(self, quest: Quest) -> None:
        """After every applied event: status comment, check run and inbox in line."""
        await self.projection.sync(quest, also=[self.inbox])
        await self.inbox.sync_quest(quest)  # what the batch left: a first inbox, a refusal

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
        # one request for the views (the draft marked ready at C among them), then what it left
        await self.projection.sync_with(quest, forge, also=[self.inbox])
        if number is not None and reviewable(quest):  # asking at C: the draft is ready now
            await self.projection.mark_ready(quest, forge)
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
        """Merge at the approved head, as the repository allows (``bot.pulls.landing``)."""
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
                                 "then /resume the quest to land it")
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
        (``bot.commands.replies.reply``) names its thread and carries its whole ``body``.
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
        (``bot.words.spend``). The check run's buttons come with the projection."""
        quest = await self.ctx.quest(effect.quest_id)
        forge = await self.forges.for_repo(quest.repo)
        await self.projection.sync_with(quest, forge, also=[self.inbox])
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
        """A reaction to a comment (``bot.commands.replies.reaction``); GitHub answers a
        repeat with the reaction it has, so a redelivery changes nothing."""
        payload = effect.payload
        forge = await self.forges.for_repo(str(payload["repo"]))
        await forge.react(int(payload["comment_id"]), str(payload["content"]))
        return None

    async def restore_pull(self, effect: Effect) -> Sequence[Event] | None:
        """Open the quest's pull request again after a close by someone who may not pause the
        quest, or close it again after such a reopen (``bot.pulls.intake``) — as long as the
        quest's pause by a close is as that close or reopen found it: none (a maintainer's close
        may have paused it since), or this pull request's, still parked (a maintainer may have
        resumed it since). Doing it twice changes nothing."""
        payload = effect.payload
        repo, number, state = str(payload["repo"]), int(payload["number"]), str(payload["state"])
        quest = await self.ctx.quest(str(payload["quest"]))
        paused = (quest.state is State.PARKED
                  and await self.memory.quest(quest.id, PAUSED_BY_CLOSE) == str(number))
        if paused != (state == "closed"):
            log.info("not setting %s#%s %s: quest %s moved since (%s)", repo, number, state,
                     quest.id, quest.state.value)
            return None
        forge = await self.forges.for_repo(repo)
        pull = await forge.pull(number)
        if not pull.merged and pull.state != state:
            await forge.set_pull_state(number, state)
        return None


def github_adapters(ctx: AdapterContext, forges: Forges, *, draft_pulls: bool = True,
                    revert: RevertTree = default_revert_tree) -> dict[EffectType, Adapter]:
    """The GitHub adapters by effect type. To share state with ``sync``, build one
    ``GitHubEffects`` and use its ``adapters()`` and ``sync`` instead."""
    return GitHubEffects(ctx, forges, draft_pulls=draft_pulls, revert=revert).adapters()
