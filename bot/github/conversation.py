"""Talking with the people who comment: who may act, what they are told, and the replies and
reactions that carry it.

Authorization is by the repository permission GitHub reports for the commenter (write, maintain
or admin), or by being one of the configured reviewers — never by ``author_association``, which
says how someone relates to the repository, not what they may do. Answers are cached briefly:
a burst of commands costs one request per person.

Replies and reactions are effects like any other write: intake makes them with ``reply`` and
``reaction`` and queues them with ``Journal.enqueue`` on the thread's trail
(``bot.journal.keys.thread_trail``), and the effect runner delivers them through the adapters
in ``bot.github.effects``. A refused command has no transition to carry its reply, so the key is
made from the delivery instead — ``<trail>:0:reply_comment:comment-<id>-<line>:0`` (revision 0:
no transition; nothing of the quest's state enters it) — and a redelivered webhook makes the
same key, which the journal does not queue twice. The reply carries its key in a hidden marker,
and the adapter looks for it among the thread's comments before posting, so a delivery that
posted and crashed before it was recorded does not post again.

Why the thread's trail and not the quest's: a quest's effects are delivered in order, one at a
time, and an agent run takes minutes — a ``/status`` queued behind it would be answered only
when the run ends.
"""

from __future__ import annotations

from collections.abc import Iterable

from cachetools import TTLCache

from bot.core import Effect, EffectType, InvalidTransition, Quest, Refusal, State, effect_key
from bot.core.rules.budget import waits_for_spend
from bot.core.states import CHECKPOINT_AT, MEANING
from bot.github.commands import Command, CommandName
from bot.github.forge import Forge
from bot.journal.keys import thread_trail

WRITE_OR_ABOVE = frozenset({"admin", "maintain", "write"})
SEEN = "eyes"
"""The reaction to every command questbot read."""


class Permissions:
    def __init__(self, ttl_s: float = 60.0) -> None:
        self._cache: TTLCache[tuple[str, str], str] = TTLCache(maxsize=4096, ttl=ttl_s)

    async def permission(self, forge: Forge, login: str) -> str:
        key = (forge.repo.lower(), login.lower())
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        level = await forge.permission(login)
        self._cache[key] = level
        return level

    async def may_act(self, forge: Forge, login: str, reviewers: Iterable[str]) -> bool:
        if login.lower() in {r.lower() for r in reviewers}:
            return True
        return await self.permission(forge, login) in WRITE_OR_ABOVE


def _conversation(repo: str, number: int, type_: EffectType, cause: str,
                  payload: dict[str, str | int]) -> Effect:
    trail = thread_trail(repo, number)
    return Effect(key=effect_key(trail, 0, type_.value, cause, 0), type=type_, quest_id=trail,
                  revision=0, event_id=cause, occurrence=0,
                  payload={"repo": repo, "number": number, **payload})


def reply(repo: str, number: int, cause: str, body: str) -> Effect:
    """A reply on issue or pull request ``number``: ``body`` is the whole text, its marker
    added when it is posted. ``cause`` names what it answers (``comment-<id>-<line>``,
    ``button-<delivery>``): unique per answer, the same on a redelivery."""
    return _conversation(repo, number, EffectType.REPLY_COMMENT, cause, {"body": body})


def reaction(repo: str, number: int, comment_id: int, content: str = SEEN) -> Effect:
    """A reaction to comment ``comment_id`` on ``number``."""
    return _conversation(repo, number, EffectType.REACT, f"comment-{comment_id}",
                         {"comment_id": comment_id, "content": content})


def reply_marker(key: str) -> str:
    """The hidden line a reply carries, by which a later delivery finds it."""
    return f"<!-- questbot:reply={key} -->"


def reply_body(body: str, key: str) -> str:
    return f"{body}\n\n{reply_marker(key)}"


# -- what the replies say -----------------------------------------------------------------

NO_PERMISSION = ("@{login} `/{command}` needs write access to this repository, or being one of "
                 "the reviewers in `.github/questbot.yml`. Ask a maintainer to run it.")
NO_QUEST = ("`/{command}`: there is no quest on this thread. Quests live on their `quest/…` "
            "pull requests; on an issue, start one with `/quest fix` or `/quest research`.")


def no_permission_text(*, login: str, command: str) -> str:
    return NO_PERMISSION.format(login=login, command=command)


def no_quest_text(*, command: str) -> str:
    return NO_QUEST.format(command=command)


def stale_button_text(actor: str, pressed_on: str, head: str) -> str:
    return (f"@{actor} that button was on `{pressed_on[:7]}`, but the quest has moved to "
            f"`{head[:7]}` since: the decision is stale. Look at the new head and use the "
            "buttons on its check run.")


def stale_review_text(reviewer: str, reviewed: str, head: str) -> str:
    return (f"@{reviewer} your approval is of `{reviewed[:7]}`, but the quest's head is "
            f"`{head[:7]}` now, so it does not approve what would land. Review the new head "
            "and approve it, or comment `/approve C`.")


def review_not_at_c_text(reviewer: str, quest: Quest) -> str:
    open_cp = CHECKPOINT_AT.get(quest.checkpoint_state)
    now = (f"checkpoint {open_cp.value} is open: comment `/approve {open_cp.value}` to approve "
           "it" if open_cp is not None else
           f"the quest is {quest.state.value} ({MEANING[quest.state]})")
    return (f"@{reviewer} a GitHub approval counts as `/approve C`, at checkpoint C only; "
            f"{now}.")


def review_no_permission_text(*, login: str, command: str) -> str:
    return (f"@{login} your review counts as `/{command}` only from people with write access "
            "to this repository, or the reviewers in `.github/questbot.yml`. Ask a maintainer "
            "to decide.")


def closed_text(actor: str, number: int) -> str:
    return (f"@{actor} closed #{number}, so questbot paused the quest. Reopen the pull request "
            "to resume it, or comment `/kill <why>` to stop it.")


def reopened_text(actor: str, number: int) -> str:
    return f"@{actor} reopened #{number}: the quest goes on where it paused."


def status_text(quest: Quest | None) -> str:
    if quest is None:
        return "There is no quest on this thread."
    open_cp = CHECKPOINT_AT.get(quest.checkpoint_state)
    lines = [f"Quest `{quest.id}` is **{quest.state.value}** at revision {quest.revision}: "
             f"{MEANING[quest.state]}"]
    if open_cp is not None:
        lines.append(f"Checkpoint {open_cp.value} is open: `/approve`, `/revise <why>`, "
                     "`/reject <why>` or `/claim`.")
    if quest.owner:
        lines.append(f"The review is claimed by @{quest.owner}.")
    if waits_for_spend(quest):
        lines.append("Its budget is spent: `/approve spend` pays for the next stage, "
                     "`/deny spend` keeps it parked.")
    if quest.last_failure:
        lines.append(f"Last delivery failure: `{quest.last_failure}`.")
    return "\n".join(lines)


def refusal_text(item: Command, exc: InvalidTransition, quest: Quest, actor: str) -> str:
    name = f"/{item.name.value}" + (" spend" if item.spend else "")
    if exc.code is Refusal.CLAIMED:
        return f"@{actor} `{name}` refused: {exc.reason}."
    if exc.code is Refusal.PRODUCER:
        return f"@{actor} `{name}` refused: {exc.reason}."
    if exc.code is Refusal.STALE or (
            exc.code is Refusal.NOT_AT_CHECKPOINT and item.name is CommandName.APPROVE
            and quest.state in (State.PROVING, State.PATCHING)):
        return (f"@{actor} `{name}` refused: stale — the head moved since the checkpoint; "
                f"questbot is working on revision {quest.revision} "
                f"(`{(quest.head or '')[:7]}`) now. Decide again when it asks at checkpoint C.")
    if exc.code is Refusal.NOT_AT_CHECKPOINT:
        return f"@{actor} `{name}` refused: {exc.reason}."
    return (f"@{actor} `{name}` is not possible while the quest is {quest.state.value}: "
            f"{exc.reason}. `/status` shows what is possible now.")
