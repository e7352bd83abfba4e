"""The reply to ``/help``: the commands that work here and now, for this quest and this person,
each with an example and what it does next.

``/status`` says where a quest stands; ``/help`` says what the person asking can do about it.
Both only read, so anyone may ask. What is offered is asked of the core through
``bot.words.refusals.now_commands`` (the table, the claim guard, the preconditions, who pushed
the head), so ``/help`` never offers a command the next comment would be refused for; a person
who may not decide is told so, and how to get the right, instead of a list they cannot use.

Pure: the same quest, person and permission give the same text, so a redelivered comment
queues the same reply under the same key (``bot.commands.replies``). No internal identifier
reaches the text (a property test holds it to that over every state).
"""

from __future__ import annotations

from bot.core import Quest, Route, SignalKind, State
from bot.core.quest import ParkReason
from bot.core.states import CHECKPOINT_AT, TERMINAL
from bot.words.commands import SPEND, USAGE, CommandName
from bot.words.refusals import doing, now_commands

EXAMPLE_REASON: dict[CommandName, str] = {
    CommandName.REVISE: "the cause is in the last page, not the first",
    CommandName.REJECT: "not worth changing this code for",
    CommandName.PAUSE: "waiting for Friday's release",
    CommandName.KILL: "fixed by hand in another pull request",
}
"""What a person might write after a command that needs a reason: the example's second half."""

_APPROVE_NEXT = {
    "A": "the hypothesis is accepted, and the agent writes a test that reproduces the failure "
         "and a plan",
    "B": "the reproduction and plan are accepted, and the agent writes the fix, which questbot "
         "then proves",
    "C": "the proved change is accepted, and questbot merges it at exactly that commit, then "
         "watches for the failure coming back",
}
_REVISE_NEXT = {
    "A": "the agent researches again with your reason in hand",
    "B": "the agent writes the reproduction and plan again with your reason in hand",
    "C": "the agent writes the fix again with your reason in hand, and it is proved again",
}

_WHO_MAY = ("write access to this repository, or being one of the reviewers in "
            "`.github/questbot.yml`")


def _example(usage: str) -> str:
    """``usage`` as a person would type it: a reason filled in for ``<why>``."""
    name = CommandName(usage.split(" ", 1)[0].lstrip("/"))
    reason = EXAMPLE_REASON.get(name)
    return f"/{name.value} {reason}" if reason is not None else usage


def _next(usage: str, quest: Quest) -> str:
    """What happens after ``usage`` on ``quest``, as a clause a person reads."""
    word, _, rest = usage.partition(" ")
    name = CommandName(word.lstrip("/"))
    checkpoint = CHECKPOINT_AT.get(quest.checkpoint_state)
    at = checkpoint.value if checkpoint is not None else ""
    if rest == SPEND:
        return ("questbot pays for the next stage beyond the budget, and the agent goes on"
                if name is CommandName.APPROVE else
                "the quest stays parked and nothing more is spent")
    if name is CommandName.APPROVE:
        if at == "A" and quest.route is Route.RESEARCH_ONLY:
            return ("the hypothesis is accepted and the research is complete; `/quest fix` "
                    "later turns it into a fix")
        return _APPROVE_NEXT.get(at, "the open checkpoint is approved")
    if name is CommandName.REVISE:
        return _REVISE_NEXT.get(at, "the work goes back with your reason")
    if name is CommandName.REJECT:
        return "the quest ends here and nothing of it lands"
    if name is CommandName.CLAIM:
        return ("you hold this review: only you decide it until you `/release` it, and GitHub "
                "shows you as the pull request's assignee and requested reviewer")
    if name is CommandName.RELEASE:
        return ("you give the review back: anyone who may decide can decide it again, and the "
                "review requests are as they were before the claim")
    if name is CommandName.PAUSE:
        return "the quest stops where it is (a running agent stops) until someone `/resume`s it"
    if name is CommandName.RESUME:
        return "the quest goes on from where it stopped"
    if name is CommandName.KILL:
        return "the quest stops for good and nothing of it lands"
    if name is CommandName.QUEST:
        if rest == "research":
            return "the agent researches the cause and stops there, for you to read"
        if quest.state is State.PARKED:
            return "the finished research becomes a fix: the agent writes a reproducing test next"
        return ("the agent researches the cause, then reproduces and fixes it, asking you at "
                "each step")
    if name is CommandName.STATUS:
        return "questbot answers with where the quest stands and what each checkpoint needs"
    return "questbot answers here"


def help_text(quest: Quest | None, *, actor: str, may_act: bool) -> str:
    """The whole reply to ``/help`` by ``actor`` (who ``may_act`` on the quest's repository, or
    not): where the quest stands in one clause, then each command that works now, as an example
    to copy and what it does next."""
    if quest is None:
        return (f"@{actor} there is no quest on this thread. On an issue, `/quest fix` starts one "
                "(find and fix the cause) or `/quest research` (research only); a quest's own "
                "pull request answers `/help` with what works there.")
    lines = [f"@{actor} where this quest stands: {doing(quest, mention=False)}. What you can "
             "do now, each with an example to copy:", ""]
    usages = now_commands(quest, actor) if may_act else [USAGE[CommandName.STATUS]]
    for usage in usages:
        lines.append(f"- `{_example(usage)}`: {_next(usage, quest)}.")
    if not may_act:
        lines += ["", f"Deciding on the quest needs {_WHO_MAY}; ask a maintainer to decide, or "
                  "to add you as a reviewer."]
    elif quest.state is State.HANDED_OFF and quest.owner and quest.owner != actor:
        lines += ["", f"The review is claimed by `{quest.owner}`: its decisions wait until they "
                  "`/release` it."]
    elif quest.state in TERMINAL:
        again = ("`/quest fix` on its issue starts a new one" if quest.kind is SignalKind.ISSUE
                 else "a new failure of the same check starts a new quest")
        lines += ["", f"Nothing can be decided on it any more; {again}."]
    elif quest.state is State.PARKED and quest.park_reason is ParkReason.BUDGET_REACHED:
        lines += ["", "Its budget is spent: only the answer to the spend request moves it on."]
    return "\n".join(lines)
