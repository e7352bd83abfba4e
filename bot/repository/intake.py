"""What a repository's change does to its live quests.

* **A change questbot cannot work through parks the quest** (``PARKS``): the repository
  archived (GitHub answers every write 403), removed from the App's installation or the App
  uninstalled (404: the token no longer covers it), the App suspended (no token at all), the
  quest's branch deleted. Each live quest of the repository is paused by the repository —
  ``paused`` with ``repository`` set, so it parks ``repository_changed`` with a note saying
  what happened and what sets it right, and the inbox is told — rather than left to fail its
  next effect. Whatever was already queued fails for good at once (GitHub's refusal is
  permanent, ``bot.github.forge.refusals``), so nothing is retried for ever.
* **The change that undoes it resumes what it parked** (``UNDOES``): unarchived, the
  repository added to the App again (``installation_repositories`` ``added``, or a new
  installation), unsuspended. Only a quest this room parked for that very change resumes
  (``PARKED_BY_REPOSITORY``); a quest a person paused stays paused. Its pull request is told
  what happened and that it goes on: while GitHub took no writes, nothing could be said there.
* **Removed or uninstalled, questbot forgets the installation** of the repository, so what
  it would still ask there fails at once as ``NotInstalled``, and the next webhook from a
  repository added again teaches it anew.
* **Renamed or transferred:** GitHub keeps the repository's id, answers its old name with a
  redirect and sends the new name in every later webhook. The quest follows the repository
  by id (``bot.repository.names``, before any router reads the delivery): nothing parks, and
  questbot asks GitHub under the new name from then on.
* **Deleted outright:** GitHub sends ``repository`` ``deleted`` and
  ``installation_repositories`` ``removed``, in either order, and answers 404 from then on.
  Each live quest parks with a note saying so — read through ``python -m bot status``,
  since the pull request, the issue and the inbox went with the repository — and questbot
  forgets the installation, so every write still owed for it (an effect, a view) fails at
  once for good instead of being retried. A quest the removal parked first keeps that note;
  it is marked as parked by the deletion either way. It waits while GitHub lets the
  repository be restored (``bot.repository.restorable``): the repository given back to the
  App under its old id takes it up again — or found back by the worker's own look, on an
  installation on all repositories, which hands this intake the same ``added``; one made
  since under the name takes up nothing; after the window the worker abandons it with the
  reason.
* Made private, or its default branch renamed: nothing to park. GitHub retargets open pull
  requests to the renamed branch, and the worker records the new default branch from every
  webhook (``bot.intake.intake``).
"""

from __future__ import annotations

import logging

from bot.adapters import AdapterContext
from bot.commands import replies as conversation
from bot.core import InvalidTransition, ParkReason, State
from bot.core.events import Paused, Resumed
from bot.core.states import ACTIVE
from bot.github.forge import Forges
from bot.journal.memory import PARKED_BY_REPOSITORY, ForgeMemory
from bot.quests.desk import Desk
from bot.quests.quest_of import QuestOf
from bot.repository import restorable
from bot.repository.signals import RepositoryChanged
from bot.words.repository import PARKS, UNDOES, Change, parked_note, restored_text, taken_up_text

log = logging.getLogger(__name__)


class RepositoryIntake:
    def __init__(self, ctx: AdapterContext, forges: Forges, memory: ForgeMemory,
                 quest_of: QuestOf) -> None:
        self.ctx = ctx
        self.forges = forges
        self.memory = memory
        self.quest_of = quest_of

    async def changed(self, c: RepositoryChanged, desk: Desk) -> None:
        repos = await self._repos(c)
        log.info("repositories %s: %s%s", ", ".join(repos) or "(none known)", c.change.value,
                 f" (was {c.old})" if c.old else "")
        if c.change in {Change.REMOVED, Change.UNINSTALLED, Change.DELETED}:
            for repo in repos:
                await self.forges.forget_installation(repo)
        if c.change in PARKS:
            for repo in repos:
                await self._park(c, repo, desk)
        elif c.change in UNDOES:
            for repo in repos:
                await self._resume(c, repo, desk)

    async def _repos(self, c: RepositoryChanged) -> list[str]:
        """The repositories the change is about: those it names, and — for the whole
        installation — every repository questbot has seen it cover (GitHub lists them only
        for an installation on selected repositories)."""
        named = {name.lower(): name for name in c.repos}
        if c.installation_id is not None and c.change in {
                Change.UNINSTALLED, Change.SUSPENDED, Change.UNSUSPENDED}:
            for name in await self.forges.repositories_of(c.installation_id):
                named.setdefault(name.lower(), name)
        return sorted(named.values())

    async def _park(self, c: RepositoryChanged, repo: str, desk: Desk) -> None:
        note = parked_note(c.change, repo, actor=c.actor, branch=c.branch)
        for quest in await self.quest_of.live(repo):
            if c.change is Change.BRANCH_DELETED and quest.branch != c.branch:
                continue
            if quest.state not in ACTIVE:
                if (c.change is Change.DELETED and quest.state is State.PARKED
                        and quest.park_reason is ParkReason.REPOSITORY_CHANGED):
                    # parked by the repository's removal from the App, which GitHub may send
                    # before the deletion: no longer undone by the App getting access again
                    await self.memory.set_quest_field(quest.id, PARKED_BY_REPOSITORY,
                                                      c.change.value)
                    await self._deleted(c, repo, quest.id)
                continue  # parked already (or handed to a person who paused it): it waits
            result = await desk.apply(Paused(
                id=f"{desk.delivery_id}:repository:{quest.id}", quest_id=quest.id,
                at=self.ctx.clock(), repository=note), repo)
            if not isinstance(result, InvalidTransition):
                await self.memory.set_quest_field(quest.id, PARKED_BY_REPOSITORY,
                                                  c.change.value)
                if c.change is Change.DELETED:
                    await self._deleted(c, repo, quest.id)

    async def _deleted(self, c: RepositoryChanged, repo: str, quest_id: str) -> None:
        """The quest waits for its repository to be restored, for as long as GitHub allows."""
        await restorable.note_deleted(self.memory.client, self.memory, quest_id,
                                      c.id_of(repo), self.ctx.clock(), c.installation_id)

    async def _resume(self, c: RepositoryChanged, repo: str, desk: Desk) -> None:
        undone = {change.value for change in UNDOES[c.change]}
        for quest in await self.quest_of.live(repo):
            if (quest.state is not State.PARKED
                    or quest.park_reason is not ParkReason.REPOSITORY_CHANGED):
                continue
            by = await self.memory.quest(quest.id, PARKED_BY_REPOSITORY)
            came_back = (c.change is Change.ADDED and by == Change.DELETED.value
                         and await restorable.restored(self.memory, quest.id, c.id_of(repo)))
            if by not in undone and not came_back:
                if by == Change.DELETED.value and c.change is Change.ADDED:
                    log.info("%s given to the App is not the repository deleted under quest "
                             "%s (another id): the quest waits", repo, quest.id)
                continue
            cause = f"{desk.delivery_id}:repository:{quest.id}"
            result = await desk.apply(Resumed(id=cause, quest_id=quest.id,
                                              at=self.ctx.clock()), repo)
            if isinstance(result, InvalidTransition):
                continue
            await self.memory.set_quest_field(quest.id, PARKED_BY_REPOSITORY, "")
            if came_back:
                await restorable.let_go(self.memory.client, quest.id)
            said = (restored_text(repo, c.actor) if came_back
                    else taken_up_text(c.change, repo, c.actor))
            number = await self.memory.quest_pull(quest.id, quest.branch)
            if number is not None:
                await desk.say(repo, number, [conversation.reply(
                    repo, number, f"repository-{cause}", said)])
