"""``python -m bot transcript QUEST [--stage STAGE] [--json]``: what the model was asked and
what it said, stage by stage, as kept with the quest (``bot.agent.transcript``).

Why. When a stage fails, its reason is a sentence; the conversation is where a maintainer sees
whether the model answered in prose, called the wrong tool or lost its task. The text form is
for a terminal: each turn says who spoke, its lines indented under it, everything through
``bot.control_chars.say`` (the model's words were made inert when they were kept, and are
again on the way out). ``--json`` is the kept records, escaped by ``json.dumps``. Nothing is
written. A Redis that cannot be reached, or a quest it does not hold, is one line on stderr
and exit 2; a quest with no transcript (yet, or of that stage) exit 1.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Sequence

import redis

from bot.adapters import QuestNotFound
from bot.agent.transcript import (
    STAGES,
    Ending,
    Kind,
    StageTranscript,
    TranscriptStore,
    Turn,
    as_json,
)
from bot.control_chars import one_line, say
from bot.journal import Journal
from bot.journal.errors import CorruptJournal, UnstorableId
from bot.journal.wire import connect
from bot.settings.process.environment import redis_url

ENDED: dict[Ending, str] = {
    Ending.ANSWERED: "the model handed in its answer",
    Ending.HALTED: "the model stopped the stage itself",
    Ending.FAILED: "the stage failed",
    Ending.TIMED_OUT: "the stage ran past its deadline",
    Ending.ENDPOINT: "the model endpoint ended the stage",
}


class NoQuest(QuestNotFound):
    """Redis holds no quest by that id."""


async def read(url: str, quest_id: str) -> list[StageTranscript]:
    """The quest's transcripts, oldest first; ``NoQuest`` when Redis holds no such quest."""
    client = connect(url, socket_timeout=10, retries=1)
    try:
        try:
            _version, quest = await Journal(client).snapshot(quest_id)
        except CorruptJournal:
            quest = None  # it exists, unreadable: its transcripts may still be read
        else:
            if quest is None:
                raise NoQuest(quest_id)
        return await TranscriptStore(client).transcripts(quest_id)
    finally:
        await client.aclose()


def _said(turn: Turn) -> str:
    """Who spoke, as the heading of the turn's lines."""
    tool = one_line(turn.tool or "a tool")
    return {
        Kind.PROMPT: "questbot asked:",
        Kind.RETRY: (f"questbot sent back {tool}'s call:" if turn.tool
                     else "questbot sent the answer back:"),
        Kind.TEXT: "the model said:",
        Kind.CALL: f"the model called {tool}:",
        Kind.THINKING: "the model thought:",
        Kind.RESULT: f"{tool} answered:",
    }[turn.kind]


def transcript_text(transcripts: Sequence[StageTranscript]) -> str:
    """The transcripts for a terminal, oldest first."""
    blocks = []
    for t in transcripts:
        head = [f"quest {t.quest_id}: {t.stage} at revision {t.revision} — {ENDED[t.ended]}"
                + (f": {one_line(t.reason)}" if t.reason else "")]
        kept = f"{len(t.turns)} turn{'s' if len(t.turns) != 1 else ''}"
        if t.elided:
            kept += f", the {t.elided} earliest left out to keep it short"
        head.append(f"  model {one_line(t.model) or 'unknown'} · ended {t.at:%Y-%m-%d %H:%M} "
                    f"UTC · {kept}")
        lines = [*head, ""]
        if t.elided:
            lines += [f"(… {t.elided} earlier turn{'s' if t.elided != 1 else ''} …)", ""]
        for turn in t.turns:
            lines.append(_said(turn))
            lines += [f"    {line}" for line in (turn.text or "(nothing)").splitlines()]
            lines.append("")
        blocks.append("\n".join(lines).rstrip())
    return "\n\n".join(blocks)


def run(args: argparse.Namespace) -> int:
    """0 with transcripts; 1 with none kept; 2 when the quest or Redis cannot be read."""
    url = args.redis or redis_url()
    try:
        found = asyncio.run(read(url, args.quest))
    except UnstorableId as exc:
        say(f"transcript: {exc}", err=True)
        return 2
    except NoQuest:
        say(f"transcript: Redis holds no quest {args.quest}; `python -m bot status --repo "
            "OWNER/NAME` lists a repository's quests", err=True)
        return 2
    except (OSError, redis.RedisError) as exc:
        say(f"transcript: could not read quest {args.quest} from Redis ({one_line(str(exc))}); "
            "check REDIS_URL or --redis, and that Redis is up", err=True)
        return 2
    if args.stage:
        found = [t for t in found if t.stage == args.stage]
    if not found:
        which = f"the {args.stage} stage" if args.stage else "any stage"
        say(f"transcript: no model conversation is kept for {which} of quest {args.quest} "
            "(one is kept when a model agent's stage ends; once an ended quest is compacted, "
            "only the stages that did not answer keep theirs)", err=True)
        return 1
    say(as_json(found) if args.json else transcript_text(found))
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    tp = sub.add_parser("transcript", help="what the model was asked and said in a quest's "
                        "stages, as kept with the quest")
    tp.add_argument("quest", help="the quest's id")
    tp.add_argument("--stage", choices=STAGES, help="only this stage")
    tp.add_argument("--redis", metavar="URL", help="the Redis (default: $REDIS_URL)")
    tp.add_argument("--json", action="store_true", help="print the kept records as JSON")
    tp.set_defaults(func=run)
