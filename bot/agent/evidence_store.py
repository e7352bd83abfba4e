"""What the agent and the proof established, per quest and revision, kept in Redis.

The agent adapters (``bot.agent.runs``, ``bot.agent.proofs``) record one ``StageRecord`` per
finished stage run; ``EvidenceStore.lookup(quest)`` turns the records of the quest's current
revision into the ``EvidenceBundle`` the GitHub projection renders in the status comment and
the check run (``Projection(evidence=store.lookup)``).

Layout. One hash per quest, ``q:{<quest id>}:evidence`` — the quest's hash tag, so it lives in
the same Redis Cluster slot as the quest's journal and ``q:{<id>}:gh``. Fields:

* ``<revision>:<stage>`` — the latest ``StageRecord`` JSON of that stage at that revision
  (stages: ``research``, ``reproduce``, ``plan``, ``patch``, ``proof``); a stage run again at
  the same revision (a revise, a repair, a second proof) replaces its record;
* ``seq`` — a counter (``HINCRBY``) that orders the records, so the bundle knows which came
  last.

Each record is a versioned record (``bot.journal.records``, kind ``evidence``). Version 2, this
release's, leaves out the revision and stage (the field's name says them) and the fields left
at their defaults; version 1, what releases before it wrote, was the bare ``StageRecord`` JSON
with every field, and is upcast on reading. A record of a newer version than this release reads
raises ``NewerRecord`` rather than being skipped: a status comment rendered without it would
tell people less than the quest established (``docs/operations.md``, *Upgrades*).

What a record holds:

==========  ====================================================================
research    the hypothesis and every claim with its verdict and reasons
reproduce   the reproduction (name, argv, exit codes), its commit, the plan, risk
plan        the revised plan and risk
patch       the patch run's ``TaskResult`` (its in-run checks and change)
proof       the proof's checks (the configured commands and the reproduction at
            the head), the reproduction at base and head, the proof digest, and the
            tail of what each command printed
==========  ====================================================================

Every record carries the ``TaskResult`` of its run, so ``verified`` stays what
``bot.agent.result`` derives and is never set here. A research, reproduce or plan run that
stopped at a checkpoint has not reached a terminal state; its result is that run escalated to
``needs_human`` (a person decides at the checkpoint), which is what it is. A proof is reported
as a result ``completed`` only when the adapter returned ``proof_completed``; anything else is
``failed`` with the adapter's reason — so a failing proof renders "not verified" even where
its checks all exited 0 (a reproduction that passes on the base).

Building the bundle. Records are taken in ``seq`` order along the pipeline research →
reproduce → plan → patch → proof; a record drops every later-stage record before it (a repair
patch makes the failed proof before it stale, a new research makes everything after it stale).
The bundle's result is the newest record's; the proof digest is shown only when that is the
proof. ``lookup`` returns ``None`` until research for the revision has finished.

A revision that did not go back through research (a person pushed to the quest branch: the
core keeps the hypothesis, reproduction and plan) carries the research, reproduce and plan
records of the earlier revision forward, but only while the quest still holds exactly what
they say (its hypothesis, reproduction and plan); the patch and proof of an earlier revision
are never carried — the head they were about is gone. A quest researched again (a regression
reopened it) holds no hypothesis until the new research ends, so the old one is not shown.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bot.agent.evidence import CommandOutput, EvidenceBundle
from bot.agent.machine import RunState
from bot.agent.result import AppliedChange, TaskResult
from bot.agent.validation import ClaimVerdict
from bot.core import Quest
from bot.core.proof import CheckRecord, Reproduction, Risk
from bot.journal.keys import evidence_key
from bot.journal.records import RecordError, dump_record, load_record, versions
from bot.journal.wire import RedisClient

log = logging.getLogger(__name__)

NO_HYPOTHESIS = "(the research run wrote no hypothesis)"


class Piece(StrEnum):
    RESEARCH = "research"
    REPRODUCE = "reproduce"
    PLAN = "plan"
    PATCH = "patch"
    PROOF = "proof"


ORDER: dict[Piece, int] = {piece: n for n, piece in enumerate(Piece)}
CARRIED = (Piece.RESEARCH, Piece.REPRODUCE, Piece.PLAN)
"""What a later revision may inherit, while the quest still holds it."""


class StageRecord(BaseModel):
    """What one finished stage run (or one proof) established."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    piece: Piece
    revision: int = Field(ge=1)
    seq: int = 0
    result: TaskResult
    hypothesis: str | None = None
    claims: tuple[ClaimVerdict, ...] = ()
    reproduction: Reproduction | None = None
    commit: str | None = None
    plan: str | None = None
    risk: Risk | None = None
    head: str | None = None
    base: str | None = None
    proof_digest: str | None = None
    outputs: tuple[CommandOutput, ...] = ()
    lines: tuple[int, int] | None = None
    """The lines the proof saw the head add and remove against the base."""




def field_name(revision: int, piece: Piece) -> str:
    return f"{revision}:{piece.value}"


def proof_result(*, quest_id: str, revision: int, completed: bool, reason: str | None,
                 attempts: int, risk: Risk, base: str, head: str, files: Sequence[str],
                 checks: tuple[CheckRecord, ...]) -> TaskResult:
    """The proof as a terminal result: ``completed`` only when the adapter completed it.

    ``change`` is what the proof itself saw change between the base (with the reproduction
    laid over it) and the head; ``verified`` is then derived by ``TaskResult`` as always."""
    change = (AppliedChange(base=base, head=head, files=tuple(files))
              if files and head != base else None)
    return TaskResult(
        run_id=f"{quest_id}:proof:{revision}",
        state=RunState.COMPLETED if completed else RunState.FAILED,
        reason=None if completed else (reason or "the proof did not pass"),
        attempts=max(attempts, 0), risk=risk, change=change, checks=checks)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def dump_stage(record: StageRecord) -> bytes:
    """``record`` as stored, at the evidence version this release writes (module docs)."""
    if versions()["evidence"] == 1:
        return dump_record("evidence", record.model_dump(mode="json"))
    data = record.model_dump(mode="json", exclude_defaults=True)
    data.pop("piece", None)
    data.pop("revision", None)
    return dump_record("evidence", data)


def load_stage(field: str, value: bytes | str) -> StageRecord:
    """The record stored under ``field`` (``<revision>:<stage>``), whichever release wrote it;
    raises ``NewerRecord`` for one a newer release wrote, ``ValueError`` for a bad one."""
    data = load_record("evidence", value)
    if versions()["evidence"] >= 2:
        revision, _, piece = field.partition(":")
        data = {**data, "piece": piece, "revision": int(revision)}
    return StageRecord.model_validate(data)


def _parse(raw: dict[bytes | str, bytes | str]) -> list[StageRecord]:
    records = []
    for name, value in raw.items():
        field = _text(name)
        if field == "seq":
            continue
        try:
            records.append(load_stage(field, value))
        except (RecordError, ValidationError, ValueError) as exc:
            log.warning("evidence field %s is unreadable and is skipped: %s", field, exc)
    return records


def _holds(quest: Quest, record: StageRecord) -> bool:
    """The quest still holds what ``record`` (from an earlier revision) says."""
    if record.piece is Piece.RESEARCH:
        return quest.hypothesis is not None and record.hypothesis == quest.hypothesis
    if record.piece is Piece.REPRODUCE:
        repro = record.reproduction
        return (repro is not None and quest.reproduction == repro.name
                and tuple(quest.reproduction_command) == repro.command)
    if record.piece is Piece.PLAN:
        return quest.plan is not None and record.plan == quest.plan
    return False


def select(quest: Quest, records: Iterable[StageRecord]) -> list[StageRecord]:
    """The records that speak for ``quest``'s current revision, oldest first."""
    records = list(records)
    current = [r for r in records if r.revision == quest.revision]
    have = {r.piece for r in current}
    earlier = sorted((r for r in records if r.revision < quest.revision),
                     key=lambda r: (r.revision, r.seq), reverse=True)
    carried: list[StageRecord] = []
    for piece in CARRIED:
        if piece in have:
            continue
        found = next((r for r in earlier if r.piece is piece), None)
        if found is not None and _holds(quest, found):
            carried.append(found)
    return sorted(carried, key=lambda r: (r.revision, r.seq)) + sorted(current,
                                                                         key=lambda r: r.seq)


def compose(records: Sequence[StageRecord]) -> EvidenceBundle | None:
    """The bundle from ``records`` (oldest first); ``None`` without a research record."""
    kept: dict[Piece, StageRecord] = {}
    for record in records:
        kept = {p: r for p, r in kept.items() if ORDER[p] < ORDER[record.piece]}
        kept[record.piece] = record
    research = kept.get(Piece.RESEARCH)
    if research is None:
        return None
    latest = max(kept.values(), key=lambda r: ORDER[r.piece])
    planned = kept.get(Piece.PLAN) or kept.get(Piece.REPRODUCE)
    proof, reproduce = kept.get(Piece.PROOF), kept.get(Piece.REPRODUCE)
    reproduction = ((proof.reproduction if proof else None)
                    or (reproduce.reproduction if reproduce else None))
    return EvidenceBundle(
        hypothesis=research.hypothesis or NO_HYPOTHESIS,
        claims=research.claims,
        reproduction=reproduction,
        plan=planned.plan if planned else None,
        result=latest.result,
        proof_digest=latest.proof_digest if latest.piece is Piece.PROOF else None,
        outputs=proof.outputs if proof else (),
        lines=proof.lines if proof else None,
    )


class EvidenceStore:
    def __init__(self, client: RedisClient) -> None:
        self.client = client

    async def record(self, quest_id: str, record: StageRecord) -> StageRecord:
        """Keep ``record`` as the latest of its stage at its revision; returns it numbered."""
        key = evidence_key(quest_id)
        seq = int(await self.client.hincrby(key, "seq", 1))
        numbered = record.model_copy(update={"seq": seq})
        await self.client.hset(key, field_name(record.revision, record.piece),
                               dump_stage(numbered))
        return numbered

    async def records(self, quest_id: str) -> list[StageRecord]:
        return _parse(await self.client.hgetall(evidence_key(quest_id)))

    async def lookup(self, quest: Quest) -> EvidenceBundle | None:
        """The evidence bundle for ``quest``'s current revision (``None`` before research)."""
        return compose(select(quest, await self.records(quest.id)))
