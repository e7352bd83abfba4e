"""A stage's model conversation, kept with its quest: what the model was asked, what it did
and what it said last — readable after the stage ended, however it ended (issue 25).

Why. A stage that fails says why in one sentence ("the model did not give a usable answer");
what a maintainer then needs is the conversation: did the model answer in prose, call the
wrong tool, lose its task? Before, the model's words appeared nowhere — not on GitHub, not in
the worker's log. Now every ending of a ``model`` agent's conversation — an answer, a halt, a
failure, the stage's deadline, the endpoint giving up — keeps the conversation here, read by
``python -m bot transcript QUEST`` and by the status comment's fold of what the model said
last when a stage fails (``bot.views.projection``).

What is kept, and how it is made safe. A ``Turn`` is one part of the conversation as people
read it: questbot's prompt, the model's text, a tool call, a tool's result, questbot's retry.
Before it is stored each turn's text

* has secrets redacted as the logs redact them (``bot.observe.logs.redact``: the endpoint's
  key verbatim, tokens, PEM blocks, ``password=``…) — a tool may have read a file holding one,
  and the model may have repeated it;
* is made inert (``bot.control_chars.for_terminal``: every line break a newline, so no line
  is written over; escape sequences, control and bidirectional characters out), since it is
  shown in a terminal;
* is capped at ``TURN_CHARS``, its middle left out with a count — a whole file read by a tool
  says little more than its start and end;

and the stage is capped at ``MAX_CHARS``: the oldest turns are left out, counted in
``elided``, the newest always kept (what the model said last is the point).

Layout. One hash per quest, ``q:{<id>}:transcript`` (``bot.journal.keys.transcript_key``: the
quest's hash tag, its Redis Cluster slot): ``<revision>:<stage>`` → the stage's latest
``StageTranscript`` as JSON (a stage run again at the same revision — a repair, a revise,
``/resume`` — replaces it; a repair's conversation holds the earlier one whole), and ``seq``
numbering them, so the newest is known. A quest's transcripts are bounded by its stages and
revisions, each by ``MAX_CHARS``. Once the quest has ended and is compacted
(``bot.journal.compaction``) the conversations of the stages that answered are let go and
the rest — those that explain an ending — are folded into the quest's record and read from
there (``keep_what_explains``).

Only the ``model`` agent keeps one: a ``command`` agent's conversation is its CLI's own, and
what it printed is in its failure's reason.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from redis.exceptions import RedisError

from bot.control_chars import for_terminal
from bot.journal.compaction import read_compacted
from bot.journal.errors import CorruptJournal
from bot.journal.keys import transcript_key
from bot.journal.wire import RedisClient
from bot.observe.logs import redact

log = logging.getLogger(__name__)

TURN_CHARS = 6_000
"""One turn's text at most; the middle of a longer one is left out."""
MAX_CHARS = 60_000
"""A stage's turns at most, all told; the oldest are left out past it."""
STAGES = ("research", "reproduce", "plan", "patch")


class Kind(StrEnum):
    """Who said what: questbot's ``prompt`` and ``retry``, the model's ``text``, ``call`` and
    ``thinking``, a tool's ``result``."""

    PROMPT = "prompt"
    RETRY = "retry"
    TEXT = "text"
    CALL = "call"
    THINKING = "thinking"
    RESULT = "result"


BY_MODEL = frozenset({Kind.TEXT, Kind.CALL, Kind.THINKING})


class Ending(StrEnum):
    """How the stage's conversation ended."""

    ANSWERED = "answered"
    """The model handed in the stage's answer (the stage's validation still judges it)."""
    HALTED = "halted"
    """The model ended the stage itself (``halt``: it refused, or a person is needed)."""
    FAILED = "failed"
    """No usable answer: prose instead of a call, too many requests, a refused answer."""
    TIMED_OUT = "timed_out"
    """The stage's deadline passed first."""
    ENDPOINT = "endpoint"
    """The model endpoint refused the requests, or stopped answering through the retries."""


class Turn(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Kind
    text: str
    tool: str | None = None
    """The tool called, or whose result this is."""


class StageTranscript(BaseModel):
    """One stage's conversation at one revision, as kept."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    quest_id: str
    stage: str
    revision: int = Field(ge=1)
    at: datetime
    ended: Ending
    reason: str = ""
    """Why it ended as it did, when it did not answer (the stage's reason)."""
    model: str = ""
    turns: tuple[Turn, ...] = ()
    elided: int = Field(default=0, ge=0)
    """The oldest turns left out to keep the transcript within ``MAX_CHARS``."""
    seq: int = 0

    @property
    def last_said(self) -> Turn | None:
        """The model's last turn (its text, or the call it made), ``None`` if it said nothing
        that was kept."""
        return next((t for t in reversed(self.turns) if t.kind in BY_MODEL), None)


def clean(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` as it may be kept: secrets redacted, control characters out, capped."""
    # before and after the controls go: a sequence glued to a token must not hide it, nor
    # its removal join what the first pass let through into one
    hidden = [s for s in secrets if s]
    text = redact(for_terminal(redact(text, hidden)), hidden)
    if len(text) <= TURN_CHARS:
        return text
    head, tail = TURN_CHARS * 2 // 3, TURN_CHARS // 3
    return (f"{text[:head]}\n… ({len(text) - head - tail:,} characters left out) …\n"
            f"{text[-tail:]}")


def bounded(turns: Sequence[Turn], secrets: Iterable[str] = ()) -> tuple[tuple[Turn, ...], int]:
    """``turns`` cleaned, the oldest left out until they fit ``MAX_CHARS``; the newest is
    always kept. Returns the kept turns and how many were left out."""
    hidden = tuple(secrets)
    kept = [t.model_copy(update={"text": clean(t.text, hidden),
                                 "tool": clean(t.tool, hidden)[:200] if t.tool else None})
            for t in turns]
    total, start = sum(len(t.text) for t in kept), 0
    while total > MAX_CHARS and start < len(kept) - 1:
        total -= len(kept[start].text)
        start += 1
    return tuple(kept[start:]), start


def field_name(revision: int, stage: str) -> str:
    return f"{revision}:{stage}"


class TranscriptStore:
    """The quests' stage transcripts in Redis (the module docs)."""

    def __init__(self, client: RedisClient) -> None:
        self.client = client

    async def keep(self, transcript: StageTranscript) -> StageTranscript:
        """Keep ``transcript`` as its stage's latest at its revision; returns it numbered."""
        key = transcript_key(transcript.quest_id)
        seq = int(await self.client.hincrby(key, "seq", 1))
        numbered = transcript.model_copy(update={"seq": seq})
        await self.client.hset(key, field_name(numbered.revision, numbered.stage),
                               numbered.model_dump_json())
        return numbered

    async def transcripts(self, quest_id: str) -> list[StageTranscript]:
        """Every kept transcript of the quest, oldest first."""
        raw: dict[Any, Any] = await self.client.hgetall(transcript_key(quest_id))
        if not raw:  # an ended quest compacted: its transcripts are in its record
            try:
                record = await read_compacted(self.client, quest_id)
            except CorruptJournal as exc:
                log.warning("quest %s's transcripts are in a record that cannot be read: %s",
                            quest_id, exc)
                return []
            raw = record.hash("transcript") if record is not None else {}
        found = []
        for name, value in raw.items():
            field = name.decode() if isinstance(name, bytes) else str(name)
            if field == "seq":
                continue
            try:
                found.append(StageTranscript.model_validate_json(value))
            except (ValidationError, ValueError) as exc:
                log.warning("transcript %s of quest %s is unreadable and is skipped: %s",
                            field, quest_id, exc)
        return sorted(found, key=lambda t: t.seq)

    async def latest(self, quest_id: str, revision: int | None = None) -> StageTranscript | None:
        """The newest transcript of the quest (at ``revision``, when given)."""
        kept = [t for t in await self.transcripts(quest_id)
                if revision is None or t.revision == revision]
        return kept[-1] if kept else None


@dataclass(frozen=True)
class Recorder:
    """Where one quest's model agent keeps its conversations: the store, the quest and its
    revision, and the secrets to redact (the endpoint's key). A transcript that cannot be
    written is logged and let go: it is for people, and the stage's outcome must not be lost
    for it."""

    store: TranscriptStore
    quest_id: str
    revision: int
    secrets: tuple[str, ...] = ()
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))

    async def keep(self, *, stage: str, ended: Ending, turns: Sequence[Turn],
                   reason: str = "", model: str = "") -> StageTranscript | None:
        kept, elided = bounded(turns, self.secrets)
        transcript = StageTranscript(
            quest_id=self.quest_id, stage=stage, revision=self.revision, at=self.clock(),
            ended=ended,
            reason=clean(reason, self.secrets), model=model, turns=kept, elided=elided)
        try:
            return await self.store.keep(transcript)
        except (RedisError, OSError) as exc:
            log.warning("the %s transcript of quest %s could not be kept: %s", stage,
                        self.quest_id, exc)
            return None


async def keep_what_explains(client: RedisClient, quest_id: str) -> int:
    """Before an ended quest is compacted: let go of the conversations of the stages that
    answered, keeping those that did not (a refusal, a failure, a deadline, the endpoint).

    Why. An answered stage's result is on record as its evidence — the hypothesis, the plan,
    the change, the proof — and on GitHub; its conversation is worth reading while the quest is
    recent, and is kept whole until compaction (``QUESTBOT_COMPACT_AFTER_HOURS``, three days by
    default). A stage that did not answer has nothing else that says what the model did: its
    conversation is the explanation, so it goes into the quest's record for good. Kept whole,
    every conversation would more than double an ended quest's record (19 KB a quest on the
    demo, ~3 KB compressed against a record of ~4 KB). Returns how many were let go."""
    key = transcript_key(quest_id)
    raw: dict[Any, Any] = await client.hgetall(key)
    stages = {(n.decode() if isinstance(n, bytes) else str(n)): v for n, v in raw.items()}
    stages.pop("seq", None)
    answered = []
    for name, value in stages.items():
        try:
            ended = StageTranscript.model_validate_json(value).ended
        except (ValidationError, ValueError):
            continue  # unreadable: kept as it is, for a person to look at
        if ended is Ending.ANSWERED:
            answered.append(name)
    if len(answered) == len(stages):
        await client.delete(key)  # nothing left that explains anything: no empty hash kept
    elif answered:
        await client.hdel(key, *answered)
    return len(answered)


def as_json(transcripts: Sequence[StageTranscript]) -> str:
    """The transcripts as a JSON array (``python -m bot transcript --json``)."""
    return json.dumps([t.model_dump(mode="json") for t in transcripts], indent=2)
