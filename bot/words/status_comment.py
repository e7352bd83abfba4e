"""The quest's one status comment: what a maintainer reads in ten seconds, then the details.

Pure, like ``bot.words.render``: ``status_comment(view)`` is Markdown from a ``StatusView``,
which ``bot.views.projection`` fills from the quest, its journal and its evidence. The top
answers, in order, the questions a maintainer comes with:

1. where it stands and what happens next — the commands and buttons that do it;
2. what failed, linked to the failed check and to its log (the CI's page, when it is another),
   and the failing step's last lines in a collapsed block (the log the agent read);
3. what questbot thinks and how sure (the hypothesis, the claims' confidence);
4. what it changed (the files, linked to the pull request's diff);
5. what the proof ran and its result — each command's output tail in a collapsed block;
6. what it cost so far (``cost_line``).

When a stage failed, what the model said last in it, collapsed (``LastWords``: its words or
its last call, inert; the operator's ``questbot transcript`` prints the rest).

Below, collapsed: the timeline in people's words (``bot.words.timeline``), a diagram of the
states *this* quest went through (``bot.core.diagram.path_mermaid``) and the full evidence.

Limits. GitHub refuses a comment over 65,536 characters (BEHAVIOUR §7), and a refused edit
leaves the comment stale. The top is bounded by construction (every untrusted piece is capped
by ``bot.words.markdown``); the proof output and the evidence are fitted into what is left,
in that order, and a cut says where the rest is: the ``questbot`` check run's full text.

No identifier of questbot's own reaches the text (states read as words: "rolled back"), and no
path of the worker's: the whole body passes through ``bot.words.markdown.hide_paths`` last,
since an agent's hypothesis, a claim's file or a halting reason may name one too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.agent.evidence import EvidenceBundle
from bot.core import Quest
from bot.core.diagram import path_mermaid
from bot.core.events import SignalKind
from bot.core.gates import status_and_next
from bot.core.policy import Policy
from bot.core.quest import ParkReason
from bot.core.states import CHECKPOINT_AT, TERMINAL, State
from bot.words import spend as spend_words
from bot.words.attempts import attempts_lines, attempts_summary
from bot.words.check_run import ACTIONS
from bot.words.evidence import render_markdown, render_outputs
from bot.words.gates import gates_lines
from bot.words.github_limits import BODY_LIMIT as COMMENT_LIMIT
from bot.words.github_limits import fit
from bot.words.markdown import code_block, hide_paths, html_text, inline_code, plain, quote
from bot.words.may_do import allowed_commands
from bot.words.render import (
    MEANING,
    login,
    next_action,
    quest_marker,
    sha,
    state_words,
)
from bot.words.timeline import TimelineEntry, timeline_fold

__all__ = ["COMMENT_LIMIT", "FailedRun", "LastWords", "StatusView", "TimelineEntry",
           "cost_line", "status_comment"]

_URL = re.compile(r"^https?://[^\s()<>\[\]`]+$")


@dataclass(frozen=True, slots=True)
class FailedRun:
    """What the quest's signal said failed, and where GitHub shows it (from the journal's
    latest ``signal_sensed`` or ``reopened``)."""

    source: str = ""
    """GitHub's page of the failed run (``check_run.html_url``), or the issue."""
    details_url: str | None = None
    """Where the CI says to look: for Actions, the job and its log."""
    sha: str | None = None
    printed: str = ""
    """The end of the failing step's log (untrusted: shown inert, in a code block)."""


@dataclass(frozen=True, slots=True)
class LastWords:
    """What the model said last in a stage that failed (its kept transcript's last turn): the
    model's own words, untrusted — shown inert, folded."""

    stage: str
    text: str
    tool: str | None = None
    """The tool it called, when its last turn was a call rather than words."""


@dataclass(frozen=True, slots=True)
class StatusView:
    quest: Quest
    timeline: Sequence[TimelineEntry] = ()
    evidence: EvidenceBundle | None = None
    pull_url: str | None = None
    failures: Sequence[str] = field(default=())
    """Effects that failed for good, in words, so people see them where they look."""
    path: Sequence[State] = ()
    """The states the quest went through, oldest first (``bot.core.lifecycle.path``)."""
    failed: FailedRun | None = None
    check_url: str | None = None
    """The ``questbot`` check run's page: its full text holds what the comment had to cut."""
    budget: tuple[int | None, int | None] = (None, None)
    """The policy's budget in cents and tokens (``Policy.budget_cents``, ``budget_tokens``):
    the cost line says what is left of it. ``(None, None)``: none to show."""
    policy: Policy | None = None
    """The policy the quest is stepped under: which checkpoints block (``Policy()``'s
    defaults when not given)."""
    last_words: LastWords | None = None
    """What the model said last, when a stage failed (``bot.views.projection``)."""

    @property
    def full_text(self) -> str:
        """Where the rest of a cut section is, as a link when there is one."""
        url = self.check_url or (f"{self.pull_url}/checks" if self.pull_url else None)
        return f"the `questbot` check run's details ({url})" if url else \
            "the `questbot` check run's details"


def link(text: str, url: str | None) -> str:
    """``[text](url)`` for a well-formed web address; else ``text`` with the address inert."""
    if url and _URL.match(url):
        return f"[{text}]({url})"
    return f"{text} ({inline_code(url)})" if url else text


def cost_line(quest: Quest) -> str:
    """What the quest has cost so far: the sum of its usage receipts (``usage_recorded``
    adds each run's tokens and cents to the quest). The one place the cost is worded."""
    tokens, cents = quest.usage_tokens, quest.usage_cost_cents
    if not tokens and not cents:
        return "nothing recorded yet"
    if not cents and quest.usage_free_tokens >= tokens:
        return f"{tokens:,} tokens, local model, no charge"
    dollars = f"${cents / 100:,.2f}" if cents else "no price in dollars was reported"
    return f"{tokens:,} tokens, {dollars}"


def _spend(q: Quest, view: StatusView) -> str:
    """After the cost: each stage's share and the budget left (``bot.words.spend``)."""
    parts = []
    stages = spend_words.stage_costs(q)
    if stages:
        parts.append(f"by stage: {stages}")
    if view.budget != (None, None):
        parts.append(spend_words.budget_line(q, *view.budget))
    return "; " + "; ".join(parts) if parts else ""


def _what_failed(q: Quest, failed: FailedRun | None) -> str:
    title = plain(q.title or "a failure", limit=200)
    if failed is None:
        return title
    if q.kind is SignalKind.ISSUE or q.kind is SignalKind.COMMENT:
        return link(title, failed.source) if failed.source else title
    where = f" on {sha(failed.sha)}" if failed.sha else ""
    details = failed.details_url if failed.details_url != failed.source else None
    both = not details and _URL.match(failed.source)  # one page shows the check and its log
    links = [link("the failed check and its log" if both else "the failed check",
                  failed.source) if failed.source else "",
             link("its log", details) if details else ""]
    shown = " · ".join(x for x in links if x)
    return f"{title}{where}" + (f" — {shown}" if shown else "")


def _thinks(q: Quest, evidence: EvidenceBundle | None) -> str:
    """What questbot thinks: the rest of the list item's bold lead, and the hypothesis quoted
    under it (a quote a person reads, wrapped; no blank line, so the list stays tight)."""
    hypothesis = evidence.hypothesis if evidence is not None else q.hypothesis
    if not hypothesis:
        return ":** nothing yet: research has not finished"
    first = hypothesis.strip().splitlines()
    said = quote(first[0] if first else hypothesis, limit=240)
    claims = evidence.claims if evidence is not None else ()
    if not claims:
        return f"** (no claims were checked against the code):\n  {said}"
    mean = sum(c.claim.confidence for c in claims) / len(claims)
    supported = sum(1 for c in claims if c.verdict.value == "supported")
    return (f"** (the agent is {mean:.0%} sure, over {len(claims)} claim"
            f"{'s' if len(claims) != 1 else ''}; the code supports {supported}):\n  {said}")


def _changed(evidence: EvidenceBundle | None, pull_url: str | None) -> str:
    change = evidence.result.change if evidence is not None else None
    if change is None:
        return "nothing yet"
    files = change.files
    shown = ", ".join(inline_code(f, limit=120) for f in files[:5])
    more = f" and {len(files) - 5} more" if len(files) > 5 else ""
    diff = link("the diff", f"{pull_url}/files") if pull_url else ""
    lines = evidence.lines if evidence is not None else None
    stat = (f" (+{lines[0]:,} line{'s' if lines[0] != 1 else ''}, "
            f"-{lines[1]:,} line{'s' if lines[1] != 1 else ''})" if lines is not None else "")
    return (f"{len(files)} file{'s' if len(files) != 1 else ''}{stat}: {shown}{more}"
            + (f" — {diff}" if diff else ""))


def _proof(q: Quest, evidence: EvidenceBundle | None) -> str:
    checks = evidence.checks if evidence is not None else ()
    if q.proof is None and not (evidence and evidence.outputs):
        return "none yet for this revision"
    passed = sum(1 for c in checks if c.passed)
    ran = f"{passed} of {len(checks)} checks passed" if checks else "no checks ran"
    repro = evidence.reproduction if evidence is not None else None
    if repro is not None:
        ran += ("; the reproduction fails on the base and passes on the head"
                if repro.confirmed else "; the reproduction does not show the fix")
    if q.proof is not None and q.proof_bound:
        return f"on the fix as it is now, {sha(q.head)}: {ran}"
    if q.proof is not None:
        return f"**on an older version of the fix**, so it does not count: {ran}"
    return f"failed: {ran}"


def proof_sentence(q: Quest, evidence: EvidenceBundle | None) -> str:
    """The proof as a sentence of its own, for the pull request's description, where it
    stands under its heading rather than after a label: where it ran, what passed, and
    what the new test showed."""
    checks = evidence.checks if evidence is not None else ()
    if q.proof is None and not (evidence and evidence.outputs):
        return "None yet: questbot proves the change before it asks you to approve it."
    passed = sum(1 for c in checks if c.passed)
    if not checks:
        said = "no check ran"
    elif len(checks) == 1:
        said = "your one check passed" if passed else "your one check failed"
    elif passed == len(checks):
        said = f"all {len(checks)} of your checks passed"
    else:
        said = f"{passed} of your {len(checks)} checks passed"
    repro = evidence.reproduction if evidence is not None else None
    if repro is not None:
        said += (", and the new test fails on the base and passes with the fix"
                 if repro.confirmed else ", but the new test does not show the fix")
    if q.proof is not None and q.proof_bound:
        return f"On the fix as it is now ({sha(q.head)}), {said}."
    if q.proof is not None:
        return f"This proof ran on **an older version of the fix**, so it does not count: {said}."
    return f"The proof failed: {said}."


def _commands(q: Quest, view: StatusView) -> list[str]:
    commands = [f"`{c.usage}`" + (f" (only {login(c.only)})" if c.only else "")
                for c in allowed_commands(q)]
    out = ["**Commands you can use now:** " + ", ".join(commands)]
    if q.checkpoint_state in CHECKPOINT_AT:  # the check run has them (``bot.words.check_run``)
        buttons = " · ".join(f"**{a['label']}**" for a in ACTIONS)
        only = f" (only {login(q.owner)})" if q.state is State.HANDED_OFF else ""
        out += ["", f"**Or the buttons** on the {link('`questbot` check run', view.check_url)}"
                f"{only}: {buttons}"]
    return out


def heading(q: Quest) -> str:
    """The comment's heading: what the quest is about, in the words of its failure (the
    quest's id is questbot's, and stays in the hidden marker above)."""
    return f"questbot: {plain(q.title or 'a failure to look into', limit=200)}"


def facts(q: Quest) -> str:
    """Severity, risk and the commits, in a sentence: only what there is to say (no
    "head *(none)*" before a fix exists, no count of proof attempts until there were two)."""
    said = [f"severity {q.severity.value}, risk {q.risk.value}"]
    if q.revision > 1:
        said.append(f"the failure came back, so this is fix number {q.revision}")
    if q.base:
        said.append(f"found on {sha(q.base)}")
    if q.head:
        said.append(f"the fix is {sha(q.head)}")
    if q.merge_sha:
        said.append(f"merged as {sha(q.merge_sha)}")
    if q.attempts > 1:
        said.append(f"a fix was pushed and proved {q.attempts} times")
    text = "; ".join(said)
    return text[:1].upper() + text[1:]


def _paused_by(q: Quest, timeline: Sequence[TimelineEntry]) -> list[str]:
    """Who paused a parked quest and why, from the newest pause in its timeline."""
    if q.state is not State.PARKED or q.park_reason is not ParkReason.PAUSED:
        return []
    paused = next((e for e in reversed(timeline) if e.event == "paused"), None)
    if paused is None:
        return []
    who = inline_code("@" + paused.actor) if paused.actor else "a person"
    return ["", f"**Paused by** {who} on {paused.at:%Y-%m-%d %H:%M} UTC"
            + (f": {paused.detail}" if paused.detail else "") + "."]


def status_comment(view: StatusView) -> str:
    """The single status comment of a quest, edited in place as it moves."""
    q = view.quest
    lines = [
        quest_marker(q.id),
        f"### {heading(q)}",
        "",
        f"**State:** {state_words(q.state)} — {MEANING[q.state]}",
        *_paused_by(q, view.timeline),
        "",
        f"**Next:** {next_action(q, view.policy)}",
        "",
        *_commands(q, view),
        "",
        "**Checkpoints:**",
        *gates_lines(status_and_next(q, view.policy or Policy())),
        "",
        f"- **What failed:** {_what_failed(q, view.failed)}",
        f"- **What questbot thinks{_thinks(q, view.evidence)}",
        f"- **What it changed:** {_changed(view.evidence, view.pull_url)}",
        f"- **What the proof ran:** {_proof(q, view.evidence)}",
        f"- **Cost so far:** {cost_line(q)}{_spend(q, view)}",
        f"- {facts(q)}",
    ]
    if view.failed is not None and view.failed.printed:
        lines += ["", "<details><summary>What the failed check printed (its last lines)"
                  "</summary>", "", code_block(view.failed.printed, 3000), "", "</details>"]
    lines += _last_words(q.id, view.last_words)
    if q.attempt_log:  # attempts on record: the earlier plans and their reviews
        lines += [f"- **Attempts:** {plain(attempts_summary(q))}", "",
                  "<details><summary>Earlier attempts</summary>", "",
                  *(f"- {a}" for a in attempts_lines(q, lambda t: inline_code(t, limit=240))),
                  "", "</details>"]
    if view.failures:
        lines += ["", "**Could not be done:**"]
        lines += [f"- {plain(text)}" for text in view.failures]
    if view.timeline:
        lines += ["", *timeline_fold(view.timeline)]
    tail = ["", "<details><summary>This quest's path</summary>", "", "```mermaid",
            path_mermaid(view.path or (q.state,), q.state), "```", "", "</details>", ""]
    note = (f"\n\n*(cut here: a comment holds {COMMENT_LIMIT:,} characters; {{rest:,}} more "
            f"are in {view.full_text})*\n")
    outputs = view.evidence.outputs if view.evidence is not None else ()
    if outputs:
        budget = COMMENT_LIMIT - len("\n".join([*lines, *tail])) - 200
        lines += ["", "<details><summary>What the proof printed</summary>", "",
                  _fit_blocks(render_outputs(outputs), budget // 2, note), "", "</details>"]
    if view.evidence is not None:
        budget = COMMENT_LIMIT - len("\n".join([*lines, *tail])) - 100
        evidence = render_markdown(view.evidence, ended=q.state in TERMINAL,
                                   paused=q.state is State.PARKED)
        lines += ["", "<details><summary>Evidence</summary>", "",
                  fit(evidence, budget, note=note), "</details>"]
    return hide_paths("\n".join([*lines, *tail]))


def _last_words(quest_id: str, said: LastWords | None) -> list[str]:
    """The fold of what the model said last in the stage that failed: a maintainer tells a
    model that answered in prose, or called the wrong tool, from one that said nothing; the
    whole conversation is a command away for the operator."""
    if said is None:
        return []
    did = (f"called {html_text(said.tool, 80)} last" if said.tool else "said last")
    command = f"questbot transcript {quest_id} --stage {said.stage}"
    return ["", f"<details><summary>What the model {did} ({html_text(said.stage, 40)})"
            "</summary>", "", code_block(said.text, 3000), "",
            f"The whole conversation: {inline_code(command)} where questbot runs.", "",
            "</details>"]


def _fit_blocks(text: str, budget: int, note: str) -> str:
    """``fit``, keeping the ``<details>`` blocks balanced where the cut falls inside one."""
    cut = fit(text, budget, note=note)
    if cut is text:
        return text
    opened = cut.count("<details>") - cut.count("</details>")
    return cut + "\n</details>" * opened


what_failed = _what_failed
changed = _changed
proof = _proof
"""The sections the pull request's description shares (``bot.words.pull_request``)."""
