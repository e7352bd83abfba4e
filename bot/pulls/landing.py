"""Landing a quest's pull request as its repository allows — always at the approved head.

Theory of operation
===================

1. **The method.** ``merge_method`` in ``.github/questbot.yml`` when it is set, else the first
   of merge, squash and rebase that the repository's settings allow (``allow_merge_commit``,
   ``allow_squash_merge``, ``allow_rebase_merge`` from ``repos/get``, kept ten minutes per
   repository by ``MergeMethods``). A method the settings choose and the repository forbids is
   never tried: the quest's pull request is told, in people's words, what was asked, what the
   repository allows and what to change (``MethodRefused``).
2. **The merge**: ``pulls/merge`` with ``sha`` = the approved head, so no other head can land.
3. **Why not.** GitHub's 405 names the rule in the way, and each has its way through:

   * *the method is not allowed* — the repository's settings changed since they were read:
     read them again and choose again, once;
   * *linear history* ("must not contain merge commits") — squash or rebase, if allowed;
   * *the merge queue* — ``enqueuePullRequest`` with ``expectedHeadOid`` = the approved head;
   * *required reviews or status checks* (branch protection or rulesets) —
     ``enablePullRequestAutoMerge`` with ``expectedHeadOid`` = the approved head and the
     method, so GitHub merges once the rules are met, and only that head. Where the
     repository does not allow auto-merge, a missing review is asked of a person (the
     configured reviewers, or anyone with write access) and the merge is tried again when an
     approving review arrives (``bot.pulls.intake``); a missing check is explained, with what
     to do;
   * anything else (a conflict) is a ``PermanentError`` saying to resolve it and land again.

4. **Waiting.** Enabled, enqueued or asked, the quest stays in ``landing``: the real merge is
   the ``pull_request`` ``closed`` webhook with ``merged: true`` at the approved head, which
   intake turns into ``landed`` with the id this effect would have reported
   (``LANDING_KEY``), so the two reports of one merge are one event.

Each message to people is one comment on the pull request, found again by its hidden marker
before it is posted, so a redelivered effect says nothing twice.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence

import gidgethub
from cachetools import TTLCache

from bot.adapters import AdapterContext, outcome_id
from bot.core import Effect, Event, Quest
from bot.core.events import Landed
from bot.errors import PermanentError
from bot.github.forge import Forge, Pull, RepoInfo, refused, status_of
from bot.github.forge.graphql import GraphQLRefused
from bot.journal.memory import ForgeMemory
from bot.settings.repository.schema import MergeMethod
from bot.words import render

log = logging.getLogger(__name__)

LANDING_KEY = "landing"
"""The quest field holding the key of the latest ``land`` effect: the merge's ``landed`` id."""
LANDING_WAIT = "landing_wait"
"""``<why>:<head>`` while the quest waits for GitHub or a person to merge: ``auto-merge``,
``queue``, ``review`` (asked of a person; an approving review lands it again) or ``checks``."""
METHOD_TTL = 600.0
_WORDS = {"merge": "merge commits", "squash": "squash merging", "rebase": "rebase merging"}

Note = Callable[[Effect, str], Awaitable[None]]


class MethodRefused(PermanentError):
    """The merge method questbot would use is one the repository does not allow."""


class MergeMethods:
    """Each repository's allowed merge methods, read from ``repos/get`` and kept a while: a
    repository's settings rarely change, and a refusal says when they did (``forget``)."""

    def __init__(self, ttl_s: float = METHOD_TTL) -> None:
        self._cache: TTLCache[str, RepoInfo] = TTLCache(maxsize=4096, ttl=ttl_s)

    async def info(self, forge: Forge) -> RepoInfo:
        key = forge.repo.lower()
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = await forge.repository()
        return found

    def forget(self, repo: str) -> None:
        self._cache.pop(repo.lower(), None)


def choose(chosen: MergeMethod | None, info: RepoInfo, repo: str, *,
           avoid: frozenset[str] = frozenset()) -> str:
    """The method to merge with; ``MethodRefused`` when the settings choose one the repository
    forbids (or that ``avoid`` rules out: linear history forbids merge commits)."""
    allowed = [m for m in info.merge_methods if m not in avoid]
    if chosen is None:
        if allowed:
            return allowed[0]
        raise MethodRefused(f"{repo} allows none of the merge methods its branch rules accept "
                            f"(it allows {_listed(info.merge_methods)}, and the branch requires "
                            "linear history): allow squash or rebase merging in the "
                            "repository's settings, then /resume the quest")
    if chosen.value in allowed:
        return chosen.value
    why = ("its default branch requires linear history" if chosen.value in avoid
           else f"it allows {_listed(info.merge_methods)}")
    raise MethodRefused(
        f"`.github/questbot.yml` sets `merge_method: {chosen.value}`, but {repo} does not "
        f"take {_WORDS[chosen.value]} ({why}). Set `merge_method` to one it takes, or remove "
        f"it to use what the repository allows — or allow {_WORDS[chosen.value]} in the "
        "repository's settings; then /resume the quest to land it.")


def _listed(methods: Sequence[str]) -> str:
    return ", ".join(_WORDS[m] for m in methods) or "no merge method"


def refusal_kind(message: str) -> str:
    """What a 405 from ``pulls/merge`` is about (BEHAVIOUR §5's messages)."""
    text = message.lower()
    if "not allowed on this repository" in text:
        return "method"
    if "must not contain merge commits" in text:
        return "linear"
    if "merge queue" in text:
        return "queue"
    if "approving review" in text or "review is required" in text:
        return "review"
    if "status check" in text or "rule violations" in text:
        return "checks"
    if "base branch was modified" in text:
        return "base"
    return "other"


class Lander:
    """The ``land`` effect: merge, or hand the merge to GitHub's rules, pinned to the head."""

    def __init__(self, ctx: AdapterContext, memory: ForgeMemory, note: Note,
                 methods: MergeMethods | None = None) -> None:
        self.ctx = ctx
        self.memory = memory
        self.note = note
        self.methods = methods or MergeMethods()

    async def method(self, quest: Quest, forge: Forge, *, fresh: bool = False,
                     avoid: frozenset[str] = frozenset()) -> str:
        if fresh:
            self.methods.forget(forge.repo)
        chosen = (await self.ctx.settings.settings(quest.repo)).merge_method
        try:
            return choose(chosen, await self.methods.info(forge), quest.repo, avoid=avoid)
        except MethodRefused:
            if fresh:
                raise
            return await self.method(quest, forge, fresh=True, avoid=avoid)

    async def land(self, effect: Effect, quest: Quest, forge: Forge, pull: Pull,
                   title: str) -> Sequence[Event] | None:
        """Merge ``pull`` (open, ready, at the approved head) or hand it to GitHub's rules."""
        head = pull.head_sha
        await self.memory.set_quest_field(quest.id, LANDING_KEY, effect.key)
        waiting = await self.memory.quest(quest.id, LANDING_WAIT)
        if pull.auto_merge is not None or waiting == f"queue:{head}":
            return await self._waiting(effect, quest, "auto-merge" if pull.auto_merge
                                       else "queue", head)
        avoid: frozenset[str] = frozenset()
        method = await self._method_or_say(effect, quest, forge, pull)
        for _ in range(3):  # a stale method, then linear history: at most two re-choices
            try:
                merge_sha = await forge.merge(pull.number, head, title, method)
            except gidgethub.BadRequest as exc:
                if status_of(exc) != 405:
                    raise
                kind = refusal_kind(str(exc))
                if kind in ("method", "linear"):
                    avoid |= {"merge"} if kind == "linear" else frozenset()
                    again = await self._method_or_say(effect, quest, forge, pull,
                                                      fresh=True, avoid=avoid)
                    if again != method:
                        method = again
                        continue
                    raise refused(exc, f"merge #{pull.number} of {quest.repo} with "
                                  f"{_WORDS[method]}", "check the repository's merge settings "
                                  "and branch rules, then /resume the quest") from exc
                if kind == "base":
                    raise RuntimeError(f"the base of #{pull.number} moved while it was merged "
                                       f"({exc}); trying again shortly") from exc
                return await self._by_the_rules(effect, quest, forge, pull, method, kind, exc)
            return [Landed(id=outcome_id(effect, "landed"), quest_id=quest.id,
                           at=self.ctx.clock(), merge_sha=merge_sha)]
        raise PermanentError(f"#{pull.number} of {quest.repo} refused every merge method")

    async def _method_or_say(self, effect: Effect, quest: Quest, forge: Forge, pull: Pull, *,
                             fresh: bool = False, avoid: frozenset[str] = frozenset()) -> str:
        try:
            return await self.method(quest, forge, fresh=fresh, avoid=avoid)
        except MethodRefused as exc:
            await self.say(effect, forge, pull.number, "method", str(exc))
            raise

    async def _by_the_rules(self, effect: Effect, quest: Quest, forge: Forge, pull: Pull,
                            method: str, kind: str,
                            exc: gidgethub.BadRequest) -> Sequence[Event] | None:
        """A 405 other than the method: the queue, GitHub's auto-merge, or a person."""
        head, number = pull.head_sha, pull.number
        if kind == "queue":
            await forge.graphql.enqueue(pull.node_id, head=head)
            await self.say(effect, forge, number, "queue",
                           f"The default branch of {quest.repo} takes changes through its merge "
                           f"queue: questbot added #{number} at {render.sha(head)} to it. "
                           "GitHub merges it there, at that head only; questbot watches from "
                           "the merge.")
            return await self._waiting(effect, quest, "queue", head)
        if kind == "other":
            again = await forge.pull(number)
            if again.merged and again.merge_commit_sha and again.head_sha == head:
                return [Landed(id=outcome_id(effect, "landed"), quest_id=quest.id,
                               at=self.ctx.clock(), merge_sha=again.merge_commit_sha)]
            if again.mergeable_state != "blocked":
                draft = " it is a draft: mark it ready for review;" if again.draft else ""
                raise refused(exc, f"merge #{number} of {quest.repo} at {head[:12]}",
                              f"it is not mergeable:{draft} resolve what GitHub shows on the "
                              "pull request, then /resume the quest to land "
                              "again") from exc
            kind = "checks"  # blocked by a rule GitHub did not name
        info = await self.methods.info(forge)
        why = (f"GitHub needs an approving review of #{number} by someone with write access "
               "before it can merge" if kind == "review" else
               f"GitHub's branch rules for {quest.repo} block merging #{number} until they are "
               f"met ({_quoted(str(exc))})")
        if info.auto_merge:
            try:
                await forge.graphql.enable_auto_merge(pull.node_id, head=head,
                                                      method=method.upper())
            except GraphQLRefused as refusal:
                reason = refusal.reason.lower()
                if "clean status" in reason or "unstable status" in reason:
                    raise RuntimeError(f"#{number} became mergeable while questbot enabled "
                                       "auto-merge; merging it shortly") from refusal
                if "head" in reason and "expected" in reason:
                    await self.note(effect, f"not merged: #{number}'s head moved from "
                                    f"{head[:12]} ({refusal.reason})")
                    return None
                if "not allowed" not in reason:
                    raise
                self.methods.forget(forge.repo)  # auto-merge was turned off since we read it
            else:
                await self.say(effect, forge, number, "auto-merge",
                               f"{why}. questbot turned on auto-merge ({_WORDS[method]}) for "
                               f"{render.sha(head)}: GitHub merges it once the rules are met, "
                               "and only at that head. questbot watches from the merge.")
                return await self._waiting(effect, quest, "auto-merge", head)
        if kind == "review":
            return await self._ask_for_review(effect, quest, forge, pull, why)
        await self.say(effect, forge, number, "checks",
                       f"{why}, and auto-merge is off in this repository. Allow auto-merge in "
                       "the repository's settings and /resume the quest, or merge "
                       f"#{number} by hand at {render.sha(head)} once the rules are met: "
                       "questbot watches from that merge.")
        return await self._waiting(effect, quest, "checks", head)

    async def _ask_for_review(self, effect: Effect, quest: Quest, forge: Forge, pull: Pull,
                              why: str) -> Sequence[Event] | None:
        settings = await self.ctx.settings.settings(quest.repo)
        skip = {pull.author.lower(), (quest.head_pusher or "").lower(),
                self.ctx.bot_login.lower()}
        asked = [r for r in settings.reviewers if r.lower() not in skip]
        if asked:
            await forge.request_reviewers(pull.number, asked)
        who = " ".join(f"@{r}" for r in asked) or "Someone with write access"
        await self.say(effect, forge, pull.number, "review",
                       f"{who}: {why}, and auto-merge is off in this repository. Approve the "
                       f"pull request at {render.sha(pull.head_sha)} (Files changed → Review "
                       "changes → Approve) and questbot merges it at that head.")
        return await self._waiting(effect, quest, "review", pull.head_sha)

    async def _waiting(self, effect: Effect, quest: Quest, why: str,
                       head: str) -> Sequence[Event] | None:
        await self.memory.set_quest_field(quest.id, LANDING_WAIT, f"{why}:{head}")
        await self.note(effect, f"waiting for the merge of {head[:12]} ({why})")
        return None

    async def say(self, effect: Effect, forge: Forge, number: int, what: str,
                  message: str) -> None:
        """One comment on the pull request per effect and subject, found again by its key."""
        key = f"{effect.key}:{what}"
        marker = render.key_marker(key)
        if await forge.find_comment(number, marker, author=self.ctx.bot_login) is None:
            await forge.comment(number, f"{marker}\n{message}\n")


def _quoted(message: str) -> str:
    first = " ".join(message.split())[:200]
    return f"“{first}”" if first else "no reason given"
