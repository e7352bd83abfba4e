"""The quest's pull request as people read it: a title that says what is broken, and a
description that explains the quest — what failed, what questbot thinks, the plan, the change,
the proof and what to do now — kept current at each checkpoint.

Pure, like ``bot.words.status_comment``: ``pull_title(view)`` and ``pull_body(view)`` are text
from a ``PullView``, which ``bot.views.projection`` fills and writes (``pulls/update``) only when
their text changed. Both are built from the quest's *facts* — its hypothesis, plan, change,
proof, merge and ending — and not from the state it is in this second (nor its cost, which
changes after every stage), so the description
changes at checkpoints and not at every stage a quest passes through: the check run and the
status comment show the moment, the description the story. So "what to do now" names the
checkpoint the facts stand at, and says where the moment is shown.

The title says what failed, then — once there is one — what questbot thinks is wrong, so two
quests of one check read apart. A regression's says so, and its description links the pull
request where the earlier fix landed, the commit the failure came back on and the changes
between the two. A merged pull request keeps the description it had when the quest ended: the
quest's next revision works on a pull request of its own.

Nothing here is a code span that does not wrap: the hypothesis and the plan are quotes a person
reads, made inert (``bot.words.markdown.plain``); no internal id or digest is shown.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.agent.commit_words import inert
from bot.agent.evidence import EvidenceBundle
from bot.control_chars import one_line
from bot.core import Quest
from bot.core.events import SignalKind
from bot.core.quest import Outcome
from bot.core.states import State
from bot.words.github_limits import BODY_LIMIT, fit
from bot.words.markdown import hide_paths, plain
from bot.words.render import quest_marker
from bot.words.status_comment import FailedRun, link, proof_sentence, what_failed
from bot.words.status_comment import changed as changed_words

TITLE_LIMIT = 120
"""Characters of a title: GitHub takes 256, a list of pull requests shows about this many."""


@dataclass(frozen=True, slots=True)
class EarlierFix:
    """Where a regression's failure was fixed before, and where it came back."""

    pull_number: int | None = None
    pull_url: str | None = None
    merge_sha: str | None = None
    """The earlier fix's merge commit."""
    back_on: str | None = None
    """The commit the failure was seen on again."""
    repo_url: str | None = None
    """The repository's web address, for the commit and comparison links."""


@dataclass(frozen=True, slots=True)
class PullView:
    quest: Quest
    failed: FailedRun | None = None
    evidence: EvidenceBundle | None = None
    pull_url: str | None = None
    earlier: EarlierFix | None = None
    issue: int | None = None
    """The issue the quest came from, if it came from one: linked (GitHub links it back)."""


def _one_line(text: str) -> str:
    """Outside text for a title, which GitHub shows as text: one line, no controls."""
    return " ".join(one_line(text)[:400].split())


def _first_sentence(text: str) -> str:
    line = _one_line(text.strip().splitlines()[0] if text.strip() else "")
    for stop in (". ", "; "):
        if stop in line:
            line = line.split(stop, 1)[0]
    return line.rstrip(".;: ")


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def _hypothesis(view: PullView) -> str | None:
    found = view.evidence.hypothesis if view.evidence is not None else None
    return found or view.quest.hypothesis


def pull_title(view: PullView) -> str:
    """What is broken: the failure, then what questbot thinks is wrong once it knows."""
    q = view.quest
    failure = _one_line(q.title or "a failure")
    if q.kind is SignalKind.ISSUE or q.kind is SignalKind.COMMENT:
        failure = f"fix {failure}" if failure else "fix an issue"
    elif view.failed is not None and view.failed.sha:
        failure = f"{failure} on {view.failed.sha[:7]}"
    if q.revision > 1:
        failure = f"regression: {failure}"
    thinks = _hypothesis(view)
    title = f"{failure} — {_first_sentence(thinks)}" if thinks else failure
    title = title[:1].upper() + title[1:]
    return _cut(title, TITLE_LIMIT)


def _quote(text: str, limit: int = 1500) -> list[str]:
    """A person's quote of untrusted text: each line inert and quoted."""
    said = plain(text.strip(), limit=limit)
    return [f"> {line}" if line.strip() else ">" for line in said.splitlines()] or ["> …"]


def _now(view: PullView) -> list[str]:
    """What to do, from the checkpoint the facts stand at (module docs)."""
    q = view.quest
    where = ("The status comment below and the `questbot` check run show what questbot is "
             "doing this minute.")
    if q.state is State.ABANDONED or q.outcome in (Outcome.KILLED, Outcome.REJECTED):
        return ["Nothing: this quest was stopped and nothing of it was merged. A new failure of "
                "the same check starts a new quest."]
    if q.state is State.ROLLED_BACK:
        return ["Nothing: the fix was merged, then the failure showed again while questbot "
                "watched, so questbot is reverting it. The status comment below says why; "
                "the quest starts again on a new pull request, linked from there."]
    if q.merge_sha or q.state is State.CLOSED:  # one text for both: one write fewer
        return ["Nothing: the fix is merged. questbot watches the checks for a while after "
                "landing; if this failure comes back, it reopens the quest and links it here."]
    if q.state is State.PARKED:
        return [f"The quest is paused and waits for a person: the status comment below says "
                f"why and how to go on (`/resume`, or `/kill` to stop it). {where}"]
    if q.head and q.plan and q.proof is not None:
        return ["**Checkpoint C — the change.** Read the change and its proof above; if they "
                "are right, comment `/approve C` and questbot merges exactly this head. "
                "`/revise C <what to change>` sends it back, `/reject C` stops the quest.",
                "", where]
    if q.plan:
        return ["**Checkpoint B — the plan.** If the plan is right, comment `/approve B` and "
                "questbot writes the change. `/revise B <what to change>` sends it back, "
                "`/reject B` stops the quest.", "", where]
    if _hypothesis(view):
        return ["**Checkpoint A — the hypothesis.** If it is right, comment `/approve A` and "
                "questbot reproduces the failure and plans a fix. `/revise A <why>` sends it "
                "back to research, `/reject A` stops the quest.", "", where]
    return ["Nothing yet: questbot is researching the failure. Its hypothesis is written here "
            "when research ends, and you decide at checkpoint A whether it goes on.", "",
            where]


def _regression(view: PullView) -> list[str]:
    earlier = view.earlier
    if view.quest.revision <= 1 or earlier is None:
        return []
    fix = (link(f"#{earlier.pull_number}", earlier.pull_url) if earlier.pull_number
           else "an earlier pull request")
    web = earlier.repo_url
    merged = (link(earlier.merge_sha[:7], f"{web}/commit/{earlier.merge_sha}" if web else None)
              if earlier.merge_sha else None)
    back = (link(earlier.back_on[:7], f"{web}/commit/{earlier.back_on}" if web else None)
            if earlier.back_on else None)
    lines = ["### This failure came back", "",
             f"questbot fixed it before in {fix}" + (f", merged as {merged}" if merged else "")
             + "."]
    if back:
        since = (f"{web}/compare/{earlier.merge_sha}...{earlier.back_on}"
                 if web and earlier.merge_sha else None)
        lines.append(f"It failed again on {back}"
                     + (f": the change that brought it back is among "
                        f"{link('the commits since the fix', since)}" if since else "") + ".")
    return [*lines, ""]


def _change(view: PullView) -> str:
    """The change once it is proved (a change being proved shows with its proof: one
    write for both; the diff is on the pull request meanwhile)."""
    if view.quest.proof is None and not view.quest.merge_sha:
        return "None yet: the change is shown here with its proof."
    return changed_words(view.evidence, view.pull_url)


def pull_body(view: PullView) -> str:
    """The pull request's description (module docs), within GitHub's limit."""
    q = view.quest
    hypothesis = _hypothesis(view)
    lines = [quest_marker(q.id),
             "questbot opened this pull request to fix a failure, and keeps this description "
             "current at each checkpoint.", "",
             "### What failed", "",
             (f"#{view.issue}: " if view.issue else "") + what_failed(q, view.failed), ""]
    lines += _regression(view)
    lines += ["### What questbot thinks", ""]
    lines += (_quote(hypothesis) if hypothesis
              else ["Not known yet: questbot is researching the failure."])
    lines += ["", "### The plan", ""]
    lines += _quote(q.plan) if q.plan else ["None yet: a plan follows the hypothesis."]
    lines += ["", "### The change", "", _change(view), "",
              "### The proof", "",
              (proof_sentence(q, view.evidence) if q.proof is not None or q.merge_sha
               else "None yet: questbot proves the change before it asks you to approve it."),
              "",
              "### What to do now", "", *_now(view), ""]
    return hide_paths(fit("\n".join(lines), BODY_LIMIT))


# --- the revert's pull request (``bot.pulls.rollback``) ----------------------------------

def _about(quest: Quest) -> str:
    """The quest's failure in one plain line, for a title or a commit message: its title is
    untrusted (an issue's), and a commit on the default branch saying ``Fixes #1`` would close
    that issue, so its references are made inert (``bot.agent.commit_words.inert``)."""
    return inert(one_line(quest.title or "the failure"))[:120] or "the failure"


def revert_title(quest: Quest) -> str:
    """The revert's pull request and merge title: what it undoes and why, in words (not the
    quest's id, which no maintainer knows it by)."""
    return f"Revert the fix for {_about(quest)}: the failure came back"[:200]


def revert_body(merge_sha: str) -> str:
    """The revert's description, below its hidden key marker."""
    return (f"The failure came back after the fix was merged as `{merge_sha[:12]}`, so this "
            "reverts it. questbot merges this revert, then looks into the failure again on a "
            "new pull request.\n")


def revert_message(quest: Quest, merge_sha: str) -> str:
    """The revert commit's message."""
    return f"Revert {merge_sha[:12]}: {_about(quest)} came back after it"
