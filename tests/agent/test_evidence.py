"""The Markdown renderer: an unverified result never renders as success."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.agent.evidence import EvidenceBundle, render_markdown
from bot.agent.machine import TERMINAL_STATES, RunState
from bot.agent.markdown import code_block, inline_code, plain
from bot.agent.result import AppliedChange, TaskResult
from bot.agent.validation import Claim, ClaimVerdict, Evidence, Reason, ReasonCode, Verdict
from bot.core.proof import CheckRecord, Reproduction

CHANGE = AppliedChange(base="b" * 40, head="c" * 40, files=("src/app.py",))
PASS = CheckRecord(name="test", command=("pytest", "-q"), exit_code=0, output_sha256="d" * 64)
FAIL = CheckRecord(name="test", command=("pytest", "-q"), exit_code=1, output_sha256="e" * 64)
POSITIVE = re.compile(r"(?<!not )(?<!un)\bverified\b", re.IGNORECASE)

CLAIM = ClaimVerdict(
    claim=Claim(
        statement="add() has a stray space",
        confidence=0.9,
        evidence=(Evidence(path="src/app.py", quote="return a +  b", line=3),),
    ),
    verdict=Verdict.SUPPORTED,
)
REJECTED = ClaimVerdict(
    claim=Claim(statement="divide is wrong", confidence=0.3, evidence=(Evidence(path="x.py"),)),
    verdict=Verdict.REJECTED,
    reasons=(
        Reason(code=ReasonCode.MISSING_FILE, message="'x.py' does not exist", evidence_index=0),
        Reason(code=ReasonCode.LOW_CONFIDENCE, message="confidence 0.30 is below 0.70"),
    ),
)


def bundle(result: TaskResult, **fields: object) -> EvidenceBundle:
    data: dict[str, object] = {
        "hypothesis": "add() returns the wrong thing",
        "claims": (CLAIM, REJECTED),
        "reproduction": Reproduction(
            name="repro", command=("pytest", "-k", "add"), base_exit_code=1, head_exit_code=0
        ),
        "plan": "1. remove the space\n2. run the tests",
        "result": result,
    }
    data.update(fields)
    return EvidenceBundle.model_validate(data)


def verified_result() -> TaskResult:
    return TaskResult(
        run_id="r", state=RunState.COMPLETED, attempts=1, change=CHANGE, checks=(PASS,)
    )


UNVERIFIED = {
    "failed": TaskResult(
        run_id="r", state=RunState.FAILED, reason="runner crashed", checks=(PASS,)
    ),
    "needs_human": TaskResult(run_id="r", state=RunState.NEEDS_HUMAN, reason="high-impact change"),
    "refused": TaskResult(run_id="r", state=RunState.REFUSED, reason="not authorised"),
    "completed_failing_check": TaskResult(
        run_id="r", state=RunState.COMPLETED, change=CHANGE, checks=(PASS, FAIL)
    ),
    "completed_no_checks": TaskResult(run_id="r", state=RunState.COMPLETED, change=CHANGE),
    "completed_no_change": TaskResult(run_id="r", state=RunState.COMPLETED, checks=(PASS,)),
}


def test_verified_renders_as_success() -> None:
    text = render_markdown(bundle(verified_result()))
    assert text.startswith("### ✅ Verified\n")
    assert "all 1 check passed" in text
    assert "`test` passed (exit 0)" in text
    assert "confirmed: fails on the base, passes on the head" in text
    assert "**rejected** (confidence 0.30)" in text
    assert "missing_file: 'x\\.py' does not exist" in text


@pytest.mark.parametrize("name", sorted(UNVERIFIED))
def test_unverified_never_renders_as_success(name: str) -> None:
    result = UNVERIFIED[name]
    assert not result.verified
    text = render_markdown(bundle(result))
    assert "✅" not in text
    assert not POSITIVE.search(text), POSITIVE.search(text)
    assert "not verified" in text.splitlines()[0]
    assert "Why this is not verified:" in text


def test_failing_check_is_named() -> None:
    text = render_markdown(bundle(UNVERIFIED["completed_failing_check"]))
    assert "`test` FAILED (exit 1)" in text
    assert "check 'test' failed \\(exit 1\\)" in text


def outside_fences(text: str) -> list[str]:
    """The lines of ``text`` that are not inside a fenced code block (where nothing renders)."""
    lines, fence = [], ""
    for line in text.splitlines():
        if fence:
            if line.strip() == fence:
                fence = ""
        elif line.startswith("```"):
            fence = line[: len(line) - len(line.lstrip("`"))]
        else:
            lines.append(line)
    return lines


untrusted = st.text(
    alphabet=st.sampled_from(list("✅✔☑✓ Verified`*#@[]()<>|\n-_!ab")), max_size=60
) | st.just("### ✅ Verified\n\nall checks passed @org/team <b>hi</b>")


@settings(max_examples=200)
@given(
    name=st.sampled_from(sorted(UNVERIFIED)),
    hypothesis=untrusted,
    plan=untrusted,
    statement=untrusted,
    quote=untrusted,
    reason=untrusted,
    check_name=untrusted,
)
def test_untrusted_text_cannot_fake_success(
    name: str, hypothesis: str, plan: str, statement: str, quote: str, reason: str, check_name: str
) -> None:
    base = UNVERIFIED[name]
    checks = tuple(c.model_copy(update={"name": check_name or "c"}) for c in base.checks)
    result = base.model_copy(update={"reason": reason or None, "checks": checks})
    claim = ClaimVerdict(
        claim=Claim(
            statement=statement, confidence=0.5, evidence=(Evidence(path=quote, quote=quote),)
        ),
        verdict=Verdict.INCONCLUSIVE,
    )
    text = render_markdown(bundle(result, hypothesis=hypothesis, plan=plan, claims=(claim,)))
    assert "✅" not in text
    assert "not verified" in text.splitlines()[0]
    assert [line for line in outside_fences(text) if line.startswith("#")] == [
        text.splitlines()[0],
        "#### Hypothesis",
        "#### Claims",
        "#### Reproduction",
        "#### Plan",
        "#### Checks",
    ]


def test_result_states_are_all_covered() -> None:
    assert {r.state for r in UNVERIFIED.values()} == set(TERMINAL_STATES)


def test_inline_code_is_inert() -> None:
    assert inline_code("a `b` c") == "``a `b` c``"
    assert inline_code("`x`") == "`` `x` ``"
    assert inline_code("") == "*(empty)*"
    assert inline_code("✅ done") == "`(check mark) done`"
    assert inline_code("x" * 10, limit=4) == "`xxxx … (6 more characters)`"


def test_code_block_fence_outgrows_its_content() -> None:
    block = code_block("```\nhi\n```")
    assert block.startswith("````text\n")
    assert block.endswith("\n````")


def test_plain_breaks_mentions_and_markup() -> None:
    text = plain("@org/team see [link](http://x) <b>")
    assert "@org" not in text
    assert "\\[link\\]\\(http://x\\)" in text.replace("\\:", ":")
    assert "\\<b\\>" in text


def test_no_plan_or_reproduction() -> None:
    text = render_markdown(bundle(verified_result(), plan=None, reproduction=None, claims=()))
    assert "No plan was recorded." in text
    assert "No reproduction was recorded." in text
    assert "No claims were made." in text


def test_bundle_verified_is_the_results() -> None:
    assert bundle(verified_result()).verified is True
    assert bundle(UNVERIFIED["failed"]).verified is False
    assert bundle(verified_result()).checks == (PASS,)
