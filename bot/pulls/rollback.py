"""The ``rollback`` effect: revert a landed merge through a pull request of questbot's own.

The revert's tree is the merge with the quest's changes undone (``bot.github.revert``); its
commit goes on the branch ``quest/<id>-revert-<rev>``, a pull request from it is opened, and it
is merged like any other — as the repository allows (``Lander.method``) and pinned to the head
questbot made, so a push to the revert branch is never merged unseen. Made once: each step looks
for what an earlier delivery left (the recorded number, a pull request from the branch, the
branch itself) and the create holds the lease on its name (``bot.journal.memory``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import gidgethub

from bot.adapters import AdapterContext, outcome_id
from bot.core import Effect, Event, Quest
from bot.core.events import RollbackConfirmed
from bot.github.forge import Forge, Forges, is_permanent, refused, status_of
from bot.github.revert import revert_tree
from bot.journal import PermanentError
from bot.journal.memory import ForgeMemory
from bot.pulls.landing import Lander
from bot.views.projection import open_pull, quest_branch
from bot.words import render
from bot.words.pull_request import revert_body, revert_message, revert_title

RevertTree = Callable[[Forge, Quest, str], Awaitable[str]]
"""``(forge, quest, merge_sha) → tree sha`` of the merge with the quest's changes undone."""


async def default_revert_tree(forge: Forge, quest: Quest, merge_sha: str) -> str:
    approval = quest.approved  # what landed (a landed quest's snapshot does not move)
    base, head = (approval.base, approval.head) if approval else (quest.base, quest.head)
    if base is None or head is None:
        raise PermanentError(f"quest {quest.id} has no approved base and head to revert; "
                             f"revert {merge_sha[:12]} by hand on {quest.repo}")
    return await revert_tree(forge.git, base=base, head=head, merge_sha=merge_sha)


class Reverter:
    """Rolls a quest's landed merge back (``GitHubEffects`` hands it the ``rollback`` effect)."""

    def __init__(self, ctx: AdapterContext, forges: Forges, memory: ForgeMemory, lander: Lander,
                 revert_tree: RevertTree = default_revert_tree) -> None:
        """``revert_tree`` builds the rollback's tree (``bot.github.revert`` explains how)."""
        self.ctx = ctx
        self.forges = forges
        self.memory = memory
        self.lander = lander
        self.revert_tree = revert_tree

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
            await forge.merge(number, head, revert_title(quest),
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
                tree = await self.revert_tree(forge, quest, merge_sha)
                commit = await forge.git.create_commit(
                    tree=tree, parents=[merge_sha],
                    message=revert_message(quest, merge_sha))
                await self.memory.set_quest_field(quest.id, head_field, commit)
                made = await forge.git.ensure_branch(branch, commit)
            if await self.memory.quest(quest.id, head_field) is None:
                await self.memory.set_quest_field(quest.id, head_field, made)
            base = await self.memory.default_branch(quest.repo)
            pull = await open_pull(
                forge, head=branch, base=base, title=revert_title(quest),
                body=f"{render.key_marker(effect.key)}\n{revert_body(merge_sha)}", draft=False,
                author=self.ctx.bot_login)
        if pull is None:
            raise PermanentError(f"the revert branch {branch} has no commits beyond the base "
                                 f"of {quest.repo}; revert {merge_sha[:12]} by hand")
        await self.memory.set_quest_field(quest.id, pr_field, pull.number)
        return pull.number
