"""What the people in a chaos run do: the demo's main line, once per repository.

Each repository holds the demo's sample (``examples/sample-repo``); its ``tests`` check fails on
``main``, and a maintainer takes the quest through ``/approve A``, ``B`` and ``C`` to closed,
the way the demo does (``questbot_testing/scenario.py``). A reader without write access also says
``/approve A`` once, so every quest has one refusal questbot must answer exactly once.

Onlookers also comment on the quests' pull requests now and then, without a command: the
ordinary traffic a web process takes (and has to store even while Redis restarts).

People act only on what they can see: a comment is written once the quest has reached the
state that asks for it. The state is read from Redis (the harness is allowed to look), never
changed; nobody comments twice — a command that was acknowledged and then lost must show up
as a stuck quest, not be papered over by a second one.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import aiohttp
import redis.asyncio
import redis.exceptions

from bot.core import Quest, State
from bot.core.states import MAIN_LINE
from bot.journal import Indexes, Journal
from bot.journal.wire import RedisClient, connect
from bot.runner import REDIS_AWAY
from questbot_testing.sample import sample_files

MAINTAINER = "maya"
READER = "rex"
ONLOOKER = "olive"
CHATTER = "Thanks, following along."
CHECK = "tests"
SETTINGS = """\
# questbot settings for a chaos run: every checkpoint waits for a person
checkpoints: {A: blocking, B: blocking, C: blocking}
reviewers: [maya]
watch_window_minutes: 1
proof:
  commands: ["python3 -m unittest discover -q"]
"""
POLL_S = 0.2
T = TypeVar("T")


class Stuck(Exception):
    """The quest did not get where the story needs it."""


@dataclass
class Command:
    user: str
    body: str
    comment_id: int
    refused: bool
    """A refusal is expected (the reader has no write access)."""


@dataclass
class QuestRun:
    repo: str
    quest_id: str | None = None
    pr: int | None = None
    states: list[tuple[str, float]] = field(default_factory=list)
    """Each state the driver saw, with when it first saw it (epoch seconds)."""
    commands: list[Command] = field(default_factory=list)
    approved_head: str | None = None
    error: str | None = None
    last_failure: str | None = None

    @property
    def state(self) -> str | None:
        return self.states[-1][0] if self.states else None

    def as_json(self) -> dict[str, Any]:
        return {"repo": self.repo, "quest": self.quest_id, "pr": self.pr, "state": self.state,
                "states": [[s, round(t, 2)] for s, t in self.states], "error": self.error,
                "last_failure": self.last_failure}


class Fake:
    """The fake GitHub's control surface (``questbot_testing.fakegithub.control``)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.session = aiohttp.ClientSession()

    async def post(self, route: str, body: dict[str, Any]) -> Any:
        async with self.session.post(f"{self.url}/_fake/control/{route}", json=body) as r:
            data = await r.json()
            if r.status != 200:
                raise RuntimeError(f"the fake refused {route}: {data}")
            return data

    async def state(self) -> dict[str, Any]:
        async with self.session.get(f"{self.url}/_fake/control/state") as r:
            data: dict[str, Any] = await r.json()
            return data

    async def close(self) -> None:
        await self.session.close()


def reader_client(url: str) -> RedisClient:
    """The harness's own Redis client: it must ride out the restarts (and, on a cluster, the
    failovers) it causes — the production client (``bot.journal.wire.connect``)."""
    return connect(url, socket_timeout=5)


@dataclass
class Story:
    fake: Fake
    redis: redis.asyncio.Redis
    deadline: float
    runs: list[QuestRun] = field(default_factory=list)
    bases: dict[str, str] = field(default_factory=dict)
    """Each repository's first ``main`` commit: where its quest branch starts."""

    async def setup(self, repo: str) -> None:
        files = {**sample_files(), ".github/questbot.yml": SETTINGS}
        made = await self.fake.post("repositories", {
            "full_name": repo, "files": files,
            "permissions": {MAINTAINER: "write", READER: "read"}})
        self.bases[repo] = str(made["main"])

    async def drive(self, repo: str) -> QuestRun:
        """The main line for ``repo``'s quest; errors end up in ``run.error``."""
        run = QuestRun(repo)
        self.runs.append(run)
        try:
            await self._main_line(run)
        except Stuck as exc:
            run.error = str(exc)
        return run

    async def _main_line(self, run: QuestRun) -> None:
        await self.fake.post("checks", {"repo": run.repo, "name": CHECK})
        run.quest_id = await self._quest_of(run.repo)
        await self._reach(run, State.HYPOTHESISED)
        run.pr = await self._pull_of(run)
        await self._comment(run, READER, "/approve A", refused=True)
        for checkpoint, state in (("A", State.PLANNED), ("B", State.READY)):
            await self._comment(run, MAINTAINER, f"/approve {checkpoint}", refused=False)
            quest = await self._reach(run, state)
        run.approved_head = quest.head
        await self._comment(run, MAINTAINER, "/approve C", refused=False)
        await self._reach(run, State.CLOSED)

    async def chatter(self, stop: asyncio.Event, rng: random.Random, interval: float) -> int:
        """A comment without a command on a random open quest's PR every ``interval`` s or so;
        returns how many were made."""
        made = 0
        while not stop.is_set():
            await asyncio.sleep(rng.uniform(0.5, 1.5) * interval)
            open_ = [r for r in self.runs if r.pr is not None and r.state != "closed"]
            if open_:
                run = rng.choice(open_)
                await self.fake.post("comments", {"repo": run.repo, "number": run.pr,
                                                  "body": CHATTER, "user": ONLOOKER})
                made += 1
        return made

    async def _quest_of(self, repo: str) -> str:
        while time.time() < self.deadline:
            found = await self._read(lambda: Indexes(self.redis).quests_of_repo(repo))
            if found:
                return sorted(found)[0]
            await asyncio.sleep(POLL_S)
        raise Stuck(f"the failing check on {repo} made no quest before the deadline")

    async def _pull_of(self, run: QuestRun) -> int:
        head = f"quest/{run.quest_id}"
        while time.time() < self.deadline:
            pulls = await self.fake.post("pulls", {"repo": run.repo})
            for pull in pulls:
                if pull["head_ref"] == head:
                    return int(pull["number"])
            await asyncio.sleep(POLL_S)
        raise Stuck(f"quest {run.quest_id} is {run.state} but has no pull request on GitHub")

    async def _comment(self, run: QuestRun, user: str, body: str, *, refused: bool) -> None:
        made = await self.fake.post("comments", {"repo": run.repo, "number": run.pr,
                                                 "body": body, "user": user})
        run.commands.append(Command(user, body, int(made["id"]), refused))

    async def _reach(self, run: QuestRun, target: State) -> Quest:
        """Wait until the quest is at ``target`` or past it on the main line."""
        assert run.quest_id is not None
        qid = run.quest_id
        journal = Journal(self.redis)
        want = MAIN_LINE.index(target)
        while time.time() < self.deadline:
            _v, quest = await self._read(lambda: journal.snapshot(qid))
            if quest is not None:
                self._saw(run, quest)
                if quest.state not in MAIN_LINE:
                    raise Stuck(f"quest {run.quest_id} left the main line: {quest.state.value} "
                                f"(last failure: {quest.last_failure})")
                if MAIN_LINE.index(quest.state) >= want:
                    return quest
            await asyncio.sleep(POLL_S)
        raise Stuck(f"quest {run.quest_id} did not reach {target.value} before the deadline; "
                    f"it is {run.state}")

    def _saw(self, run: QuestRun, quest: Quest) -> None:
        if run.state != quest.state.value:
            run.states.append((quest.state.value, time.time()))
        run.last_failure = str(quest.last_failure) if quest.last_failure else None

    async def _read(self, call: Callable[[], Awaitable[T]]) -> T:
        """A read, made again after a pause while Redis is away (the harness restarts it)."""
        while True:
            try:
                return await call()
            except (*REDIS_AWAY, OSError):
                if time.time() >= self.deadline:
                    raise Stuck("redis did not come back before the deadline") from None
                await asyncio.sleep(0.5)
