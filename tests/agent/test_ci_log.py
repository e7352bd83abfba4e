"""Trimming a job's log to its failing step: bounded, without timestamps, the failure kept."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bot.agent.ci_log import trim
from bot.agent.model.untrusted import LOG_LIMIT

line = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")),
               max_size=60).filter(lambda t: "##[" not in t)
STAMP = "2026-03-01T10:00:00.1234567Z "


@given(st.text(max_size=3000), st.integers(min_value=10, max_value=2000))
def test_any_log_is_trimmed_within_the_limit(raw: str, limit: int) -> None:
    assert len(trim(raw, limit)) <= limit


@given(st.lists(line, max_size=8), st.lists(line, min_size=1, max_size=30),
       st.lists(line, max_size=5))
def test_the_failing_step_is_kept_and_nothing_before_it(
        before: list[str], output: list[str], after: list[str]) -> None:
    steps = ["##[group]Run setup", *before, "##[endgroup]",
             "##[group]Run make test", "make test", "##[endgroup]", *output,
             "##[error]Process completed with exit code 2.", "Post job cleanup.", *after]
    raw = "".join(f"{STAMP}{text}\n" for text in steps)
    kept = trim(raw)
    assert kept.startswith("##[group]Run make test\n")
    assert kept.endswith("##[error]Process completed with exit code 2.")
    assert "Run setup" not in kept and "Post job cleanup." not in kept
    assert kept.splitlines()[3:-1] == output  # the output, line for line, without stamps


def test_a_huge_step_keeps_its_tail() -> None:
    raw = "##[group]Run pytest\n" + "x\n" * 50_000 + "1 failed\n##[error]exit code 1.\n"
    kept = trim(raw)
    assert len(kept) == LOG_LIMIT and kept.startswith("…")
    assert kept.endswith("1 failed\n##[error]exit code 1.")
