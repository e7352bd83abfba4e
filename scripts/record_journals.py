"""Record today's journals as fixtures that every later release must still read.

Runs the demo's main line (``scripts/demo.py``: a failing check on the sample repository,
researched by the model agent against the recorded model server, approved at A, B and C,
landed, watched, closed) on a Redis of its own, and writes every key questbot keeps at two
moments, one key a line (``questbot_testing.redis_dump``):

* ``<name>-checkpoint-a.jsonl`` — after research, the quest waiting at checkpoint A;
* ``<name>-closed.jsonl`` — the same quest closed, its whole journal.

``tests/journal/test_old_journals.py`` loads them into a fresh Redis with today's code,
replays them, and drives the first on to the end with the journal entries of the second. Run
it when a release changes what it stores, as ``scripts/record_journals.py v<N>``, and commit
the new files beside the old ones: the old ones stay, so a release must read every format
questbot ever wrote (``docs/operations.md``, *Upgrades*).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from bot.core import State
from bot.journal.records import SCHEMA_VERSION
from questbot_testing import redis_dump
from questbot_testing.modelserver.demo import demo_model
from questbot_testing.redis_server import RedisServer
from questbot_testing.scenario import REPO, StepFailed, Story, setup_repository
from questbot_testing.stack import Stack

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "journal" / "fixtures"

TRANSIENT = ("inbound:", "outbox:{shard-", "redelivery:", "gh:pace:", ":lease", ":creating",
             "gh:installations")
"""What a fixture leaves out: the web process's deliveries and the runners' doorbells (streams
whose consumer groups a dump cannot carry, empty once the stack settled), leases and pacing
(seconds-long, of processes long gone)."""


async def record(name: str, out: Path) -> None:
    server = RedisServer(appendonly=False)
    server.start()
    model_server, endpoint = await demo_model()
    stack = await Stack(server.url, model=endpoint).start()
    try:
        story = Story(stack)
        main = await setup_repository(stack)
        await stack.fake.fail_check(REPO, main, name="tests")
        await stack.settle()
        (quest,) = await stack.quests(REPO)
        story.quest_id = quest.id
        await story.step("researched", State.HYPOTHESISED)
        client = stack.web_client
        redis_dump.write(out / f"{name}-checkpoint-a.jsonl",
                         await redis_dump.dump(client, skip=TRANSIENT))  # type: ignore[arg-type]
        await story.approve("A", State.PLANNED)
        await story.approve("B", State.READY)
        await story.approve("C", State.WATCHING)
        await stack.advance(61)
        await story.step("watched", State.CLOSED)
        redis_dump.write(out / f"{name}-closed.jsonl",
                         await redis_dump.dump(client, skip=TRANSIENT))  # type: ignore[arg-type]
        stack.fake.assert_clean()
        model_server.assert_clean()
    finally:
        await stack.stop()
        await model_server.close()
        server.cleanup()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("name", nargs="?", default=None,
                        help="the fixtures' name (default: v<the newest record version>)")
    parser.add_argument("--out", type=Path, default=FIXTURES)
    parser.add_argument("--force", action="store_true",
                        help="write over fixtures of that name (never for committed ones)")
    args = parser.parse_args(argv)
    name = args.name or f"v{max(SCHEMA_VERSION.values())}"
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.force and list(args.out.glob(f"{name}-*.jsonl")):
        print(f"fixtures named {name} exist already: old journals are kept as they were "
              "recorded; give the new ones another name", file=sys.stderr)
        return 2
    try:
        asyncio.run(record(name, args.out))
    except StepFailed as exc:
        print(f"recording stopped: {exc}", file=sys.stderr)
        return 1
    for path in sorted(args.out.glob(f"{name}-*.jsonl")):
        print(f"{path} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
