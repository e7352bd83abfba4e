"""An effect questbot gave up on: recorded, and — when the quest's state was waiting on it —
the quest parks, so nothing sits in a working state with nothing running.

Why. The effect runner retries a failing effect with back-off and then records it as failed
for good (``effect_failed``). Until issue 25 that only counted the failure: a quest whose
``start_agent`` failed for good stayed ``researching`` for ever — its check run in progress,
its status comment saying the agent gathers evidence, no park and no inbox entry — because
nothing else would ever move it. The rule: each working state names the work it waits on
(``bot.core.table.WAITS_ON``, the effects ``asks.enter`` asks for when it is entered again),
and when that work fails for good *for the quest's current revision*, the quest parks with
``work_failed``, the reason in words a maintainer reads, and an inbox entry. ``/resume``
enters the state again, which asks for the same work anew.

A failure of any other effect (a reply, a reaction, an inbox edit, work of an older revision)
changes nothing but the count: the quest still has what moves it. Checkpoints, a claimed
review and ``triaged`` wait for people, not for questbot, and ``parked`` waits already.
"""

from __future__ import annotations

from bot.core.effects import EffectType as E
from bot.core.events.bookkeeping import EffectFailed
from bot.core.policy import Policy
from bot.core.quest import ParkReason, Quest
from bot.core.rules.asks import Result, park
from bot.core.states import State
from bot.core.table import WAITS_ON

WORK_WORDS: dict[str, str] = {
    E.RUN_TRIAGE.value: "triage the signal",
    E.RERUN_CHECK.value: "re-run the failed check",
    E.START_AGENT.value: "run the agent's stage",
    E.START_RESPONDENT_RUN.value: "run the stage the spend paid for",
    E.REBASE.value: "rebase the change onto the moved base",
    E.RUN_PROOF.value: "run the proof",
    E.LAND.value: "merge the approved change",
    E.START_WATCH.value: "start watching the merged change",
    E.ROLLBACK.value: "revert the merged change",
}
"""What each of that work is, in a maintainer's words."""


def revision_of(quest_id: str, effect_key: str) -> int | None:
    """The revision in ``effect_key`` (``quest:revision:type:event:occurrence``, see
    ``bot.core.effects.effect_key``); ``None`` when the key is not this quest's."""
    head = f"{quest_id}:"
    if not effect_key.startswith(head):
        return None
    revision = effect_key[len(head):].split(":", 1)[0]
    return int(revision) if revision.isdigit() else None


def stuck_by(q: Quest, e: EffectFailed) -> bool:
    """Whether ``e`` is the failure of the work ``q``'s state waits on, at its revision.

    An older revision's work that failed leaves the quest its newer work: a revision that
    moves a working state on asks for that work again, after the failed one (an outbox is
    delivered in order). Triage is the exception: a person's push while the signal is triaged
    counts a revision and asks for nothing, so any triage that fails leaves it waiting."""
    if e.effect_type not in WAITS_ON.get(q.state, frozenset()):
        return False
    return q.state is State.SENSED or revision_of(q.id, e.effect_key) == q.revision


def effect_failed(q: Quest, e: EffectFailed, _p: Policy) -> Result:
    counted = q.evolve({"failed_effects": q.failed_effects + 1,
                        "last_failure": f"{e.effect_type}: {e.error}"})
    if not stuck_by(q, e):
        return counted, []
    tries = f" ({e.tries} tries)" if e.tries > 1 else ""
    note = (f"questbot could not {WORK_WORDS[e.effect_type]}{tries} and stopped trying: "
            f"{e.error}")
    nq = park(counted, ParkReason.WORK_FAILED, q.state, park_note=note[:1000])
    return nq, [(E.NOTIFY_INBOX, {"reason": note[:500]})]
