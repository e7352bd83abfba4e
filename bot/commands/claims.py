"""A claim shown as GitHub shows ownership: the one who ``/claim``s a review becomes the pull
request's assignee and its requested reviewer for that checkpoint, the other pending review
requests withdrawn; when the claim ends — a release, the owner's decision, a failed proof, the
base moving on, a kill — GitHub is put back as it was before the claim.

The core asks for it: every move that changes ``Quest.owner`` carries a ``show_claim`` effect
with the new owner (empty: none), after that move's own effects (``bot.core.lifecycle.step``).
A quest's effects are delivered one at a time, in order, so a claim's effect runs before the
effect that ends it.

Exactly once. Before its first write, the claim's effect records what the pull request showed
(its pending review requests, whether the owner was assigned or requested already) under the
quest's ``claim_shown`` field, keyed by the effect; a delivery that died half-way finds that
record and finishes the same writes from it instead of reading a pull request it has half
changed. Every write is one GitHub repeats harmlessly (assigning an assignee, withdrawing a
request that is not pending, requesting one that is), and the effect is marked done last. The
end of the claim reads the same record, undoes only what the claim did (an owner who was
assigned or requested before stays so), asks the withdrawn reviewers again — unless the review
is over (the owner approved C, or the quest ended) — and clears it.

What GitHub may refuse is said, not retried for ever: it silently leaves out an assignee
without push access (a reviewer named in ``.github/questbot.yml`` with read access only,
BEHAVIOUR §8), and refuses a review request from the pull request's author or someone who is
no collaborator (§3); the claim holds in questbot either way, and the note says why GitHub
does not show it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Sequence

from bot.adapters import AdapterContext
from bot.core import Effect, Event, Quest, State
from bot.errors import PermanentError
from bot.github.forge import Forge, Forges
from bot.journal.memory import ForgeMemory

log = logging.getLogger(__name__)

SHOWN = "claim_shown"
"""The quest's field holding what the pull request showed before the claim (JSON), while a
claim is shown; empty when none is."""

RecordedPull = Callable[[Quest], Awaitable[int | None]]

REVIEW_OVER = frozenset({State.LANDING, State.WATCHING, State.ROLLED_BACK, State.CLOSED,
                         State.ABANDONED})
"""Where the quest is when nobody's review is wanted any more (the owner approved C and it is
merging or merged, or the quest ended): the claim's end unassigns its owner but asks nobody
again."""


class ClaimsShown:
    """The ``show_claim`` adapter (``bot.worker.github_effects`` registers it)."""

    def __init__(self, ctx: AdapterContext, forges: Forges, memory: ForgeMemory,
                 recorded_pull: RecordedPull) -> None:
        self.ctx = ctx
        self.forges = forges
        self.memory = memory
        self.recorded_pull = recorded_pull

    async def show_claim(self, effect: Effect) -> Sequence[Event] | None:
        done_field = f"claim:{effect.key}"
        if await self.memory.quest(effect.quest_id, done_field):
            return None
        quest = await self.ctx.quest(effect.quest_id)
        number = await self.recorded_pull(quest)
        owner = str(effect.payload.get("owner") or "")
        async with self.memory.quest_creating(quest.id, done_field):
            if await self.memory.quest(quest.id, done_field):
                return None
            if number is not None:
                forge = await self.forges.for_repo(quest.repo)
                if owner:
                    await self._claim(quest, forge, number, owner, effect.key)
                else:
                    await self._unclaim(quest, forge)
            await self.memory.set_quest_field(quest.id, done_field, owner or "-")
        return None

    async def _shown(self, quest: Quest) -> dict[str, object] | None:
        raw = await self.memory.quest(quest.id, SHOWN)
        if not raw:
            return None
        try:
            found = json.loads(raw)
        except ValueError:
            return None
        return found if isinstance(found, dict) else None

    async def _claim(self, quest: Quest, forge: Forge, number: int, owner: str,
                     key: str) -> None:
        before = await self._shown(quest)
        if before is None or before.get("key") != key:  # the first delivery: look, then record
            pull = await forge.pull(number)
            mine = owner.lower()
            before = {
                "key": key, "owner": owner, "number": number, "author": pull.author,
                "assigned": any(a.lower() == mine for a in pull.assignees),
                "requested": any(r.lower() == mine for r in pull.requested_reviewers),
                "others": [r for r in pull.requested_reviewers if r.lower() != mine],
            }
            await self.memory.set_quest_field(quest.id, SHOWN, json.dumps(before))
        if not before["assigned"]:
            assignees = await forge.add_assignees(number, [owner])
            if owner.lower() not in {a.lower() for a in assignees}:
                await self._note(quest, f"GitHub did not assign {owner} to #{number}: only "
                                 "people with write access (or the author) can be assigned; "
                                 "the claim holds in questbot all the same")
        others = [str(r) for r in before["others"]]  # type: ignore[attr-defined]
        if others:
            await forge.remove_reviewers(number, others)
        if not before["requested"] and owner.lower() != str(before["author"]).lower():
            await self._ask(quest, forge, number, [owner])

    async def _unclaim(self, quest: Quest, forge: Forge) -> None:
        before = await self._shown(quest)
        if before is None:
            return  # nothing shown (no pull request then, or already put back)
        owner, number = str(before["owner"]), int(str(before["number"]))
        if not before["assigned"]:
            await forge.remove_assignees(number, [owner])
        if not before["requested"] and owner.lower() != str(before["author"]).lower():
            await forge.remove_reviewers(number, [owner])
        skip = {str(before["author"]).lower(), self.ctx.bot_login.lower()}
        again = [str(r) for r in before["others"]  # type: ignore[attr-defined]
                 if str(r).lower() not in skip]
        if again and quest.state not in REVIEW_OVER:
            await self._ask(quest, forge, number, again)
        await self.memory.set_quest_field(quest.id, SHOWN, "")

    async def _ask(self, quest: Quest, forge: Forge, number: int, logins: list[str]) -> None:
        """Request reviews; GitHub refusing one (no longer a collaborator) leaves a note and
        asks the others, one by one."""
        try:
            await forge.request_reviewers(number, logins)
        except PermanentError as exc:
            if len(logins) == 1:
                await self._note(quest, f"GitHub did not request a review of #{number} from "
                                 f"{logins[0]}: {exc}")
                return
            for login in logins:
                await self._ask(quest, forge, number, [login])

    async def _note(self, quest: Quest, why: str) -> None:
        log.info("quest %s: %s", quest.id, why)
        await self.memory.set_quest_field(quest.id, "note:claim", why)
