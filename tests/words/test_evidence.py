"""The evidence as GitHub Markdown: an unverified result never renders as success, and
untrusted text stays inert."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.agent.validation import Claim, ClaimVerdict, Evidence, Verdict
from bot.words.evidence import render_markdown
from bot.words.markdown import code_block, inline_code, plain
from tests.agent.bundles import UNVERIFIED, bundle, verified_result

POSITIVE = re.compile(r"(?<!not )(?<!un)\bverified\b", re.IGNORECASE)


def test_verified_renders_as_success() -> None:
    text = render_markdown(bundle(verified_result()))
    assert text.startswith("### ✅ Verified\n")
    assert "all 1 check passed" in text
    assert "`test` passed (exit 0)" in text
    assert "confirmed: fails on the base, passes on the head" in text
    assert "**rejected** (the agent is 30% sure)" in text
    assert "no such file: 'x\\.py' does not exist" in text


@pytest.mark.parametrize("name", sorted(UNVERIFIED))
def test_unverified_never_renders_as_success(name: str) -> None:
    result = UNVERIFIED[name]
    assert not result.verified
    text = render_markdown(bundle(result))
    assert "✅" not in text
    assert not POSITIVE.search(text), POSITIVE.search(text)
    assert "not verified" in text.splitlines()[0]
    if name == "needs_human":  # a checkpoint is a normal step: what comes after it, not a fault
        assert "This is a checkpoint, as planned" in text and "Still to come:" in text
        assert "did not complete" not in text
    else:
        assert "Why this is not verified:" in text


def test_a_run_stopped_at_a_checkpoint_of_a_paused_quest_does_not_say_it_waits() -> None:
    result = UNVERIFIED["needs_human"]
    text = render_markdown(bundle(result), paused=True)
    assert "the quest is paused" in text.splitlines()[0]
    assert "not verified" in text.splitlines()[0]
    assert "Reason:" not in text and "waits for" not in text


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
