"""Evidence validation against a real git checkout on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.agent.errors import UnsafePath
from bot.agent.validation import (
    CheckoutView,
    Claim,
    ClaimVerdict,
    Evidence,
    ReasonCode,
    Verdict,
    overall_verdict,
    validate_claim,
    validate_claims,
)

R = ReasonCode


def claim(*evidence: Evidence, confidence: float = 0.9) -> Claim:
    return Claim(statement="add() has a stray space", confidence=confidence, evidence=evidence)


def codes(verdict: ClaimVerdict) -> list[ReasonCode]:
    return [reason.code for reason in verdict.reasons]


def test_supported_claim(checkout: Path) -> None:
    result = validate_claim(
        claim(Evidence(path="src/app.py", quote="return a +  b", line=3)), CheckoutView(checkout)
    )
    assert result.verdict is Verdict.SUPPORTED
    assert result.reasons == ()


def test_quotes_match_across_reindented_whitespace(checkout: Path) -> None:
    quote = 'def add(a, b):\n  """Add two numbers."""'
    result = validate_claim(claim(Evidence(path="src/app.py", quote=quote)), CheckoutView(checkout))
    assert result.verdict is Verdict.SUPPORTED


def test_no_evidence_is_rejected(checkout: Path) -> None:
    result = validate_claim(claim(), CheckoutView(checkout))
    assert result.verdict is Verdict.REJECTED
    assert codes(result) == [R.NO_EVIDENCE]


def test_missing_file_is_rejected(checkout: Path) -> None:
    result = validate_claim(claim(Evidence(path="src/nope.py")), CheckoutView(checkout))
    assert result.verdict is Verdict.REJECTED
    assert codes(result) == [R.MISSING_FILE]
    assert "'src/nope.py' does not exist" in result.reasons[0].message


def test_directory_is_not_a_file(checkout: Path) -> None:
    result = validate_claim(claim(Evidence(path="src")), CheckoutView(checkout))
    assert codes(result) == [R.MISSING_FILE]


def test_fabricated_quote_is_rejected(checkout: Path) -> None:
    evidence = Evidence(path="src/app.py", quote="return a - b  # subtracts by mistake")
    result = validate_claim(claim(evidence), CheckoutView(checkout))
    assert result.verdict is Verdict.REJECTED
    assert codes(result) == [R.QUOTE_NOT_FOUND]
    assert result.reasons[0].evidence_index == 0


def test_blank_quote_is_rejected(checkout: Path) -> None:
    result = validate_claim(claim(Evidence(path="README.md", quote="  \n")), CheckoutView(checkout))
    assert codes(result) == [R.EMPTY_QUOTE]


def test_line_beyond_the_file_is_rejected(checkout: Path) -> None:
    result = validate_claim(claim(Evidence(path="README.md", line=99)), CheckoutView(checkout))
    assert codes(result) == [R.LINE_OUT_OF_RANGE]
    assert "has 3 lines" in result.reasons[0].message


def test_low_confidence_is_inconclusive(checkout: Path) -> None:
    evidence = Evidence(path="src/app.py", quote="return a / b")
    result = validate_claim(claim(evidence, confidence=0.4), CheckoutView(checkout))
    assert result.verdict is Verdict.INCONCLUSIVE
    assert codes(result) == [R.LOW_CONFIDENCE]


def test_threshold_is_inclusive(checkout: Path) -> None:
    evidence = Evidence(path="src/app.py", quote="return a / b")
    view = CheckoutView(checkout)
    assert validate_claim(claim(evidence, confidence=0.7), view).verdict is Verdict.SUPPORTED
    strict = validate_claim(claim(evidence, confidence=0.7), view, min_confidence=0.71)
    assert strict.verdict is Verdict.INCONCLUSIVE


def test_every_reason_is_collected(checkout: Path) -> None:
    result = validate_claim(
        claim(
            Evidence(path="src/app.py", quote="return a / b"),  # fine
            Evidence(path="src/missing.py", quote="anything"),
            Evidence(path="src/app.py", quote="import os", line=400),
            Evidence(path="../outside.txt", quote="TOP SECRET"),
            Evidence(path="link_out"),
            confidence=0.2,
        ),
        CheckoutView(checkout),
    )
    assert result.verdict is Verdict.REJECTED
    assert [(r.code, r.evidence_index) for r in result.reasons] == [
        (R.MISSING_FILE, 1),
        (R.QUOTE_NOT_FOUND, 2),
        (R.LINE_OUT_OF_RANGE, 2),
        (R.UNSAFE_PATH, 3),
        (R.UNSAFE_PATH, 4),
        (R.LOW_CONFIDENCE, None),
    ]


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("../outside.txt", "'..' climbs out"),
        ("src/../../outside.txt", "'..' climbs out"),
        ("link_out", "outside the checkout"),
        (".git/config", "'.git'"),
        ("", "empty"),
        ("src/\x00app.py", "NUL"),
    ],
)
def test_paths_escaping_the_checkout_are_rejected(checkout: Path, path: str, why: str) -> None:
    result = validate_claim(claim(Evidence(path=path, quote="x")), CheckoutView(checkout))
    assert codes(result) == [R.UNSAFE_PATH]
    assert why in result.reasons[0].message
    with pytest.raises(UnsafePath):
        CheckoutView(checkout).read(path)


def test_absolute_path_is_rejected_even_when_inside(checkout: Path) -> None:
    inside = str(checkout / "README.md")
    result = validate_claim(claim(Evidence(path=inside)), CheckoutView(checkout))
    assert codes(result) == [R.UNSAFE_PATH]
    assert "absolute" in result.reasons[0].message


def test_symlink_into_git_dir_is_rejected(checkout: Path) -> None:
    (checkout / "sneaky").symlink_to(checkout / ".git" / "config")
    with pytest.raises(UnsafePath, match=r"'\.git'"):
        CheckoutView(checkout).exists("sneaky")


def test_symlink_inside_the_checkout_is_followed(checkout: Path) -> None:
    result = validate_claim(
        claim(Evidence(path="link_in", quote="return a / b")), CheckoutView(checkout)
    )
    assert result.verdict is Verdict.SUPPORTED


class DictView:
    """Any object with ``exists``/``read`` is a repository view (here: a dict of files)."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = files

    def exists(self, path: str) -> bool:
        return path in self.files

    def read(self, path: str) -> str:
        try:
            return self.files[path]
        except KeyError:
            raise FileNotFoundError(path) from None


def test_validation_works_over_any_view() -> None:
    view = DictView({"a.py": "x = 1\n"})
    good = Claim(
        statement="x is one", confidence=1.0, evidence=(Evidence(path="a.py", quote="x = 1"),)
    )
    bad = Claim(statement="y", confidence=1.0, evidence=(Evidence(path="b.py"),))
    verdicts = validate_claims([good, bad], view)
    assert [v.verdict for v in verdicts] == [Verdict.SUPPORTED, Verdict.REJECTED]
    assert overall_verdict(verdicts) is Verdict.REJECTED
    assert overall_verdict(verdicts[:1]) is Verdict.SUPPORTED
    assert overall_verdict(()) is Verdict.REJECTED


def test_lexical_guard_applies_before_any_view() -> None:
    view = DictView({"../etc/passwd": "root"})  # a careless view must not be asked
    result = validate_claim(claim(Evidence(path="../etc/passwd", quote="root")), view)
    assert codes(result) == [R.UNSAFE_PATH]


def test_confidence_must_be_a_probability() -> None:
    with pytest.raises(ValueError, match="less than or equal to 1"):
        Claim(statement="s", confidence=1.5)
