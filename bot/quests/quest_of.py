"""Which quest an event is about: the one place that decides, and binds the quest to the
event's repository.

Every route from a webhook to a quest asks here — a comment, a review, a push to a quest's
branch or to the default branch, a close or a reopen, a check run's button, an inbox box, a
failing or passing check — and nowhere else looks a quest up by branch name or id. An event
reaches a quest only when it happened:

1. **in the quest's own repository** — the event's ``repository`` is the quest's ``repo``
   (case-insensitive, as GitHub names are). A branch named ``quest/<id>`` in another repository
   of the installation, and a quest id in a check run's ``external_id`` or an inbox box there,
   are that repository's business; an event that names a quest of another repository finds
   none;
2. **on the quest's recorded pull request** — the one questbot opened and recorded for the
   quest (``ForgeMemory.remember_pull`` and the quest's own ``pr`` field), never any pull
   request whose branch has the quest's name. A pull request whose head is in another
   repository (a fork: ``head.repo.full_name`` is not the base's) never counts, whatever its
   branch is called. Reviews, closes and reopens count only on the quest's current pull
   request (``Quest.branch``'s); a comment also on an earlier one questbot recorded for it (a
   quest that starts again after a rollback has a fresh pull request, and people still talk on
   the old one);
3. **from someone with the permission the action needs there** — ``may_act``: write access to
   the quest's repository, or being one of its configured reviewers, for every decision, close
   and reopen included; asked of the quest's repository, which by then is the event's. A push
   needs no further check: GitHub lets only those with write access (people, Apps, deploy
   keys a maintainer added) push a branch of the repository, and steps 1 and 2 rule out every
   other repository's branches.

What finds no quest is ignored, or answered once by the caller where a person would expect an
answer (a command on a pull request that is no quest's own is told where the quest lives, when
it lives in this repository).

When the record of a pull request is lost (a Redis failover drops the last writes), GitHub
names the pull request's branch and the quest's own record must agree: the same repository, not
a fork, and the quest's recorded pull request is this one. Then the record is written again.
When it was never written — GitHub made the pull request and questbot did not hear the answer
(a timeout), and a person comments before the worker's retry records it — the pull request is
adopted only if it is questbot's own: opened by the App, open, from the quest's current branch
in the quest's own repository, and the quest has recorded none for that branch.

Which quest a failure is (``failure``): every report of one red run on one commit — its key is
the repository, the commit and the check suite — goes to the quest its first report chose: a
quest still ``sensed`` that waits for this very re-run (``waits_for``: a re-run on this commit
of a check it holds), else a watched quest that holds the check (the fix may have regressed), else a
closed one (a regression reopens it), else a new quest named by the key. GitHub does not say
whether a re-run's jobs join the failed run's check suite or get one of their own; the first
choice makes both come to the quest that waits for them (``docs/decisions.md``).
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from typing import Protocol

from bot.adapters import AdapterContext
from bot.core import Quest, State
from bot.core.states import LIVE
from bot.github.forge import Forges, Pull
from bot.journal import Indexes
from bot.journal.keys import failure_key
from bot.journal.memory import ForgeMemory
from bot.quests.branches import quest_of_branch
from bot.quests.permissions import Permissions
from bot.quests.policybook import ForeignQuest

log = logging.getLogger(__name__)

KEPT_S = 30 * 24 * 3600
"""How long a failure's choice of quest is kept: GitHub re-runs a workflow up to 30 days after
its first run, and a re-run reports the same failure again."""


def same_repo(one: str, other: str) -> bool:
    """GitHub's names are case-insensitive: ``Octo/Sample`` is ``octo/sample``."""
    return one.lower() == other.lower()




def failure_quest_id(repo: str, sha: str, group: str) -> str:
    """The id of a failure's own quest: derived from what every report of it shares, so two
    workers handling two of them at once name the same quest; branch-safe."""
    digest = hashlib.sha256(f"{repo.lower()}:{sha}:{group}".encode()).hexdigest()
    return "q" + digest[:10]


class Reported(Protocol):
    """What the one place needs of a failing or passing check (``bot.failures.signals``'
    ``Failure`` and ``Passed``): where it ran, on which commit, in which run of checks."""

    @property
    def repo(self) -> str: ...
    @property
    def fingerprint(self) -> str: ...
    @property
    def sha(self) -> str: ...
    @property
    def group(self) -> str: ...


def group_of(f: Reported) -> str:
    return f.group or f.fingerprint


def waits_for(quest: Quest, f: Reported) -> bool:
    """``quest`` is ``sensed`` and waits for the re-run of a check it holds on ``f``'s commit:
    ``f`` is that re-run's report (or another report of the same re-run), whichever check suite
    GitHub put it in."""
    rerun = quest.rerun
    return (quest.state is State.SENSED and rerun is not None and rerun.result is None
            and rerun.sha == f.sha and quest.holds(f.fingerprint))


@dataclass(frozen=True, slots=True)
class Thread:
    """What a comment's thread is: the quest it belongs to, or none — and then, for a pull
    request named like a quest of this repository that is not the quest's own (a fork's),
    the quest's own pull request, to tell the person where to go."""

    quest: Quest | None
    home: int | None = None


class QuestOf:
    """The one place that finds the quest of an event (the module's docstring says how)."""

    def __init__(self, ctx: AdapterContext, forges: Forges, memory: ForgeMemory,
                 indexes: Indexes, permissions: Permissions) -> None:
        self.ctx = ctx
        self.forges = forges
        self.memory = memory
        self.indexes = indexes
        self.permissions = permissions

    async def _quest(self, quest_id: str) -> Quest | None:
        return (await self.ctx.journal.snapshot(quest_id))[1]

    async def _here(self, quest_id: str | None, repo: str) -> Quest | None:
        """The quest ``quest_id`` if it is a quest of ``repo``."""
        if not quest_id:
            return None
        quest = await self._quest(quest_id)
        if quest is None or not same_repo(quest.repo, repo):
            if quest is not None:
                log.info("%s names quest %s of %s: not this repository's, ignored", repo,
                         quest_id, quest.repo)
            return None
        return quest

    async def may_act(self, repo: str, login: str) -> bool:
        """Whether ``login`` may steer quests of ``repo``: write access there, or one of the
        reviewers its ``.github/questbot.yml`` names. Callers pass the quest's repository."""
        forge = await self.forges.for_repo(repo)
        settings = await self.ctx.settings.settings(repo)
        return await self.permissions.may_act(forge, login, settings.reviewers)

    # -- pull requests -------------------------------------------------------------------------

    async def pull(self, repo: str, number: int, *, head_repo: str,
                   branch: str) -> Quest | None:
        """The quest whose current pull request ``repo#number`` is, from a webhook that names
        the pull request's head (``head.repo.full_name``, ``head.ref``): what its reviews,
        closing and reopening act on."""
        if not same_repo(head_repo, repo):
            return None  # a fork's head never counts
        quest_id = await self.memory.quest_of_pull(repo, number)
        if quest_id is None:
            return await self._recover(repo, number, head_repo, branch)
        quest = await self._here(quest_id, repo)
        if (quest is None or branch != quest.branch
                or await self.memory.quest_pull(quest.id, quest.branch) != number):
            return None  # an earlier branch's pull request, merged: not its home now
        return quest

    async def thread(self, repo: str, number: int, *, is_pull_request: bool) -> Thread:
        """The quest a comment on issue or pull request ``repo#number`` is about."""
        if not is_pull_request:
            return Thread(await self.issue(repo, number))
        quest = await self._here(await self.memory.quest_of_pull(repo, number), repo)
        if quest is not None:
            return Thread(quest)  # questbot's record: its pull request, now or earlier
        pull = await (await self.forges.for_repo(repo)).pull(number)  # the record is lost?
        quest = (await self._recover(repo, number, pull.head_repo, pull.head_ref)
                 or await self._adopt(repo, pull))
        if quest is not None:
            return Thread(quest)
        named = await self._here(quest_of_branch(pull.head_ref), repo)
        home = await self.memory.quest_pull(named.id, named.branch) if named else None
        return Thread(None, home if home != number else None)

    async def _recover(self, repo: str, number: int, head_repo: str,
                       branch: str) -> Quest | None:
        """The quest of ``repo#number`` when the repository's record of it is lost: the
        branch names a quest of this repository, the head is no fork's, and the quest's own
        record says this is its pull request. The repository's record is written again."""
        if not same_repo(head_repo, repo):
            return None
        quest = await self._here(quest_of_branch(branch), repo)
        if (quest is None or branch != quest.branch
                or await self.memory.quest_pull(quest.id, quest.branch) != number):
            return None
        log.info("%s#%s is quest %s's pull request by its own record; recording it again",
                 repo, number, quest.id)
        await self.memory.remember_pull(repo, number, quest.id)
        return quest

    async def _adopt(self, repo: str, pull: Pull) -> Quest | None:
        """The quest of a pull request questbot opened and has not recorded yet: GitHub made
        it, and the answer to ``pulls/create`` was lost (a timeout) — the worker's retry finds
        and records it later, and a person may act on it first. Only questbot's own pull
        request is taken: opened by the App, open, its head the quest's current branch in the
        quest's own repository (no fork), and the quest has recorded none for that branch."""
        if (not same_repo(pull.head_repo, repo) or pull.state != "open"
                or pull.author.lower() != self.ctx.bot_login.lower()):
            return None
        quest = await self._here(quest_of_branch(pull.head_ref), repo)
        if (quest is None or quest.state not in LIVE or pull.head_ref != quest.branch
                or await self.memory.quest_pull(quest.id, quest.branch) is not None):
            return None
        log.info("%s#%s is quest %s's pull request, opened by questbot and not recorded yet; "
                 "recording it", repo, pull.number, quest.id)
        before, url = await self.memory.quest_fields(quest.id, "pr", "pr_url")
        earlier: dict[str, str | int] = (
            {"earlier_pr": before, "earlier_pr_url": url or ""} if before is not None else {})
        await self.memory.record_pull(repo, quest.id, pull.number, branch=pull.head_ref,
                                      url=pull.html_url, head=pull.head_sha, draft=pull.draft,
                                      node=pull.node_id, repo_node=pull.repo_node, **earlier)
        return quest

    # -- issues, pushes, buttons, boxes --------------------------------------------------------

    async def issue(self, repo: str, number: int) -> Quest | None:
        """The quest of issue ``repo#number``: the live one, else the latest that ended."""
        quests = await self._with(repo, f"issue:{number}")
        live = [q for q in quests if q.state in LIVE]
        candidates = live or quests
        return candidates[-1] if candidates else None

    async def live(self, repo: str) -> list[Quest]:
        """The live quests of ``repo``, by id: those a push to its default branch bears on."""
        found = []
        for qid in sorted(await self.indexes.live_quests(repo)):
            quest = await self._here(qid, repo)
            if quest is not None:
                found.append(quest)
        return found

    async def push(self, repo: str, branch: str) -> Quest | None:
        """The live quest whose current branch ``repo``'s ``branch`` is (a branch of an earlier
        start — merged, or reverted — is not its work now)."""
        quest = await self._here(quest_of_branch(branch), repo)
        if quest is None or quest.state not in LIVE or quest.branch != branch:
            return None
        return quest

    async def check_run(self, repo: str, external_id: str) -> Quest | None:
        """The quest of a press on questbot's check run in ``repo``: its ``external_id`` names
        the quest, and the quest must be ``repo``'s (a quest id is no secret)."""
        return await self._here(external_id, repo)

    async def box(self, repo: str, quest_id: str) -> Quest | None:
        """The quest a ticked box of ``repo``'s inbox names, if it is ``repo``'s."""
        return await self._here(quest_id, repo)

    # -- failures ------------------------------------------------------------------------------

    async def _with(self, repo: str, fingerprint: str) -> list[Quest]:
        """The quests of ``repo`` indexed under ``fingerprint``, by id."""
        found = []
        for qid in sorted(await self.indexes.quests_with_fingerprint(repo, fingerprint)):
            quest = await self._here(qid, repo)
            if quest is not None:
                found.append(quest)
        return found

    async def holding(self, repo: str, fingerprint: str) -> list[Quest]:
        """The quests of ``repo`` that hold ``fingerprint`` (their first signal's, or
        attached), by id."""
        return [q for q in await self._with(repo, fingerprint) if q.holds(fingerprint)]

    async def failure(self, f: Reported) -> str:
        """The quest this failure belongs to: the one chosen by its first report, or chosen
        now and kept for the others (``SET NX``: the first chooser wins a race)."""
        client = self.ctx.journal.client
        key = failure_key(f.repo, f.sha, group_of(f))
        chosen = await client.get(key)
        if chosen is None:
            mine = await self._choose(f)
            await client.set(key, mine, nx=True, ex=KEPT_S)
            chosen = await client.get(key)
            if chosen is None:  # gone between the two calls (flushed): ours stands
                return mine
        return chosen.decode() if isinstance(chosen, bytes) else str(chosen)

    async def _choose(self, f: Reported) -> str:
        quests = await self.holding(f.repo, f.fingerprint)
        waiting = [q for q in quests if waits_for(q, f)]
        if waiting:
            return waiting[-1].id
        for state in (State.WATCHING, State.CLOSED):
            landed = [q for q in quests if q.state is state]
            if landed:
                return landed[-1].id
        return failure_quest_id(f.repo, f.sha, group_of(f))

    async def followed(self, repo: str, quest_id: str) -> tuple[str, Quest | None]:
        """The quest (``None``: not made yet) and its snapshot, following a duplicate to the
        quest it joined; ``repo``'s only (a failure's quest is named by its repository)."""
        quest = await self._quest(quest_id)
        if quest is not None and not same_repo(quest.repo, repo):
            raise ForeignQuest(f"{repo}'s failure names quest {quest_id} of {quest.repo}")
        if quest is not None and quest.state is State.ABANDONED and quest.duplicate_of:
            joined = await self._here(quest.duplicate_of, repo)
            if joined is not None:
                return joined.id, joined
        return quest_id, quest
