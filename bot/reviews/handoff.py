"""The reviewer handoff prompt: what to review, the pinned evidence, the role's checklist, and
how to answer. It is handed to a reviewer session with the capability, and it is the system
prompt of questbot's own model reviewer (``automatic``), so both review the same way.

Evidence text comes from the quest (a model's hypothesis and plan, a repository's names) and
is fenced as untrusted data: the reviewer reads it, never obeys it.
"""

from __future__ import annotations

from bot.agent.model.untrusted import fence
from bot.core.policy import Checkpoint
from bot.reviews.evidence_view import citation
from bot.reviews.models import PinnedEvidence, ReviewRole

CHECKLISTS: dict[ReviewRole, tuple[str, ...]] = {
    ReviewRole.DESIGN: (
        "Can this plan actually test its claim: would the reproduction fail for the reason "
        "the hypothesis gives, and pass only when that reason is fixed?",
        "Is the success criterion (which checks must pass) decided before the run, not after?",
        "Is the scope (which files may change) bounded and no wider than the claim needs?",
    ),
    ReviewRole.EXPERIMENT: (
        "Does the evidence support the conclusion: does the proof show the reproduction "
        "failing on the base and passing on the head?",
        "Was the approved plan followed: the files it allowed, the checks it named?",
        "Does the write-up interpret what it shows, and say honestly what it does not?",
    ),
}
GENERIC = ("Is every claim backed by evidence you can point at in what is pinned?",
           "Would you merge this as it stands? If not, say what must change.")

VERDICTS = ("approve: the gate's evidence holds up; "
            "revise: the direction is right but something named must change; "
            "reject: the quest should stop here, with the reason")


def checklist(role: ReviewRole) -> tuple[str, ...]:
    return CHECKLISTS.get(role, GENERIC)


def handoff_prompt(role: ReviewRole, checkpoint: Checkpoint, pinned: PinnedEvidence,
                   *, review_url: str | None = None) -> str:
    """The prompt a reviewer session starts from."""
    lines = [
        f"You are the {role.value.replace('_', ' ')} for checkpoint {checkpoint.value} of a "
        "questbot quest. Be adversarial: look for the reason this should not pass. A "
        "rejection with a reason is the normal case, not a failure.",
        "You work only from the pinned evidence below; you do not see, and must not ask for, "
        "the conversation of the agent that produced it.",
        "",
        "Checklist:",
        *(f"- {item}" for item in checklist(role)),
        "",
        f"Answer with exactly one verdict — {VERDICTS} — and a synopsis, with the claims it "
        "rests on: each cites a piece of the pinned evidence by its path (below, e.g. "
        "artifacts/plan) and quotes it exactly. Claims citing anything else are rejected.",
        "",
        f"Pinned snapshot: revision {pinned.snapshot.core.revision}, head "
        f"{pinned.snapshot.core.head or '(none)'}, base {pinned.snapshot.core.base or '(none)'}.",
    ]
    for name, text in pinned.artifacts.items():
        lines += ["", f"Artifact {name} ({citation('artifacts', name)}):",
                  fence(f"artifact {name}", text or "(absent)")]
    for name, text in pinned.context.items():
        lines += ["", f"Context, {name} ({citation('context', name)}):",
                  fence(f"context {name}", text)]
    if review_url is not None:
        lines += ["", f"Start with POST {review_url}/start and submit with POST "
                  f"{review_url}/submit, the capability as the bearer token and your own "
                  "session id in the body."]
    return "\n".join(lines)
