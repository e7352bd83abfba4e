"""``python -m bot status``: ``status_and_next`` for one quest, from its journal in
Redis or from a journal file — what an agent, an operator or a script reads to know where a
quest stands and what may happen next. Nothing is written."""

from __future__ import annotations

from bot.core import FoldResult, Policy
from bot.core.gates import StatusAndNext, status_and_next
from bot.words.attempts import attempt_words, review_words


def of_result(result: FoldResult, policy: Policy) -> StatusAndNext | None:
    """The read of a folded journal; ``None`` for a journal that made no quest."""
    return None if result.quest is None else status_and_next(result.quest, policy)


def status_text(status: StatusAndNext) -> str:
    """The core's read in plain lines, with this attempt's reviews and the earlier attempts
    in people's words."""
    middle: list[str] = []
    if status.reviews:
        middle += ["", "reviews in this attempt:"]
        middle += [f"  {review_words(r)}" for r in status.reviews]
    if status.attempt_log:
        middle += ["", "earlier attempts:"]
        middle += [f"  {attempt_words(r)}" for r in status.attempt_log]
    return status.text(middle)
