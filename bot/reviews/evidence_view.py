"""The pinned evidence as a ``RepositoryView``, so a reviewer's cited evidence is checked by
the agent's validation (``bot.agent.validation``) exactly as a research claim is checked
against a checkout: a citation names ``artifacts/<name>`` or ``context/<name>`` and quotes it.

A reviewer sees only what was pinned, so it can cite only that: a quote from anywhere else —
the producer's conversation, the repository, its own imagination — is ``missing_file`` or
``quote_not_found``.
"""

from __future__ import annotations

from collections.abc import Mapping

from bot.agent.validation import Claim, ClaimVerdict, Verdict, validate_claims
from bot.reviews.models import PinnedEvidence


def citation(kind: str, name: str) -> str:
    """The path a reviewer cites one piece of pinned evidence by."""
    return f"{kind}/{name.replace(' ', '-')}"


class TextsView:
    """Named texts as the ``RepositoryView`` claims are checked against: what a reviewer was
    shown, and nothing else (an empty text is not there to cite)."""

    def __init__(self, files: Mapping[str, str]) -> None:
        self.files = {path: text for path, text in files.items() if text}

    def exists(self, path: str) -> bool:
        return path in self.files

    def read(self, path: str) -> str:
        try:
            return self.files[path]
        except KeyError:
            raise FileNotFoundError(path) from None


def pinned_view(pinned: PinnedEvidence) -> TextsView:
    files = {citation("artifacts", k): v for k, v in pinned.artifacts.items()}
    files.update({citation("context", k): v for k, v in pinned.context.items()})
    return TextsView(files)


def check_citations(claims: tuple[Claim, ...], pinned: PinnedEvidence
                    ) -> tuple[bool, tuple[ClaimVerdict, ...]]:
    """Whether the verdict stands on its cited evidence: at least one claim, none rejected."""
    verdicts = tuple(validate_claims(claims, pinned_view(pinned)))
    founded = bool(verdicts) and all(v.verdict is not Verdict.REJECTED for v in verdicts)
    return founded, verdicts


def problems(verdicts: tuple[ClaimVerdict, ...]) -> list[str]:
    """The rejected claims, in words for the model and for the record."""
    return [f"{v.claim.statement[:200]!r}: " + "; ".join(r.message for r in v.reasons)
            for v in verdicts if v.verdict is Verdict.REJECTED]
