"""Talking with the people who comment: what they are told, and the replies and reactions that
carry it. Who may act is ``bot.quests.permissions``'.

Replies and reactions are effects like any other write: intake makes them with ``reply`` and
``reaction`` and queues them with ``Journal.enqueue`` on the thread's trail
(``bot.journal.keys.thread_trail``), and the effect runner delivers them through the adapters
in ``bot.worker.github_effects``. A refused command has no transition to carry its reply, so the
key is made from the delivery instead — ``<trail>:0:reply_comment:comment-<id>-<line>:0``
(revision 0:
no transition; nothing of the quest's state enters it) — and a redelivered webhook makes the
same key, which the journal does not queue twice. The reply carries its key in a hidden marker,
and the adapter looks for it among the thread's comments before posting, so a delivery that
posted and crashed before it was recorded does not post again.

Why the thread's trail and not the quest's: a quest's effects are delivered in order, one at a
time, and an agent run takes minutes — a ``/status`` queued behind it would be answered only
when the run ends.
"""

from __future__ import annotations

from bot.core import Effect, EffectType, InvalidTransition, Quest, Refusal, effect_key
from bot.core.gates import status_and_next
from bot.core.policy import Checkpoint, Policy
from bot.core.rules.budget import waits_for_spend
from bot.core.states import CHECKPOINT_AT, TERMINAL, State
from bot.journal.keys import thread_trail
from bot.words.commands import Command
from bot.words.gates import gates_lines
from bot.words.markdown import inline_code
from bot.words.refusals import Precheck, doing, now_commands, refusal_words
from bot.words.render import next_action

SEEN = "eyes"
"""The reaction to every command questbot read."""


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


def restore_pull(repo: str, number: int, cause: str, state: str, quest_id: str) -> Effect:
    """Put the quest's pull request ``number`` back ``state`` (``open``, ``closed``): someone
    who may not pause or resume the quest closed or reopened it. ``cause`` names the delivery."""
    return _conversation(repo, number, EffectType.RESTORE_PULL, cause,
                         {"state": state, "quest": quest_id})


def rewrite_inbox(repo: str, number: int, cause: str) -> Effect:
    """Write the inbox issue ``number`` again even if questbot wrote the same: a person changed
    it (ticked a box, closed it). ``cause`` names the delivery, so a redelivery asks once."""
    return _conversation(repo, number, EffectType.NOTIFY_INBOX, cause, {"rewrite": 1})


def reply_marker(key: str) -> str:
    """The hidden line a reply carries, by which a later delivery finds it."""
    return f"<!-- questbot:reply={key} -->"


def reply_body(body: str, key: str) -> str:
    return f"{body}\n\n{reply_marker(key)}"


# -- what the replies say -----------------------------------------------------------------

def no_permission_text(*, login: str, command: Command, button: bool = False) -> str:
    return refusal_words(command, None, Precheck.NO_PERMISSION, actor=login, button=button)


def no_quest_text(*, login: str, command: Command, on_pull: bool,
                  button: bool = False) -> str:
    return refusal_words(command, None, Precheck.NO_QUEST, actor=login, on_pull=on_pull,
                         button=button)


def stale_button_text(actor: str, command: Command, quest: Quest, pressed_on: str) -> str:
    return refusal_words(command, quest, Precheck.STALE_BUTTON, actor=actor,
                         pressed_on=pressed_on, button=True)


def stale_review_text(reviewer: str, reviewed: str, head: str) -> str:
    return (f"@{reviewer} your approval is of `{reviewed[:7]}`, but the quest's head is "
            f"`{head[:7]}` now, so it does not approve what would land. Review the new head "
            "and approve it, or comment `/approve C`.")


def review_not_at_c_text(reviewer: str, quest: Quest) -> str:
    open_cp = CHECKPOINT_AT.get(quest.checkpoint_state)
    now = (f"checkpoint {open_cp.value} is open: comment `/approve {open_cp.value}` to approve "
           "it" if open_cp is not None else
           f"{doing(quest)}")
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


def elsewhere_text(home: int) -> str:
    """After "there is no quest on this thread", on a pull request named like a quest of this
    repository that is not the quest's own (a fork's, or one a person opened by hand)."""
    return (f" This pull request is not the one questbot opened for its quest: commands act "
            f"on #{home}, so comment there.")


_WHO_MAY = ("write access to this repository, or being one of the reviewers in "
            "`.github/questbot.yml`")


def close_refused_text(actor: str, number: int) -> str:
    return (f"@{actor} closed #{number}, but pausing the quest needs {_WHO_MAY}, so the quest "
            "goes on and questbot opened it again. Ask a maintainer to comment `/pause <why>` "
            "or `/kill <why>`; `/status` shows where things stand.")


def reopen_refused_text(actor: str, number: int) -> str:
    return (f"@{actor} reopened #{number}, but resuming the quest needs {_WHO_MAY}, so the "
            "quest stays paused and questbot closed it again. Ask a maintainer to reopen it or "
            "to comment `/resume`.")


_APPROVING_LETS = {
    Checkpoint.A: "write a test that fails because of the bug, and a plan",
    Checkpoint.B: "make the change and run your checks on it",
    Checkpoint.C: "merge exactly that commit, then watch the branch for a while",
}
"""What a decision at each checkpoint sets going, as the README's table says it."""


def status_text(quest: Quest | None, policy: Policy | None = None) -> str:
    """The reply to ``/status``: what the quest is doing, what happens next and who does it,
    its checkpoints (``status_and_next`` under ``policy``, the repository's) and the commands
    it takes now. No id or revision: the person asking is on the quest's own thread, and
    those are questbot's bookkeeping (the hidden marker and ``questbot status`` have them)."""
    if quest is None:
        return ("There is no quest on this thread. On an issue, `/quest fix` starts one (or "
                "`/quest research`); a quest's own pull request answers `/status` with it.")
    if quest.state is State.HANDED_OFF and quest.owner:
        now = f"the review is claimed by {inline_code(quest.owner)}"  # named, not pinged
    else:
        now = doing(quest, mention=False)
    following = "" if quest.state in TERMINAL else next_action(quest, policy)
    lines = [f"**Now:** {now[:1].upper()}{now[1:]}."]
    checkpoint = CHECKPOINT_AT.get(quest.state)
    if checkpoint is not None:
        lines[0] += f" Approving it lets questbot {_APPROVING_LETS[checkpoint]}."
    if following:
        lines += ["", f"**Next:** {following}"]
    lines.append("")
    if waits_for_spend(quest) and "/approve spend" not in following:
        lines.append("Its budget is spent: `/approve spend` pays for the next stage, "
                     "`/deny spend` keeps it parked.")
    if quest.last_failure:
        what, _, error = quest.last_failure.partition(": ")
        lines.append(f"questbot could not {what.replace('_', ' ')} the last time it tried: "
                     f"`{error.replace('_', ' ')}`.")
    if lines[-1]:
        lines.append("")
    lines += ["Checkpoints:", *gates_lines(status_and_next(quest, policy or Policy())), ""]
    lines.append("Commands it takes now: "
                 + ", ".join(f"`{usage}`" for usage in now_commands(quest)) + ".")
    return "\n".join(lines)


def refusal_text(item: Command, exc: InvalidTransition, quest: Quest, actor: str, *,
                 button: bool = False) -> str:
    """The reply to a command the lifecycle refused, in the quest's terms
    (``bot.words.refusals``); the table's own reason goes to the log, not to people."""
    code = None if exc.code is Refusal.UNDEFINED else exc.code
    return refusal_words(item, quest, code, actor=actor, button=button)
