"""``python -m bot status``: seed 003's ``status_and_next`` for one quest, from its journal in
Redis or from a journal file — what an agent, an operator or a script reads to know where a
quest stands and what may happen next. Nothing is written."""

from __future__ import annotations

from bot.core import FoldResult, Policy
from bot.core.gates import Role, StatusAndNext, status_and_next
from bot.github.attempts_words import attempt_words, review_words

ROLE_WORDS = {Role.MAINTAINER: "a maintainer", Role.CLAIM_OWNER: "the claim's owner",
              Role.REVIEWER: "a reviewer", Role.QUESTBOT: "questbot"}


def of_result(result: FoldResult, policy: Policy) -> StatusAndNext | None:
    """The read of a folded journal; ``None`` for a journal that made no quest."""
    return None if result.quest is None else status_and_next(result.quest, policy)


def status_text(status: StatusAndNext) -> str:
    lines = [f"quest {status.quest_id}: {status.state.value} — {status.meaning}",
             f"revision {status.revision}, attempt {status.attempt_number} "
             f"(proof attempts {status.attempts})"
             + (", shadow mode: automatic decisions are recorded only" if status.shadow else ""),
             "", "gates:"]
    for gate in status.gates:
        missing = [r for r in gate.required if r not in gate.present]
        have = "all evidence present" if gate.satisfied else f"missing {', '.join(missing)}"
        mode = "blocking" if gate.blocking else "advisory"
        lines.append(f"  {gate.name.value} ({mode}, at {gate.state.value}): {gate.position}; "
                     f"needs {', '.join(gate.required)}; {have}")
        seal = gate.seal
        if seal is not None:
            now = "current" if gate.seal_current else "not current"
            digests = ", ".join(f"{k} {v[:12]}" for k, v in seal.artifacts.items())
            lines.append(f"     sealed {seal.digest} ({now}; attempt {seal.attempt}, "
                         f"revision {seal.revision}): {digests}")
    lines += ["", "allowed now:"]
    for role, actions in status.allowed_actions.items():
        said = "; ".join(a.says for a in actions) if actions else "nothing"
        lines.append(f"  {ROLE_WORDS[role]}: {said}")
    if status.reviews:
        lines += ["", "reviews in this attempt:"]
        lines += [f"  {review_words(r)}" for r in status.reviews]
    if status.attempt_log:
        lines += ["", "earlier attempts:"]
        lines += [f"  {attempt_words(r)}" for r in status.attempt_log]
    who = ROLE_WORDS[status.next_action.role] if status.next_action.role else "nobody"
    lines += ["", f"next: {who} — {status.next_action.says}"]
    return "\n".join(lines)
