"""The evidence bundle of a run: what a person needs to judge it.

An ``EvidenceBundle`` gathers the hypothesis, every claim with the verdict validation gave it
(and all its reasons), the reproduction, the plan, and the terminal ``TaskResult`` with its
checks (exit codes and output digests). The bundle has no ``verified`` of its own to set:
``bundle.verified`` is the result's derived flag.

The bundle is provider-neutral: how it reads on GitHub (the Markdown of the status comment
and the check run) is the GitHub adapter's business (its ``evidence`` module).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from bot.agent.result import TaskResult
from bot.agent.validation import ClaimVerdict
from bot.core.proof import CheckRecord, Reproduction


class EvidenceBundle(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    hypothesis: str
    claims: tuple[ClaimVerdict, ...] = ()
    reproduction: Reproduction | None = None
    plan: str | None = None
    result: TaskResult
    proof_digest: str | None = None

    @property
    def checks(self) -> tuple[CheckRecord, ...]:
        return self.result.checks

    @property
    def verified(self) -> bool:
        return self.result.verified
