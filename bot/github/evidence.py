"""The evidence bundle of an agent run as people read it on GitHub, in Markdown.

``render_markdown`` is a pure function from a ``bot.agent.evidence.EvidenceBundle`` to the
Markdown shown in the quest's status comment and the check run's details. Its one promise: a
result that is not verified never renders as success. The heading comes from a fixed
vocabulary keyed by the derived outcome (``bot.agent.outcome.outcome_of``); ``✅`` and the word
"Verified" appear only for a verified result, and untrusted text (which might contain either)
is made inert by ``bot.github.markdown``. A report that is not verified also lists, from
``TaskResult.verification_gaps``, exactly why.
"""

from __future__ import annotations

from bot.agent.evidence import EvidenceBundle
from bot.agent.outcome import RunOutcome, outcome_of
from bot.agent.validation import ClaimVerdict, Evidence
from bot.core.proof import CheckRecord, Reproduction
from bot.github.markdown import code_block, inline_code, plain

_HEADINGS: dict[RunOutcome, str] = {
    RunOutcome.SUCCESS: "✅ Verified",
    RunOutcome.UNVERIFIED: "⚠️ Completed, not verified",
    RunOutcome.FAILURE: "❌ Failed, not verified",
    RunOutcome.ACTION_REQUIRED: "✋ Needs a person, not verified",
    RunOutcome.REFUSED: "⛔ Refused, not verified",
}


def _heading(bundle: EvidenceBundle) -> list[str]:
    result = bundle.result
    outcome = outcome_of(result)
    lines = [f"### {_HEADINGS[outcome]}", ""]
    if outcome is RunOutcome.SUCCESS:
        count = len(result.checks)
        lines.append(
            f"The change was applied and all {count} check{'s' if count != 1 else ''} passed "
            f"(attempt {result.attempts})."
        )
    else:
        if result.reason:
            lines.append(f"Reason: {plain(result.reason)}")
            lines.append("")
        lines.append("Why this is not verified:")
        lines.extend(f"- {plain(gap)}" for gap in result.verification_gaps())
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
            f"{number}. **{item.verdict.value}** (confidence {claim.confidence:.2f}) "
            f"{inline_code(claim.statement)}"
        )
        lines.extend(_evidence_line(evidence) for evidence in claim.evidence)
        lines.extend(
            f"   - {reason.code.value}: {plain(reason.message)}" for reason in item.reasons
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
        f"- {inline_code(reproduction.name)} runs {inline_code(' '.join(reproduction.command))}",
        f"- base exit {reproduction.base_exit_code}, head exit {reproduction.head_exit_code}: "
        f"{status}",
    ]


def _checks(checks: tuple[CheckRecord, ...]) -> list[str]:
    if not checks:
        return ["No checks were executed."]
    return [
        f"- {inline_code(check.name)} {'passed' if check.passed else 'FAILED'} "
        f"(exit {check.exit_code}): {inline_code(' '.join(check.command))}, "
        f"output sha256 `{check.output_sha256[:12]}`"
        for check in checks
    ]


def _facts(bundle: EvidenceBundle) -> list[str]:
    result = bundle.result
    lines = [
        f"- state: `{result.state.value}`, attempts: {result.attempts}, risk: `{result.risk.value}`"
    ]
    if result.change is not None:
        files = ", ".join(inline_code(path, limit=120) for path in result.change.files[:20])
        more = len(result.change.files) - 20
        span = f"{inline_code(result.change.base[:12])}..{inline_code(result.change.head[:12])}"
        suffix = f" and {more} more" if more > 0 else ""
        lines.append(f"- change: {span} touching {files}{suffix}")
    else:
        lines.append("- change: none applied")
    if bundle.proof_digest is not None:
        lines.append(f"- proof digest: {inline_code(bundle.proof_digest)}")
    return lines


def render_markdown(bundle: EvidenceBundle) -> str:
    """The bundle as GitHub Markdown; pure, and never shows success for an unverified result."""
    sections = [
        _heading(bundle),
        _facts(bundle),
        ["#### Hypothesis", "", code_block(bundle.hypothesis)],
        ["#### Claims", "", *_claims(bundle.claims)],
        ["#### Reproduction", "", *_reproduction(bundle.reproduction)],
        ["#### Plan", "", code_block(bundle.plan) if bundle.plan else "No plan was recorded."],
        ["#### Checks", "", *_checks(bundle.checks)],
    ]
    return "\n\n".join("\n".join(section) for section in sections) + "\n"
