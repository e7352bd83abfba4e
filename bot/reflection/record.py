"""What a reflection is written from and reviewed against: the record of a wave's bad endings,
one document per quest, and the check that a verdict's claims stand on it.

Pure. The worker reads the bad endings (``repo:{<owner/name>}:bad``: quest, revision, attempt,
kind, when) and each quest's snapshot and journal; here they become one document per quest —
which quest, how it ended, what it tried, and every reason recorded on the way (a person's
``/kill`` or ``/reject``, the agent's halt, a failed proof or effect) — named
``endings/<n>``, oldest first. The writer cites these; the reviewer is fed them and the
reflection (``reflection``) and nothing else, and cites them too. A citation is checked by
the agent's validation (``bot.agent.validation``), as a research claim is checked against a
checkout: a quote from anywhere else — the writer's conversation, the repository, the
model's memory — is ``missing_file`` or ``quote_not_found``.

The record is bounded (``MAX_ENDINGS`` quests, ``DOCUMENT_LIMIT`` characters each), so a long
wave cannot flood the prompt; its text comes from models and people and is fenced as untrusted
data in the prompts (``bot.agent.model.untrusted``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import Enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bot.agent.model.untrusted import fence
from bot.agent.task import Usage
from bot.agent.validation import Claim, ClaimVerdict, Verdict, validate_claims
from bot.core import Event, Quest
from bot.reviews.evidence_view import TextsView

MAX_ENDINGS = 20
"""The newest bad endings a reflection is written from."""
DOCUMENT_LIMIT = 2000
REFLECTION = "reflection"
"""The path a reviewer cites the reflection under review by."""
MAX_ATTEMPTS = 3
"""Reflections questbot's writer puts up per wave before it waits for a maintainer."""


class WrittenReflection(BaseModel):
    """Your reflection: what went wrong across these quests, what changes from now on, and
    the claims it rests on — each citing a bad ending by its path and an exact quote."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    went_wrong: str = Field(min_length=1, max_length=1500)
    changes: str = Field(min_length=1, max_length=1500)
    claims: tuple[Claim, ...] = Field(min_length=1, max_length=20)

    @property
    def text(self) -> str:
        return f"What went wrong: {self.went_wrong.strip()}\nWhat changes: {self.changes.strip()}"


class ReflectionAnswer(BaseModel):
    """Your one verdict on the reflection: pass or reject, a synopsis of why, and the claims
    it rests on — each citing the record or the reflection by its path and an exact quote."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    verdict: Literal["pass", "reject"]
    synopsis: str = Field(min_length=1, max_length=2000)
    claims: tuple[Claim, ...] = Field(min_length=1, max_length=20)


@dataclass
class Written:
    reflection: WrittenReflection | None
    """``None`` when the run gave no usable answer."""
    problems: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)


@dataclass
class Reviewed:
    passed: bool | None
    """``None``: no usable answer, or one whose citations do not hold — no decision."""
    synopsis: str = ""
    problems: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True, slots=True)
class Ending:
    quest_id: str
    revision: int
    attempt: int
    kind: str
    at: datetime


def parse_ending(member: str, ms: float) -> Ending | None:
    """A ``repo:{r}:bad`` member, ``<quest>:<revision>:<attempt>:<kind>``, and its score."""
    parts = member.rsplit(":", 3)
    if len(parts) != 4 or not parts[1].isdigit() or not parts[2].isdigit():
        return None
    return Ending(parts[0], int(parts[1]), int(parts[2]), parts[3],
                  datetime.fromtimestamp(ms / 1000, tz=UTC))


def _words(name: str) -> str:
    return name.replace("_", " ")


def reasons(events: Iterable[Event]) -> list[str]:
    """Every reason the journal recorded, in order: who gave it and on which event."""
    out = []
    for event in events:
        said = getattr(event, "reason", None) or getattr(event, "error", None)
        if isinstance(said, str) and not isinstance(said, Enum) and said.strip():
            who = f" by {event.actor}" if event.actor else ""
            out.append(f"{_words(event.type)}{who}: {said.strip()}")
    return out


def ending_document(ending: Ending, quest: Quest | None, said: Sequence[str]) -> str:
    """One quest's part of the record, in plain words."""
    lines = [f"quest {ending.quest_id} ended badly: {_words(ending.kind)}, at revision "
             f"{ending.revision}, attempt {ending.attempt}, {ending.at:%Y-%m-%d %H:%M} UTC"]
    if quest is not None:
        lines.append(f"title: {quest.title or '(untitled)'}")
        lines.append(f"signal: {_words(quest.kind.value)} {quest.fingerprint}")
        state = _words(quest.state.value)
        if quest.outcome is not None:
            state += f" ({_words(quest.outcome.value)})"
        if quest.park_reason is not None:
            state += f" (parked: {_words(quest.park_reason.value)})"
        lines.append(f"state now: {state}")
        for name, value in (("hypothesis", quest.hypothesis), ("plan", quest.plan),
                            ("agent's note", quest.park_note),
                            ("last failure", quest.last_failure)):
            if value:
                lines.append(f"{name}: {value}")
        for old in quest.attempt_log:
            lines.append(f"earlier attempt {old.number} ended: {old.reason}")
    lines += [f"recorded: {r}" for r in said[-8:]]
    return "\n".join(lines)[:DOCUMENT_LIMIT]


def record_of(documents: Iterable[tuple[Ending, str]]) -> dict[str, str]:
    """The record: the newest ``MAX_ENDINGS`` quests, each once (its latest ending's
    document), numbered oldest first — ``endings/1``, ``endings/2``… — so a citation names a
    place in the record, not an id the model would have to copy exactly."""
    latest: dict[str, tuple[Ending, str]] = {}
    for ending, text in sorted(documents, key=lambda d: d[0].at, reverse=True):
        if ending.quest_id not in latest and len(latest) < MAX_ENDINGS:
            latest[ending.quest_id] = (ending, text)
    oldest_first = sorted(latest.values(), key=lambda d: d[0].at)
    return {f"endings/{n}": text for n, (_ending, text) in enumerate(oldest_first, 1)}


def record_view(record: Mapping[str, str], reflection: str | None = None) -> TextsView:
    """The record (and the reflection under review) as what claims may cite."""
    return TextsView({**record, REFLECTION: reflection} if reflection else record)


def check_claims(claims: Sequence[Claim], record: Mapping[str, str],
                 reflection: str | None = None) -> tuple[bool, list[str]]:
    """Whether ``claims`` stand on the record: at least one claim, none rejected, and at
    least one citing a bad ending (a verdict resting on the reflection alone judges the
    reflection by itself). The problems, in words for the model and the record."""
    verdicts: list[ClaimVerdict] = list(validate_claims(tuple(claims),
                                                        record_view(record, reflection)))
    problems = [f"{v.claim.statement[:200]!r}: " + "; ".join(r.message for r in v.reasons)
                for v in verdicts if v.verdict is Verdict.REJECTED]
    cites_record = any(e.path.startswith("endings/") for v in verdicts
                       if v.verdict is not Verdict.REJECTED for e in v.claim.evidence)
    if verdicts and not problems and not cites_record:
        problems.append("no claim cites a bad ending (endings/<n>): say what in the "
                        "record the verdict rests on")
    return bool(verdicts) and not problems, problems


def record_block(record: Mapping[str, str]) -> list[str]:
    lines = []
    for path, text in record.items():
        lines += ["", f"Bad ending ({path}):", fence(path, text)]
    return lines


def writer_prompt(record: Mapping[str, str], attempt: int, rejections: Sequence[str]) -> str:
    """The writer's task: the first user message (``reflect: write;`` names it)."""
    lines = [
        f"reflect: write; attempt {attempt} of {MAX_ATTEMPTS}",
        "",
        f"{len(record)} quests of this repository ended badly of late, so new quests wait "
        "until a reflection passes a review. Write it: what went wrong across these quests, "
        "and what changes from now on — concrete, short, and true to the record below. "
        "Back it with claims, each citing a bad ending by its path (endings/<n>) and "
        "quoting it exactly; claims citing anything else are rejected.",
    ]
    if rejections:
        lines += ["", "Earlier reflections in this wave were sent back by the reviewer:"]
        lines += [f"- {fence('rejection', r)}" for r in rejections]
        lines.append("Answer what they found wanting.")
    return "\n".join(lines + record_block(record))


REVIEW_CHECKLIST = (
    "Does it say what actually went wrong, as the record shows it — not a guess the record "
    "does not bear out, and not a generic lesson that would fit any failure?",
    "Does it cover the wave: the bad endings the record holds, not one of them alone?",
    "Does it say what changes, concretely enough that the next quests would be worked "
    "differently, and would that change have prevented these endings?",
)


def reviewer_prompt(reflection: str, record: Mapping[str, str]) -> str:
    """The reviewer's task: the first user message (``review: reflection_reviewer;`` names
    it). Only the reflection and the record: never the writer's conversation."""
    lines = [
        "review: reflection_reviewer;",
        "",
        "You are the reflection reviewer of a questbot repository. Several quests ended "
        "badly, and new ones wait until a reflection — what went wrong and what changes — "
        "passes your review. Be adversarial: look for the reason it should not pass. A "
        "rejection with a reason is the normal case, not a failure.",
        "You work only from the reflection and the record below; you do not see, and must "
        "not ask for, the conversation of whoever wrote it.",
        "",
        "Checklist:",
        *(f"- {item}" for item in REVIEW_CHECKLIST),
        "",
        "Answer with one verdict — pass: the reflection holds up and new quests may start; "
        "reject: it must be written again, with the reason — and a synopsis, with the claims "
        "it rests on: each cites the record by its path (endings/<n>) or the reflection "
        f"({REFLECTION}) and quotes it exactly. At least one claim must cite a bad ending.",
        "",
        f"The reflection ({REFLECTION}):",
        fence(REFLECTION, reflection),
    ]
    return "\n".join(lines + record_block(record))
