"""What an effect questbot could not do is, in a maintainer's words — and whose it was.

An effect is either a write to GitHub (a comment, a check run, a merge, a revert, a re-run) or
questbot's own work (the agent's run against the model endpoint, the proof in the sandbox,
triage, the watch's timers). A failure of the second kind is no GitHub failure, and saying so
sends people looking in the wrong place (issue 25: a model endpoint refusing requests was
listed under "Could not be done on GitHub"). ``could_not`` says which it was.
"""

from __future__ import annotations

from bot.core.rules.gave_up import WORK_WORDS

ON_GITHUB: dict[str, str] = {
    "request_checkpoint": "ask for the checkpoint's review on GitHub",
    "request_spend": "ask for more spend on GitHub",
    "show_claim": "show who holds the review on GitHub",
    "notify_inbox": "update the inbox issue on GitHub",
    "reply_comment": "reply on GitHub",
    "react": "react to a comment on GitHub",
    "merge_signal": "mark the duplicate on GitHub",
    "run_probes": "re-run the suspect check on GitHub",
    "rerun_check": "re-run the failed check on GitHub",
    "land": "merge the approved change on GitHub",
    "rebase": "rebase the change on GitHub",
    "rollback": "revert the merged change on GitHub",
}
"""Effects that are writes to GitHub, and what each was."""

OWN_WORK: dict[str, str] = {
    **WORK_WORDS,
    "stop_agent": "stop the agent's run",
    "reflect": "write or review the reflection",
    "consolidate": "write or review the quest's lesson",
    "register_regression_probe": "set up the watch for a regression",
    "resume_dependents": "resume the quests that wait on this one",
    "deliver_child_evidence": "pass the evidence on to the parent quest",
    "mute_fingerprint": "mute the ignored failure",
}
"""questbot's own work, never GitHub's: what each was."""


def what(effect_type: str) -> str:
    """What ``effect_type`` does, as a verb phrase ("run the proof", "reply on GitHub")."""
    return ON_GITHUB.get(effect_type) or OWN_WORK.get(effect_type) or \
        effect_type.replace("_", " ")


def could_not(effect_type: str, error: str | None = None) -> str:
    """"could not run the agent's stage: …" — GitHub named only for GitHub's writes."""
    return f"could not {what(effect_type)}" + (f": {error}" if error else "")
