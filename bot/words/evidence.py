"""The evidence bundle of an agent run as people read it on GitHub, in Markdown.

``render_markdown`` is a pure function from a ``bot.agent.evidence.EvidenceBundle`` to the
Markdown shown in the quest's status comment and the check run's details. Its one promise: a
result that is not verified never renders as success. The heading comes from a fixed
vocabulary keyed by the derived outcome (``bot.agent.outcome.outcome_of``); ``✅`` and the word
"Verified" appear only for a verified result, and untrusted text (which might contain either)
is made inert by ``bot.words.markdown``. A report that is not verified also lists, from
``TaskResult.verification_gaps``, exactly why.

A bundle outlives its run: once the quest has ended (``ended``), a run that stopped for a
person's decision is not shown as waiting for one — nobody is asked for anything on a quest
that is over. The heading says it stopped, a line says the quest ended, and the run's own
reason (written while it waited: "the hypothesis waits for checkpoint A…") is left out.

``render_outputs`` shows what the proof's commands printed — the tail of each, in a collapsed
block — because a digest binds the output but tells a person nothing. Commands and output pass
through ``hide_paths``: the worker's own paths are not shown.
"""

from __future__ import annotations

from bot.agent.evidence import CommandOutput, EvidenceBundle
from bot.agent.outcome import RunOutcome, outcome_of
from bot.agent.result import RUN_ENDED, TaskResult
from bot.agent.validation import ClaimVerdict, Evidence, ReasonCode
from bot.core.proof import CheckRecord, Reproduction
from bot.words.markdown import (
    code_block,
    display_argv,
    hide_paths,
    html_text,
    inline_code,
    plain,
    quote,
)

REASON_WORDS: dict[ReasonCode, str] = {
    ReasonCode.NO_EVIDENCE: "no evidence", ReasonCode.UNSAFE_PATH: "outside the checkout",
    ReasonCode.MISSING_FILE: "no such file", ReasonCode.EMPTY_QUOTE: "blank quote",
    ReasonCode.QUOTE_NOT_FOUND: "quote not found", ReasonCode.LINE_OUT_OF_RANGE: "no such line",
    ReasonCode.LOW_CONFIDENCE: "low confidence",
}  # fmt: skip
"""Why a claim was not supported, as a reader says it (not ``quote_not_found``)."""

_HEADINGS: dict[RunOutcome, str] = {
    RunOutcome.SUCCESS: "✅ Verified",
    RunOutcome.UNVERIFIED: "⚠️ Completed, not verified",
    RunOutcome.FAILURE: "❌ Failed, not verified",
    RunOutcome.ACTION_REQUIRED: "✋ Waiting for a person's decision — not verified yet",
    RunOutcome.REFUSED: "⛔ Refused, not verified",
}
_ENDED_HEADINGS: dict[RunOutcome, str] = {
    **_HEADINGS, RunOutcome.ACTION_REQUIRED: "⏹️ Stopped for a decision, not verified"}
"""Once the quest has ended: what the run found, and nothing that waits."""
_PAUSED_HEADINGS: dict[RunOutcome, str] = {
    **_HEADINGS,
    RunOutcome.ACTION_REQUIRED: "⏸️ Stopped at a checkpoint, and the quest is paused — not "
                                "verified yet"}
"""While the quest is parked: the run stopped where a person decides, and nobody is asked to
decide until the quest resumes (the comment above says who paused it and why)."""
ENDED = "The quest has ended; this is what its last run found."
AT_CHECKPOINT = ("This is a checkpoint, as planned: the agent stopped so that a person decides "
                 "before it goes on. Still to come:")
"""A run that stopped for a decision is a normal step, not a failure: it says what comes
after the decision, and still never that anything is verified."""
_LATER = {"no change was applied": "the change comes after the plan is approved",
          "no checks were executed": "the checks run on the change, once there is one"}


PAUSED_AT_CHECKPOINT = ("The agent stopped at a checkpoint; a person decides once the quest "
                        "resumes. Still to come:")


def _waiting(result: TaskResult, paused: bool = False) -> list[str]:
    """What a run stopped at a checkpoint has not done yet, as the steps still to come (``*``
    items, as the gaps below: the facts' ``-`` list after them would otherwise continue it,
    ``bot.words.gates.BULLET``)."""
    gaps = [g for g in result.verification_gaps() if not g.startswith("the run ")]
    return [PAUSED_AT_CHECKPOINT if paused else AT_CHECKPOINT,
            *(f"* {_LATER.get(g, plain(g))}" for g in gaps)]


def _heading(bundle: EvidenceBundle, ended: bool, paused: bool = False) -> list[str]:
    result = bundle.result
    outcome = outcome_of(result)
    headings = _ENDED_HEADINGS if ended else _PAUSED_HEADINGS if paused else _HEADINGS
    lines = [f"### {headings[outcome]}", ""]
    if ended:
        lines += [ENDED, ""]
    if outcome is RunOutcome.ACTION_REQUIRED and not ended:
        if result.reason and not paused:  # paused, nobody is asked: the pause says why
            lines += [f"Reason: {plain(result.reason)}", ""]
        return lines + _waiting(result, paused)
    if outcome is RunOutcome.SUCCESS:
        count = len(result.checks)
        lines.append(
            f"The change was applied and all {count} check{'s' if count != 1 else ''} passed "
            f"(attempt {result.attempts})."
        )
    else:
        if result.reason and not (ended and outcome is RunOutcome.ACTION_REQUIRED):
            lines.append(f"Reason: {plain(result.reason)}")
            lines.append("")
        lines.append("Why this is not verified:")
        lines.extend(f"* {plain(gap)}" for gap in result.verification_gaps())
    return lines


def _evidence_line(item: Evidence) -> str:
    where = inline_code(item.path) + (f" line {item.line}" if item.line is not None else "")
    quote = f": {inline_code(item.quote)}" if item.quote is not None else ""
    return f"   - {where}{quote}"


def _claims(claims: tuple[ClaimVerdict, ...]) -> list[str]:
    if not claims:
        return ["No claims were made."]
    lines: list[str] = []
    for number, item in enumerate(claims, start=1):
        claim = item.claim
        lines.append(
            f"{number}. **{item.verdict.value}** (the agent is {claim.confidence:.0%} sure): "
            f"{plain(claim.statement)}"
        )
        lines.extend(_evidence_line(evidence) for evidence in claim.evidence)
        lines.extend(
            f"   - {REASON_WORDS[reason.code]}: {plain(reason.message)}" for reason in item.reasons
        )
    return lines


def _reproduction(reproduction: Reproduction | None) -> list[str]:
    if reproduction is None:
        return ["No reproduction was recorded."]
    status = (
        "confirmed: fails on the base, passes on the head"
        if reproduction.confirmed
        else "not confirmed: it must fail on the base and pass on the head"
    )
    return [
        f"- {inline_code(reproduction.name)} runs "
        f"{inline_code(display_argv(reproduction.command))}",
        f"- base exit {reproduction.base_exit_code}, head exit {reproduction.head_exit_code}: "
        f"{status}",
    ]


def _checks(checks: tuple[CheckRecord, ...]) -> list[str]:
    if not checks:
        return ["No checks were executed."]
    return [
        f"- {inline_code(check.name)} {'passed' if check.passed else 'FAILED'} "
        f"(exit {check.exit_code}): {inline_code(display_argv(check.command))}"
        for check in checks
    ]


def _facts(bundle: EvidenceBundle) -> list[str]:
    result = bundle.result
    lines = [
        f"- the agent's run {RUN_ENDED[result.state]}"
        + (f" after {result.attempts} tries" if result.attempts > 1 else "")
        + f"; risk {result.risk.value}"
    ]
    if result.change is not None:
        files = ", ".join(inline_code(path, limit=120) for path in result.change.files[:20])
        more = len(result.change.files) - 20
        suffix = f" and {more} more" if more > 0 else ""
        # no commits named: the run's own may never reach GitHub (the status comment and the
        # pull request name the fix's commit there)
        lines.append(f"- change: touching {files}{suffix}")
    else:
        waiting = outcome_of(result) is RunOutcome.ACTION_REQUIRED
        lines.append("- change: none yet" if waiting else "- change: none")
    return lines


def render_markdown(bundle: EvidenceBundle, *, ended: bool = False,
                    paused: bool = False) -> str:
    """The bundle as GitHub Markdown; pure, and never shows success for an unverified result.
    ``ended``: the quest has ended, so nothing the run stopped for still waits; ``paused``:
    the quest is parked, so nobody is asked to decide until it resumes."""
    sections = [
        _heading(bundle, ended, paused),
        _facts(bundle),
        ["#### Hypothesis", "", *_quoted(bundle.hypothesis)],
        ["#### Claims", "", *_claims(bundle.claims)],
        ["#### Reproduction", "", *_reproduction(bundle.reproduction)],
        ["#### Plan", "", *(_quoted(bundle.plan, by_line=True) if bundle.plan
                            else ["No plan was recorded."])],
        ["#### Checks", "", *_checks(bundle.checks)],
    ]
    return "\n\n".join("\n".join(section) for section in sections) + "\n"


def _quoted(text: str, limit: int = 4000, *, by_line: bool = False) -> list[str]:
    """Untrusted prose as a block quote that wraps: each paragraph (``by_line``: each line, as
    a plan's numbered steps) escaped (``plain``)."""
    parts = text.strip().split("\n" if by_line else "\n\n")
    paragraphs = [" ".join(p.split()) for p in parts if p.strip()]
    if not paragraphs:
        return ["*(empty)*"]
    out: list[str] = []
    left = limit
    for paragraph in paragraphs:
        if left <= 0:
            break
        out += [quote(paragraph, limit=left), ">"]
        left -= len(paragraph)
    return out[:-1]


OUTPUT_LINES = 40
"""Lines of each command's output shown: the end, where a failure says why."""


def output_block(output: CommandOutput, *, lines: int = OUTPUT_LINES) -> str:
    """One command the proof ran, its result, and the end of what it printed, collapsed."""
    where = "the base" if output.at == "base" else "the head"
    result = "passed" if output.exit_code == 0 else "FAILED"
    shown = hide_paths(output.tail).rstrip("\n").splitlines()
    kept = shown[-lines:]
    cut = len(kept) < len(shown) or output.truncated
    summary = f"{html_text(output.name, limit=80)} at {where}: {result} (exit {output.exit_code})"
    body = code_block("\n".join(kept)) if kept else "*(it printed nothing)*"
    note = "the last lines of what it printed:" if cut else "what it printed:"
    return "\n".join([f"<details><summary>{summary}</summary>", "",
                      f"{inline_code(display_argv(output.command))} — {note}", "", body, "",
                      "</details>"])


def render_outputs(outputs: tuple[CommandOutput, ...], *, lines: int = OUTPUT_LINES) -> str:
    """Every command the proof ran with its output's tail (empty when there is none)."""
    return "\n\n".join(output_block(o, lines=lines) for o in outputs)
