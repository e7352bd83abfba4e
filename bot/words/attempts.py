"""A quest's attempts on record (``bot.core.attempts``) in plain words: what each earlier
attempt tried, how it ended and what its reviewers said — for the status comment, ``python -m
bot status`` and anyone who asks why a quest is on its second plan.

Pure. The hypothesis, plan, reasons and logins are untrusted text (an agent's, a commenter's):
every one passes through ``quote``, which the status comment sets to an inert code span and
the CLI leaves as it is.
"""

from __future__ import annotations

from collections.abc import Callable

from bot.core import Quest
from bot.core.attempts import AttemptRecord, DecisionRecord
from bot.core.events import Verdict
from bot.words.timeline import REVIEW_ACTOR, reviewer

Quote = Callable[[str], str]

_VERDICT = {Verdict.APPROVE: "approved", Verdict.REVISE: "sent back", Verdict.REJECT: "rejected"}


def _same(text: str) -> str:
    return text


def review_words(review: DecisionRecord, quote: Quote = _same) -> str:
    """"checkpoint B sent back by `bob`: "the plan tests nothing"" and the like."""
    actor = review.actor
    if actor is not None and actor.startswith(REVIEW_ACTOR):  # a role, not a login
        by = reviewer(actor)
        who = by if by.startswith("questbot") else f"a review by {by}"
    else:
        who = quote(actor) if actor else "questbot's automatic review"
    said = f"checkpoint {review.gate.value} {_VERDICT[review.verdict]} by {who}"
    if review.automatic and actor and not actor.startswith(REVIEW_ACTOR):
        said += " (automatic)"
    if review.recorded_only:
        said += " (recorded only: it did not move the quest)"
    if review.reason:
        said += f": {quote(review.reason)}"
    return said


def attempt_words(record: AttemptRecord, quote: Quote = _same) -> str:
    """One earlier attempt in one paragraph."""
    parts = [f"Attempt {record.number} (revision {record.revision}) ended because "
             f"{record.ended_by}" + (f": {quote(record.reason)}" if record.reason else "")]
    tried = [f"{name} {quote(value)}" for name, value in
             (("hypothesis", record.hypothesis), ("reproduction", record.reproduction),
              ("plan", record.plan), ("patch head", record.head)) if value]
    if tried:
        parts.append("It had " + "; ".join(tried))
    if record.proof_attempts:
        bound = ", the last one proved" if record.proof_digest else ""
        parts.append(f"{record.proof_attempts} proof attempt"
                     f"{'s' if record.proof_attempts != 1 else ''}{bound}")
    if record.seals:
        parts.append("it submitted evidence at checkpoint" + ("s " if len(record.seals) > 1
                                                              else " ")
                     + ", ".join(s.gate.value for s in record.seals))
    reviews = [review_words(r, quote) for r in record.reviews]
    parts.append("reviews: " + "; ".join(reviews) if reviews else "no reviews")
    return ". ".join(parts) + "."


def attempts_summary(quest: Quest) -> str:
    """One line: which attempt this is and how the earlier ones ended."""
    log = quest.attempt_log
    if not log:
        return f"attempt {quest.attempt_number}, the first"
    ended = "; ".join(f"attempt {r.number}: {r.ended_by}" for r in log)
    return f"attempt {quest.attempt_number}; earlier, {ended}"


def attempts_lines(quest: Quest, quote: Quote = _same) -> list[str]:
    """Each earlier attempt, oldest first, then what this attempt's reviewers said so far."""
    lines = [attempt_words(r, quote) for r in quest.attempt_log]
    if quest.attempt_reviews:
        lines.append(f"Attempt {quest.attempt_number}, under way, reviews so far: "
                     + "; ".join(review_words(r, quote) for r in quest.attempt_reviews) + ".")
    return lines
