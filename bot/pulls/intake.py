"""Intake for what happens to a quest's pull request: reviews, closing, reopening, the merge.

``bot.pulls.signals`` reads the webhooks; here each becomes the core event it means, with
ids from the delivery (or the review), so a delivery handled twice is absorbed:

* **A GitHub review is a decision.** "Approve" at checkpoint C is ``/approve C``, bound to the
  commit the review is of: a review of an older commit does not approve the head, and the
  reviewer is told so. "Request changes" is ``/revise`` with the review's body, at the open
  checkpoint. A review decides only for someone who may decide by comment (write access, or
  a configured reviewer). While the quest is landing and GitHub asked for an approving review
  (``bot.pulls.landing``), an approval of the approved head tries the merge again: ``land``
  queued on the quest's own trail, keyed by the review.
* **Closing the pull request by hand pauses the quest**, and reopening it resumes it — only a
  pause this made (``PAUSED_BY_CLOSE``): a quest a person paused with ``/pause`` stays paused.
  questbot's own closings are not read. Pausing and resuming take what ``/pause`` and
  ``/resume`` take — write access or being a configured reviewer — though GitHub lets triage
  (and a pull request's author) close and reopen: a close by someone else leaves the quest
  going and questbot opens the pull request again, a reopen by someone else leaves it paused
  and questbot closes it again, each said once (``restore_pull``; ``docs/decisions.md``).

Every event here is about a pull request ``bot.quests.quest_of`` binds to a quest: the quest's
current, recorded pull request in its own repository, never a fork's or another repository's
pull request from a branch of the same name.
* **The merge is the landing** when it is the approved head and the quest is landing: GitHub's
  auto-merge or the merge queue merged it, or questbot did and the adapter reports it too —
  under the same id (``LANDING_KEY``), so one merge is one ``landed``. A base-branch push that
  is this merge is not a base change (``merged_here``).
"""

from __future__ import annotations

import logging

from bot.adapters import AdapterContext
from bot.commands import replies as conversation
from bot.core import (
    Checkpoint,
    Effect,
    EffectType,
    InvalidTransition,
    ParkReason,
    Quest,
    State,
    Verdict,
    effect_key,
)
from bot.core.events import BaseMoved, CheckpointDecided, HumanRevision, Landed, Paused, Resumed
from bot.core.rules.asks import land
from bot.core.states import ACTIVE, CHECKPOINT_AT, LIVE
from bot.github.forge import Forges
from bot.journal.memory import PAUSED_BY_CLOSE, ForgeMemory
from bot.pulls.landing import LANDING_KEY, LANDING_WAIT
from bot.pulls.signals import BasePush, PullClosed, PullReopened, QuestPush, ReviewSubmitted
from bot.quests.desk import Apply, Desk
from bot.quests.quest_of import QuestOf
from bot.words.commands import Command, CommandName

log = logging.getLogger(__name__)

LANDED = frozenset({State.WATCHING, State.ROLLED_BACK})
"""After landing the base no longer bears on the quest."""

QUIET = frozenset({State.LANDING, State.WATCHING, State.ROLLED_BACK})
"""States where an approval that decides nothing is ordinary GitHub, not worth a reply."""



def one_line(body: str, limit: int = 500) -> str:
    """A review's body as a ``/revise`` reason: one line, no HTML comment."""
    flat = " ".join(body.replace("<!--", "").split())[:limit].strip()
    return flat or "changes were requested in a GitHub review"


class PullIntake:
    def __init__(self, ctx: AdapterContext, forges: Forges, memory: ForgeMemory,
                 quest_of: QuestOf) -> None:
        self.ctx = ctx
        self.forges = forges
        self.memory = memory
        self.quest_of = quest_of

    async def _quest(self, e: PullClosed | PullReopened | ReviewSubmitted) -> Quest | None:
        """The live quest whose current pull request this is (``quest_of.pull``)."""
        quest = await self.quest_of.pull(e.repo, e.number, head_repo=e.head_repo,
                                         branch=e.branch)
        return quest if quest is not None and quest.state in LIVE else None

    # -- reviews -------------------------------------------------------------------------------

    async def review(self, r: ReviewSubmitted, desk: Desk) -> None:
        apply, say = desk.apply, desk.say
        quest = await self._quest(r)
        if quest is None:
            return
        cause = f"review-{r.review_id}"

        async def reply(body: str) -> None:
            await say(r.repo, r.number, [conversation.reply(r.repo, r.number, cause, body)])

        approve = r.state == "approved"
        command = (Command(name=CommandName.APPROVE, checkpoint=Checkpoint.C, line=1) if approve
                   else Command(name=CommandName.REVISE, reason=one_line(r.body), line=1))
        if not await self.quest_of.may_act(quest.repo, r.reviewer):
            if quest.state not in QUIET:
                await reply(conversation.review_no_permission_text(login=r.reviewer,
                                                                   command=command.name))
            return
        open_cp = CHECKPOINT_AT.get(quest.checkpoint_state)
        if approve and quest.state is State.LANDING:
            if not await self._land_again(quest, r, cause):
                landing = quest.approved.head if quest.approved else None
                await reply(conversation.stale_review_text(r.reviewer, r.commit_id,
                                                           landing or ""))
            return
        if approve and open_cp is not Checkpoint.C:
            if quest.state not in QUIET:
                await reply(conversation.review_not_at_c_text(r.reviewer, quest))
            return
        if approve and r.commit_id != quest.head:
            await reply(conversation.stale_review_text(r.reviewer, r.commit_id,
                                                       quest.head or ""))
            return
        event = CheckpointDecided(
            id=cause, quest_id=quest.id, at=self.ctx.clock(), actor=r.reviewer,
            checkpoint=Checkpoint.C if approve else (open_cp or Checkpoint.C),
            verdict=Verdict.APPROVE if approve else Verdict.REVISE,
            reason="" if approve else one_line(r.body))
        result = await apply(event, r.repo)
        if isinstance(result, InvalidTransition):
            await reply(conversation.refusal_text(command, result, quest, r.reviewer))

    async def _land_again(self, quest: Quest, r: ReviewSubmitted, cause: str) -> bool:
        """GitHub asked for this approval before it would merge: try the merge again, pinned
        to the approved head as ever (``land`` of the approval the quest holds). ``False``
        when the review is of another commit than the one landing (it approves nothing)."""
        approval = quest.approved
        if approval is None or approval.head != r.commit_id:
            return approval is None
        if await self.memory.quest(quest.id, LANDING_WAIT) != f"review:{approval.head}":
            return True  # GitHub's auto-merge, or the merge in flight, takes it from here
        _type, payload = land(quest)
        key = effect_key(quest.id, quest.revision, EffectType.LAND.value, cause, 0)
        effect = Effect(key=key, type=EffectType.LAND, quest_id=quest.id,
                        revision=quest.revision, event_id=cause, occurrence=0,
                        payload=payload)
        if await self.ctx.journal.enqueue(quest.id, [effect]):
            log.info("quest %s: @%s approved %s, merging it again", quest.id, r.reviewer,
                     approval.head[:12])
        return True

    # -- closing, reopening, merging -----------------------------------------------------------

    async def closed(self, c: PullClosed, desk: Desk) -> None:
        delivery_id, apply, say = desk.delivery_id, desk.apply, desk.say
        quest = await self._quest(c)
        if quest is None:
            return
        if c.merged:
            await self._merged(quest, c, apply)
            return
        if c.by_us:
            return
        cause = f"closed-{delivery_id}"
        if not await self.quest_of.may_act(quest.repo, c.actor):
            await say(c.repo, c.number, [
                conversation.restore_pull(c.repo, c.number, cause, "open", quest.id),
                conversation.reply(c.repo, c.number, cause,
                                   conversation.close_refused_text(c.actor, c.number))])
            return
        if quest.state not in ACTIVE:
            return
        result = await apply(Paused(id=cause, quest_id=quest.id, at=self.ctx.clock(),
                                    actor=c.actor, reason=f"#{c.number} was closed by "
                                    f"@{c.actor}"), c.repo)
        if isinstance(result, InvalidTransition):
            command = Command(name=CommandName.PAUSE, reason="closed", line=1)
            body = conversation.refusal_text(command, result, quest, c.actor)
        else:
            await self.memory.set_quest_field(quest.id, PAUSED_BY_CLOSE, c.number)
            body = conversation.closed_text(c.actor, c.number)
        await say(c.repo, c.number, [conversation.reply(c.repo, c.number, cause, body)])

    async def _merged(self, quest: Quest, c: PullClosed, apply: Apply) -> None:
        approval = quest.approved
        if (quest.state is not State.LANDING or approval is None or approval.head != c.head
                or not c.merge_sha):
            if quest.state is not State.WATCHING:
                log.warning("quest %s: #%s was merged at %s by @%s while the quest is %s: not "
                            "the approved landing", quest.id, c.number, c.head[:12], c.actor,
                            quest.state.value)
            return
        key = await self.memory.quest(quest.id, LANDING_KEY)
        event_id = f"{key}/landed" if key else f"merged-{c.repo}#{c.number}-{c.head}"
        await apply(Landed(id=event_id, quest_id=quest.id, at=self.ctx.clock(),
                           merge_sha=c.merge_sha), c.repo)

    async def reopened(self, o: PullReopened, desk: Desk) -> None:
        delivery_id, apply, say = desk.delivery_id, desk.apply, desk.say
        quest = await self._quest(o)
        if quest is None or o.by_us or quest.state is not State.PARKED:
            return
        if (quest.park_reason is not ParkReason.PAUSED
                or await self.memory.quest(quest.id, PAUSED_BY_CLOSE) != str(o.number)):
            return  # paused by a person's /pause, or parked for another reason: it stays
        cause = f"reopened-{delivery_id}"
        if not await self.quest_of.may_act(quest.repo, o.actor):
            await say(o.repo, o.number, [
                conversation.restore_pull(o.repo, o.number, cause, "closed", quest.id),
                conversation.reply(o.repo, o.number, cause,
                                   conversation.reopen_refused_text(o.actor, o.number))])
            return
        result = await apply(Resumed(id=cause, quest_id=quest.id, at=self.ctx.clock(),
                                     actor=o.actor), o.repo)
        if isinstance(result, InvalidTransition):
            body = conversation.refusal_text(Command(name=CommandName.RESUME, line=1), result,
                                             quest, o.actor)
        else:
            await self.memory.set_quest_field(quest.id, PAUSED_BY_CLOSE, "")
            body = conversation.reopened_text(o.actor, o.number)
        await say(o.repo, o.number, [conversation.reply(o.repo, o.number, cause, body)])

    async def quest_push(self, p: QuestPush, desk: Desk) -> None:
        """A person pushed to the quest's branch: their revision, from that head on."""
        if p.by_bot:
            return  # questbot's own patch, rebase or reproduction commit
        quest = await self.quest_of.push(p.repo, p.branch)
        if quest is None:
            return  # another repository's branch, a fork's, or an earlier start's
        await desk.apply(HumanRevision(id=f"{desk.delivery_id}:push", quest_id=quest.id,
                                       at=self.ctx.clock(), head=p.head, pusher=p.pusher,
                                       actor=p.pusher), p.repo)

    async def base_push(self, p: BasePush, desk: Desk) -> None:
        """The default branch moved: every live quest that has not landed works from there
        (and a push that changed the settings file has them read again)."""
        if p.touched_settings:
            forget = getattr(self.ctx.settings, "forget", None)
            if callable(forget):
                forget(p.repo)
        for quest in await self.quest_of.live(p.repo):
            if quest.base == p.after or quest.state in LANDED:
                continue  # after landing the base no longer bears on the quest
            if quest.state is State.LANDING and (p.pusher == self.ctx.bot_login
                                                 or await self.merged_here(quest)):
                continue  # the quest's own merge (questbot's, GitHub's or a person's)
            await desk.apply(BaseMoved(id=f"{desk.delivery_id}:base:{quest.id}",
                                       quest_id=quest.id, at=self.ctx.clock(), base=p.after),
                             p.repo)

    async def merged_here(self, quest: Quest) -> bool:
        """Whether the quest's pull request is merged: a push to the base branch while the
        quest lands is then that merge (GitHub's auto-merge or merge queue, or a person's),
        not the base moving under the quest."""
        number = await self.memory.quest_pull(quest.id, quest.branch)
        if number is None:
            return False
        forge = await self.forges.for_repo(quest.repo)
        return (await forge.pull(number)).merged
