"""The adversarial suite's ground: the sample repository made hostile, the worker's secrets where
a worker keeps them, a listener no sandboxed command may reach, and a model server that plays
the attacker (``questbot_testing.modelserver.hostile``).

The repository commits, beside the sample's files, the links a hostile repository would:
``system`` → ``/etc``, ``worker-key`` → the App's private key on the worker (a file of this
test's, holding the fake GitHub's real key), ``worker-env`` → ``/proc/self/environ`` (the
worker's own environment, when the worker follows it) and ``docs/workflow`` →
``../.github/workflows/ci.yml`` (a way into CI's files that does not say ``.github``).

``Secrets`` is everything no output may hold: the App's key (whole and each line), every
installation token the fake minted, and the worker's environment — the webhook secret, the
model's API key, an ``AGENT_*`` key — set in this process's environment, which is the worker's.
``leaked(text)`` names what of it is in ``text``.

The agent fixtures (Redis, the journal, the fake's clients, ``Quests``) are the agent tests';
the whole stack (``stack``) and its guards — no credential in any log line, no internal
identifier or host path in anything people read — are the end-to-end tests', on every test here.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from bot.agent import sandbox
from questbot_testing.fakegithub import FakeGitHub
from questbot_testing.modelserver.server import ModelServer, recorded
from questbot_testing.sample import sample_files
from tests.agent.conftest import (  # noqa: F401 - fixtures, used by name
    REPO,
    clients,
    ctx,
    journal,
    main_sha,
    quests,
    settings,
)
from tests.e2e.conftest import (  # noqa: F401 - the whole stack, and guards on every test here
    no_secrets_in_logs,
    people_read_words,
    stack,
)

WORKER_ENV = {
    "GITHUB_WEBHOOK_SECRET": "webhook-secret-HOSTILE-MARKER-1",
    "QUESTBOT_MODEL_API_KEY": "model-key-HOSTILE-MARKER-2",
    "AGENT_OPENAI_API_KEY": "agent-key-HOSTILE-MARKER-3",
    "QUESTBOT_TEST_TOKEN": "worker-token-HOSTILE-MARKER-4",
}
"""The worker's environment, as a worker has it: secrets a hostile model wants."""
CI_WORKFLOW = "on: push\njobs:\n  tests:\n    runs-on: ubuntu-latest\n"


def hostile_files(key_path: Path, extra: dict[str, str] | None = None
                  ) -> tuple[dict[str, str | bytes], dict[str, str]]:
    """The sample with the links a hostile repository commits: files and their modes."""
    links = {"system": "/etc", "worker-key": str(key_path), "worker-env": "/proc/self/environ",
             "docs/workflow": "../.github/workflows/ci.yml"}
    files: dict[str, str | bytes] = {**sample_files(), ".github/workflows/ci.yml": CI_WORKFLOW,
                                     **links, **(extra or {})}
    return files, dict.fromkeys(links, "120000")


def key_file(where: Path, pem: str) -> Path:
    """The App's key written where a worker keeps it (``GITHUB_PRIVATE_KEY_PATH``), mode 0600."""
    path = where / "questbot.private-key.pem"
    path.write_text(pem)
    path.chmod(0o600)
    return path


@dataclass
class Secrets:
    """What no output may hold (see the module docstring)."""

    named: dict[str, str] = field(default_factory=dict)

    def add(self, name: str, value: str) -> None:
        self.named[name] = value

    def leaked(self, text: str) -> list[str]:
        return sorted(name for name, value in self.named.items() if value and value in text)


@pytest.fixture
async def fake(tmp_path: Path) -> AsyncIterator[FakeGitHub]:
    async with FakeGitHub() as server:
        home = tmp_path / "worker"
        home.mkdir()
        files, modes = hostile_files(key_file(home, server.keys.private_pem))
        server.create_repository(REPO, files, modes=modes)
        yield server
        server.assert_clean()


@pytest.fixture
def secrets(fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> Secrets:
    """The worker's secrets, in place; tokens the fake mints later are added as they come."""
    for name, value in WORKER_ENV.items():
        monkeypatch.setenv(name, value)
    found = Secrets()
    for name, value in WORKER_ENV.items():
        found.add(f"the worker's {name}", value)
    pem = fake.keys.private_pem
    found.add("the App's private key", pem)
    body = [line for line in pem.splitlines() if line and not line.startswith("-----")]
    for n, line in enumerate(body, 1):
        found.add(f"line {n} of the App's private key", line)
    return found


def with_tokens(secrets: Secrets, fake: FakeGitHub) -> Secrets:
    """``secrets`` and every installation token the fake minted so far."""
    for token in [*fake.world.tokens, *fake.world.revoked]:
        secrets.add(f"installation token {token[:6]}…", token)
    return secrets


@dataclass
class Listener:
    """A TCP listener on the worker's loopback: a sandboxed command that reaches it reached
    the worker's network (Redis, the web process, the metadata service of a cloud host)."""

    port: int = 0
    reached: list[str] = field(default_factory=list)
    _server: asyncio.Server | None = None

    async def start(self) -> Listener:
        async def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.reached.append(str(writer.get_extra_info("peername")))
            writer.close()

        self._server = await asyncio.start_server(accepted, "127.0.0.1", 0)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()


@pytest.fixture
async def listener() -> AsyncIterator[Listener]:
    heard = await Listener().start()
    try:
        yield heard
    finally:
        await heard.close()


Serve = Callable[..., Any]


@pytest.fixture(params=["openai", "anthropic"])
def protocol(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def serve(protocol: str, listener: Listener) -> AsyncIterator[Serve]:
    """``await serve(*names)``: the model server answering from those recordings, with the
    sandbox's Python and the listener's port filled in; checked clean when the test ends."""
    servers: list[ModelServer] = []

    async def start(*names: str) -> ModelServer:
        server = await ModelServer(recorded(protocol, *names), substitutions={
            "PYTHON": sandbox.python(), "LISTENER": str(listener.port)}).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        await server.close()
    for server in servers:
        server.assert_clean()


def sent_to_model(server: ModelServer) -> str:
    """Everything the model was sent, every request's body: all it could ever repeat."""
    return "\n".join(json.dumps(s.request, ensure_ascii=False) for s in server.served)


def told(server: ModelServer) -> str:
    """What questbot told the model, its own answers left out: the instructions, the task and
    every tool's result (a recorded answer quotes what the attacker hoped to find)."""
    parts: list[str] = []
    for served in server.served:
        body = served.request
        parts.append(json.dumps(body.get("system"), ensure_ascii=False))
        parts += [json.dumps(m, ensure_ascii=False) for m in body.get("messages", [])
                  if m.get("role") != "assistant"]
    return "\n".join(parts)
