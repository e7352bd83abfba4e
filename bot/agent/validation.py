"""Evidence validation: the verdict comes from the repository, never from anyone's assertion.

A claim (from a model or from a reviewer's comment) says something about the repository,
with a confidence and the evidence it rests on: paths, optionally a quote and a line. The
claim is checked against the checkout, independent of which model or provider produced it:

* no evidence at all                       -> rejected (``no_evidence``)
* a path that is absolute, climbs out with
  ``..``, goes through ``.git`` or resolves
  (via symlinks) outside the checkout       -> rejected (``unsafe_path``)
* a path with no file behind it            -> rejected (``missing_file``)
* a quote that is not in that file          -> rejected (``quote_not_found``)
* a blank quote                             -> rejected (``empty_quote``)
* a line beyond the end of that file        -> rejected (``line_out_of_range``)
* all evidence holds, confidence below
  ``min_confidence``                        -> inconclusive (``low_confidence``)

Every reason is collected, for every piece of evidence, rather than stopping at the first:
the list of reasons is the report people read. A rejected claim also lists ``low_confidence``
when it applies, so the report is complete.

Quotes are compared with runs of whitespace collapsed to one space on both sides, because
models re-indent and re-wrap what they quote; the characters themselves must match exactly.
A quote and a line are checked independently (the quote anywhere in the file, the line within
the file), because models are often a line or two off and that alone is not fabrication.

Reading goes through ``RepositoryView`` (``exists``/``read``), so validation never decides
what "the checkout" is. ``CheckoutView`` is the implementation over a directory on disk.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import StrEnum
from pathlib import Path, PurePosixPath
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from bot.agent.beneath import read_beneath
from bot.agent.errors import UnsafePath

DEFAULT_MIN_CONFIDENCE = 0.7
MAX_EVIDENCE_BYTES = 16_000_000
"""What of a cited file a quote is looked for in: its first 16 MB."""


class RepositoryView(Protocol):
    """Read access to one checkout. Both methods may raise ``UnsafePath``."""

    def exists(self, path: str) -> bool:
        """Whether ``path`` names a regular file in the checkout."""
        ...

    def read(self, path: str) -> str:
        """The text of the file at ``path`` (``FileNotFoundError`` when there is none)."""
        ...


class Evidence(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    quote: str | None = None
    line: int | None = Field(default=None, ge=1)


class Claim(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    statement: str
    confidence: float = Field(ge=0.0, le=1.0)
    evidence: tuple[Evidence, ...] = ()


class Verdict(StrEnum):
    SUPPORTED = "supported"
    INCONCLUSIVE = "inconclusive"
    REJECTED = "rejected"


class ReasonCode(StrEnum):
    NO_EVIDENCE = "no_evidence"
    UNSAFE_PATH = "unsafe_path"
    MISSING_FILE = "missing_file"
    EMPTY_QUOTE = "empty_quote"
    QUOTE_NOT_FOUND = "quote_not_found"
    LINE_OUT_OF_RANGE = "line_out_of_range"
    LOW_CONFIDENCE = "low_confidence"


class Reason(BaseModel):
    """One thing wrong with a claim; ``evidence_index`` points into ``claim.evidence``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    code: ReasonCode
    message: str
    evidence_index: int | None = None


class ClaimVerdict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    claim: Claim
    verdict: Verdict
    reasons: tuple[Reason, ...] = ()


_SEVERITY = {Verdict.SUPPORTED: 0, Verdict.INCONCLUSIVE: 1, Verdict.REJECTED: 2}
_WHITESPACE = re.compile(r"\s+")


def lexical_path_problem(path: str) -> str | None:
    """Why ``path`` cannot name a file inside a checkout, judged from its text alone."""
    if not path or not path.strip():
        return "the path is empty"
    if "\x00" in path:
        return "the path contains a NUL byte"
    pure = PurePosixPath(path)
    if pure.is_absolute() or re.match(r"^[A-Za-z]:[\\/]", path):
        return "absolute paths are outside the checkout"
    if ".." in pure.parts:
        return "'..' climbs out of the checkout"
    if pure.parts and pure.parts[0] == ".git":
        return "'.git' holds repository internals, not checkout content"
    return None


def _normalise(text: str) -> str:
    return _WHITESPACE.sub(" ", text).strip()


def _check_evidence(index: int, item: Evidence, view: RepositoryView) -> list[Reason]:
    def reason(code: ReasonCode, message: str) -> Reason:
        return Reason(code=code, message=message, evidence_index=index)

    problem = lexical_path_problem(item.path)
    if problem is not None:
        return [reason(ReasonCode.UNSAFE_PATH, f"{item.path!r}: {problem}")]
    missing = reason(ReasonCode.MISSING_FILE, f"{item.path!r} does not exist in the checkout")
    try:
        if not view.exists(item.path):
            return [missing]
        text = view.read(item.path)
    except UnsafePath as exc:
        return [reason(ReasonCode.UNSAFE_PATH, f"{item.path!r}: {exc.reason}")]
    except FileNotFoundError:
        return [missing]

    found: list[Reason] = []
    if item.quote is not None:
        wanted = _normalise(item.quote)
        if not wanted:
            found.append(reason(ReasonCode.EMPTY_QUOTE, f"the quote from {item.path!r} is blank"))
        elif wanted not in _normalise(text):
            found.append(
                reason(
                    ReasonCode.QUOTE_NOT_FOUND,
                    f"{item.path!r} does not contain the quoted text {_excerpt(item.quote)!r}",
                )
            )
    if item.line is not None:
        count = len(text.splitlines())
        if item.line > count:
            found.append(
                reason(
                    ReasonCode.LINE_OUT_OF_RANGE,
                    f"{item.path!r} has {count} lines; line {item.line} does not exist",
                )
            )
    return found


def _excerpt(text: str, limit: int = 80) -> str:
    flat = _normalise(text)
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def validate_claim(
    claim: Claim, view: RepositoryView, *, min_confidence: float = DEFAULT_MIN_CONFIDENCE
) -> ClaimVerdict:
    """Check every piece of ``claim``'s evidence against ``view``; collect every reason."""
    reasons: list[Reason] = []
    if not claim.evidence:
        reasons.append(Reason(code=ReasonCode.NO_EVIDENCE, message="the claim cites no evidence"))
    for index, item in enumerate(claim.evidence):
        reasons.extend(_check_evidence(index, item, view))
    rejected = bool(reasons)
    if claim.confidence < min_confidence:
        reasons.append(
            Reason(
                code=ReasonCode.LOW_CONFIDENCE,
                message=f"confidence {claim.confidence:.2f} is below the threshold "
                f"{min_confidence:.2f}",
            )
        )
    if rejected:
        verdict = Verdict.REJECTED
    elif reasons:
        verdict = Verdict.INCONCLUSIVE
    else:
        verdict = Verdict.SUPPORTED
    return ClaimVerdict(claim=claim, verdict=verdict, reasons=tuple(reasons))


def validate_claims(
    claims: Iterable[Claim],
    view: RepositoryView,
    *,
    min_confidence: float = DEFAULT_MIN_CONFIDENCE,
) -> tuple[ClaimVerdict, ...]:
    return tuple(validate_claim(c, view, min_confidence=min_confidence) for c in claims)


def overall_verdict(verdicts: Iterable[ClaimVerdict]) -> Verdict:
    """The worst verdict among ``verdicts``; no claims at all is ``rejected``: nothing to act on."""
    worst: Verdict | None = None
    for item in verdicts:
        if worst is None or _SEVERITY[item.verdict] > _SEVERITY[worst]:
            worst = item.verdict
    return Verdict.REJECTED if worst is None else worst


class CheckoutView:
    """A ``RepositoryView`` over a checkout directory; nothing outside ``root`` is readable.

    Lexical checks (absolute, ``..``, ``.git``) come first; then the path is resolved, following
    symlinks, and must still lie inside the resolved root, so a symlink pointing out of the
    checkout is refused rather than followed.
    """

    def __init__(self, root: Path | str) -> None:
        self._root = Path(root).resolve(strict=True)

    @property
    def root(self) -> Path:
        return self._root

    def resolve(self, path: str) -> Path:
        """Where ``path`` is on disk; ``UnsafePath`` when that is not inside the checkout."""
        problem = lexical_path_problem(path)
        if problem is not None:
            raise UnsafePath(path, problem)
        resolved = (self._root / path).resolve(strict=False)
        if resolved != self._root and self._root not in resolved.parents:
            raise UnsafePath(path, "it resolves (through a symlink) outside the checkout")
        inside = resolved.relative_to(self._root)
        if inside.parts and inside.parts[0] == ".git":
            raise UnsafePath(path, "it resolves into '.git', which is not checkout content")
        return resolved

    def exists(self, path: str) -> bool:
        return self.resolve(path).is_file()

    def read(self, path: str) -> str:
        """The file's text, opened without following a link (``bot.agent.beneath``): sandboxed
        code may have changed the checkout since ``resolve`` judged the path."""
        inside = self.resolve(path).relative_to(self._root)
        try:
            data = read_beneath(self._root, inside.as_posix(), MAX_EVIDENCE_BYTES)
        except FileNotFoundError:
            raise
        except OSError:
            raise UnsafePath(path, "it is not a regular file of the checkout") from None
        return data.decode("utf-8", errors="replace")
