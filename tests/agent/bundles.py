"""Evidence bundles for the tests: a verified result and one unverified result per way of not
being verified (every terminal state among them), with claims of both verdicts."""

from __future__ import annotations

from bot.agent.evidence import EvidenceBundle
from bot.agent.machine import RunState
from bot.agent.result import AppliedChange, TaskResult
from bot.agent.validation import Claim, ClaimVerdict, Evidence, Reason, ReasonCode, Verdict
from bot.core.proof import CheckRecord, Reproduction

CHANGE = AppliedChange(base="b" * 40, head="c" * 40, files=("src/app.py",))
PASS = CheckRecord(name="test", command=("pytest", "-q"), exit_code=0, output_sha256="d" * 64)
FAIL = CheckRecord(name="test", command=("pytest", "-q"), exit_code=1, output_sha256="e" * 64)

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
