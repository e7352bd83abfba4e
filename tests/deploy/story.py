"""The demo's quest, told to questbot running as a deployment runs it: the web process and the
worker as separate processes (from a fresh install, or from the image), started by their
entrypoint commands, reaching Redis, the fake GitHub and the recorded model server only over
the network, with their settings in the environment and the App's key in a file.

The fake GitHub and the model server run in the test's own event loop; what questbot does is
seen only from outside — GitHub's side (the pull request, the status comment, the merge) and
the quest's journal in Redis — as a self-hoster would see it. ``tell`` walks the demo's main
line: the ``tests`` check fails on main, questbot researches it and opens the quest's pull
request, a maintainer approves A (a reproduction, run in the sandbox, fails on the base), B
(the patch; the proof runs the sample's tests at the head, in the sandbox) and C (the merge of
the approved head).
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from bot.core import State
from bot.journal import Journal
from bot.journal.wire import plain_client
from questbot_testing.fakegithub import FakeGitHub
from questbot_testing.fakegithub.manifest import load_manifest, register
from questbot_testing.modelserver.demo import LESSONS, MODEL, STAGES
from questbot_testing.modelserver.server import ModelServer, recorded
from questbot_testing.sample import sample_files
from questbot_testing.scenario import MAINTAINER, NO_RERUN, READER, REPO
from questbot_testing.stack import MANIFEST, free_port

SECRET = "deploy-test-webhook-secret"
MODEL_KEY = "sk-deploy-test-not-a-real-key"
STEP_SECONDS = 180.0
"""How long one step may take: real processes, GitHub's pacing at its real figures (a write a
second after a burst), two shared cores."""


@dataclass
class Scene:
    """Everything outside questbot, and where questbot's two processes are to listen."""

    fake: FakeGitHub
    model: ModelServer
    redis_url: str
    web_port: int
    metrics_port: int

    def settings(self, key_path: str) -> dict[str, str]:
        """What deploy/questbot.env and compose.yaml's wiring would hold, pointed at this
        scene: the App, Redis, the model endpoint, the ports."""
        return {"GITHUB_APP_ID": str(self.fake.world.app_id),
                "GITHUB_WEBHOOK_SECRET": SECRET,
                "GITHUB_PRIVATE_KEY_PATH": key_path,
                "GITHUB_API_URL": self.fake.url,
                "REDIS_URL": self.redis_url,
                "PORT": str(self.web_port),
                "QUESTBOT_METRICS_PORT": str(self.metrics_port),
                "QUESTBOT_MODEL": MODEL,
                "QUESTBOT_MODEL_PROTOCOL": "openai",
                "QUESTBOT_MODEL_URL": f"{self.model.url}/v1",
                "QUESTBOT_MODEL_API_KEY": MODEL_KEY}

    async def close(self) -> None:
        await self.fake.stop()
        await self.model.close()


async def scene(redis_url: str, sandbox_python: str) -> Scene:
    """The fake GitHub holding the demo's sample, with its webhook pointed at the web process
    to come, and the model server answering from the demo's recorded conversations (which
    name the interpreter the sandbox will run: ``sandbox_python``)."""
    web_port, metrics_port = free_port(), free_port()
    fake = FakeGitHub(webhook_url=f"http://127.0.0.1:{web_port}/webhook", webhook_secret=SECRET)
    register(fake.world, load_manifest(MANIFEST))
    await fake.start()
    fake.create_repository(REPO, {**sample_files(), ".github/questbot.yml": NO_RERUN})
    fake.set_permission(REPO, MAINTAINER, "write")
    fake.set_permission(REPO, READER, "read")
    model = await ModelServer(recorded("openai", *STAGES, *LESSONS),
                              substitutions={"PYTHON": sandbox_python}).start()
    return Scene(fake, model, redis_url, web_port, metrics_port)


def healthz(port: int) -> tuple[int, dict[str, object]]:
    """``GET /healthz`` on loopback: the status and the JSON body (0 when nothing answers)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")
    except (urllib.error.URLError, OSError):
        return 0, {}


async def until(what: str, check: Callable[[], Awaitable[object]],
                alive: Callable[[], str | None], seconds: float = STEP_SECONDS) -> object:
    """Poll ``check`` until it returns something true; fail saying ``what`` did not happen —
    at once if ``alive`` reports that a questbot process ended, with what it logged."""
    deadline = time.monotonic() + seconds
    while True:
        found = await check()
        if found:
            return found
        ended = alive()
        if ended:
            raise AssertionError(f"{what}: a questbot process ended\n{ended}")
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {seconds:g} s")
        await asyncio.sleep(0.5)


async def tell(scene: Scene, alive: Callable[[], str | None]) -> str:
    """The demo's main line through checkpoint C; returns the quest's id."""
    fake = scene.fake
    client = plain_client(scene.redis_url)
    journal = Journal(client)
    repo = fake.repo(REPO)

    def pull() -> tuple[int, str] | None:
        for pr in repo.pulls.values():
            if pr.head_ref.startswith("quest/"):
                return int(pr.number), pr.head_ref.removeprefix("quest/")
        return None

    async def reached(state: State) -> bool:
        found = pull()
        if found is None:
            return False
        _v, quest = await journal.snapshot(found[1])
        return quest is not None and quest.state is state

    try:
        await fake.fail_check(REPO, str(repo.branch_sha("main")), name="tests")

        async def opened() -> bool:
            return await reached(State.HYPOTHESISED)

        await until("the failing check became a researched quest with a pull request", opened,
                    alive)
        number, quest_id = pull() or (0, "")
        status = [c.body for c in repo.comments.values()
                  if c.issue_number == number and "questbot:status" in c.body]
        assert len(status) == 1 and "checkpoint a" in status[0].lower(), status
        for checkpoint, state in (("A", State.PLANNED), ("B", State.READY),
                                  ("C", State.WATCHING)):
            await fake.comment(REPO, number, f"/approve {checkpoint}", user=MAINTAINER)

            async def moved(state: State = state) -> bool:
                return await reached(state)

            await until(f"/approve {checkpoint} moved the quest to {state.value}", moved, alive)
        _v, quest = await journal.snapshot(quest_id)
        assert quest is not None
        merges = fake.calls("pulls/merge")
        assert merges and merges[-1].json.get("sha") == quest.head, "merged another head"
        assert not fake.violations, fake.violations
        return quest_id
    finally:
        await client.aclose()


def log_lines(path: Path) -> list[dict[str, object]]:
    """A questbot process's JSON log lines (anything else it printed, skipped)."""
    out = []
    for line in path.read_text(errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            out.append(record)
    return out


def said(path: Path, start: str) -> list[str]:
    """The messages of ``path``'s log that begin with ``start``."""
    return [str(r.get("message", "")) for r in log_lines(path)
            if str(r.get("message", "")).startswith(start)]


def tails(logs: Path, chars: int = 3000) -> str:
    """The end of every log in ``logs``, for a failure's message."""
    return "\n".join(f"--- {path.name}\n{path.read_text(errors='replace')[-chars:]}"
                     for path in sorted(logs.glob("*.log")))
