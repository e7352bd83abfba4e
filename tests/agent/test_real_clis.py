"""The coding-agent CLI presets against the real CLIs, not stand-ins.

aider and mini-swe-agent from PyPI, Claude Code and Codex from npm, at the versions pinned in
``testing/clis/`` and installed by ``scripts/setup-clis`` into ``.cache/clis`` (run here once,
a no-op when they are there). Each runs as questbot runs it — through ``start_agent``, in the
bubblewrap sandbox, with only its key from the worker's ``AGENT_*`` — and talks over HTTP to
the recorded model server, reached through the endpoint setting the CLI documents:

* Claude Code: ``ANTHROPIC_BASE_URL`` (Anthropic Messages, streamed);
* Codex: a ``model_providers`` entry in its config (``-c``), since it reads no base URL from
  the environment and speaks only the Responses API (streamed);
* aider: ``OPENAI_API_BASE`` (chat completions through LiteLLM);
* mini-swe-agent: ``OPENAI_API_BASE`` likewise.

Those settings reach the CLI the one way a repository can give it more than its key today:
``agent.command``, the CLI's program and leading words, here ``env NAME=VALUE … CLI``
(``docs/decisions.md``: questbot has no worker-side endpoint setting for a preset).

So the invocation (flags, where the prompt goes), the reading of each CLI's real output and
its spend, and its error path are proven against the program itself. OpenHands is not here:
``docs/decisions.md`` says why.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.adapters import AdapterContext
from bot.agent import sandbox
from bot.agent.runs import agent_adapters
from bot.agent.sandbox import SandboxPolicy
from bot.core import EffectType, State
from questbot_testing.fakegithub import FakeGitHub
from questbot_testing.modelserver.cli_recorded import ANSWER
from questbot_testing.modelserver.server import ModelServer, recorded
from tests.agent.conftest import PY, REPO, Quests, StaticSettings, only, settings_for

ROOT = Path(__file__).resolve().parents[2]
CLIS = Path(os.environ.get("QUESTBOT_CACHE", ROOT / ".cache")) / "clis"
KEY = "sk-questbot-test"

pytestmark = [pytest.mark.timeout(600), pytest.mark.slow]


@pytest.fixture(scope="module")
def clis() -> Path:
    """The real CLIs, installed (or found installed) by ``scripts/setup-clis``."""
    done = subprocess.run([str(ROOT / "scripts" / "setup-clis")], capture_output=True,
                          text=True, timeout=1200, check=False)
    assert done.returncode == 0, f"scripts/setup-clis failed:\n{done.stderr[-3000:]}"
    return CLIS


@pytest.fixture
def confined(clis: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The CLIs' directory read-only in the sandbox, its ``bin`` on the sandbox's ``PATH``
    (as ``QUESTBOT_SANDBOX_READONLY`` shows an operator's tools)."""
    (tmp_path / "scratch").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "scratch"))
    monkeypatch.setenv("GITHUB_PRIVATE_KEY", "-----BEGIN RSA PRIVATE KEY-----")
    with sandbox.using(SandboxPolicy(readonly=(clis,))):
        yield clis


async def _served(protocol: str, *names: str) -> ModelServer:
    return await ModelServer(recorded(protocol, *names) if names else []).start()


@pytest.fixture
async def servers() -> AsyncIterator[list[ModelServer]]:
    started: list[ModelServer] = []
    yield started
    for server in started:
        await server.close()


def claude_code(url: str) -> dict[str, Any]:
    # the variables Claude Code documents: its endpoint, and no traffic but the model's
    return {"preset": "claude-code", "command": [
        "env", f"ANTHROPIC_BASE_URL={url}", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
        "DISABLE_AUTOUPDATER=1", "claude"]}


def codex(url: str) -> dict[str, Any]:
    provider = (f'model_providers.questbot={{name="questbot", base_url="{url}/v1", '
                'env_key="OPENAI_API_KEY", wire_api="responses", supports_websockets=false}')
    return {"preset": "codex", "command": ["codex", "-c", "model_provider=questbot",
                                           "-c", provider],
            "model": "gpt-5.1-codex"}


def aider(url: str) -> dict[str, Any]:
    return {"preset": "aider", "command": ["env", f"OPENAI_API_BASE={url}/v1", "aider"],
            "model": "openai/gpt-4.1-mini"}


def mini_swe_agent(url: str) -> dict[str, Any]:
    return {"preset": "mini-swe-agent", "model": "openai/gpt-4.1-mini",
            "command": ["env", f"OPENAI_API_BASE={url}/v1",
                        # one try at a refused request, not ten with back-off
                        "MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT=1", "mini"]}


# the CLI, how it is pointed at the server, the key it reads, the protocol and recording
CLI = {
    "claude-code": (claude_code, "ANTHROPIC_API_KEY", "anthropic",
                    "cli-claude-code-research"),
    "codex": (codex, "OPENAI_API_KEY", "responses", "cli-codex-research"),
    "aider": (aider, "OPENAI_API_KEY", "openai", "cli-aider-research"),
    "mini-swe-agent": (mini_swe_agent, "OPENAI_API_KEY", "openai",
                       "cli-mini-swe-agent-research"),
}
TOKENS = 3100 + 80 + 3400 + 260
"""The recorded usage of both turns of each conversation: every CLI reports all of it
(mini-swe-agent in its trajectory's messages, aider rounded to its ``3.1k sent``)."""


def point(settings: StaticSettings, monkeypatch: pytest.MonkeyPatch, preset: str,
          server: ModelServer) -> None:
    how, key, _, _ = CLI[preset]
    monkeypatch.setenv(f"AGENT_{key}", KEY)
    settings.value = settings_for(kind="command", timeout_seconds=300, network=True,
                                  **how(server.url))


@pytest.mark.parametrize("preset", list(CLI))
async def test_the_real_cli_researches_and_its_answer_and_spend_are_read(
        ctx: AdapterContext, settings: StaticSettings, quests: Quests, main_sha: str,
        confined: Path, servers: list[ModelServer], monkeypatch: pytest.MonkeyPatch,
        preset: str) -> None:
    _, _, protocol, name = CLI[preset]
    server = await _served(protocol, name)
    servers.append(server)
    point(settings, monkeypatch, preset, server)
    events: Any = await agent_adapters(ctx)[EffectType.START_AGENT](
        await quests.sense(main_sha))
    server.assert_clean()
    assert [e.type for e in events][:1] == ["hypothesis_written"], getattr(
        events[0], "reason", events[0])
    await quests.apply(events)
    assert quests.now().state is State.HYPOTHESISED
    assert quests.now().hypothesis == ANSWER["hypothesis"]
    assert quests.now().usage_tokens == TOKENS
    if preset in ("claude-code", "mini-swe-agent", "aider"):
        assert quests.now().usage_cost_cents >= 1  # priced by the CLI's own table
    turns = server.turns_of(name)
    assert turns == sorted(set(turns)) and turns[-1] == len(
        recorded(protocol, name)[0].turns), turns
    served = server.served[0]
    key = served.headers.get("x-api-key") or served.headers.get("Authorization", "")
    assert KEY in key  # the operator's key, under the name the CLI reads


ERRORS = {
    "claude-code": "Claude Code reported an error: API Error: 400",
    "codex": "Codex reported an error:",
    "aider": "aider reported an error: litellm.BadRequestError",
    "mini-swe-agent": "mini-swe-agent stopped with",
}


@pytest.mark.parametrize("preset", list(CLI))
async def test_a_model_server_refusal_ends_the_run_failed_in_the_cli_s_words(
        ctx: AdapterContext, settings: StaticSettings, quests: Quests, main_sha: str,
        confined: Path, servers: list[ModelServer], monkeypatch: pytest.MonkeyPatch,
        preset: str) -> None:
    """A server that knows no conversation answers 400; every CLI gives up, and questbot
    ends the stage failed with what the CLI said, never a success."""
    protocol = CLI[preset][2]
    server = await _served(protocol)
    servers.append(server)
    point(settings, monkeypatch, preset, server)
    events: Any = await agent_adapters(ctx)[EffectType.START_AGENT](
        await quests.sense(main_sha))
    halted = events[0]
    assert (halted.type, halted.outcome) == ("agent_halted", "failed"), halted
    assert ERRORS[preset] in halted.reason
    assert "matches 0 recorded conversations" in halted.reason
    assert server.requests >= 1


async def test_aider_s_real_edit_is_the_patch(
        fake: FakeGitHub, ctx: AdapterContext, settings: StaticSettings, quests: Quests,
        main_sha: str, confined: Path, servers: list[ModelServer],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """aider applies the model's SEARCH/REPLACE block to the working tree; questbot pushes
    that change, and only that, as the patch, with the answer's commit message."""
    server = await _served("openai", "cli-aider-research", "cli-aider-patch")
    servers.append(server)
    point(settings, monkeypatch, "aider", server)
    run = agent_adapters(ctx)
    await quests.apply(await run[EffectType.START_AGENT](await quests.sense(main_sha)))
    await quests.decide("A")
    repro = await fake.push(REPO, "quest/q-1", {"tests/test_repro.py": (
        "import unittest\nfrom pager import page_count\n\nclass T(unittest.TestCase):\n"
        "    def test_last(self) -> None:\n        self.assertEqual(page_count(10, 3), 4)\n")})
    await quests.add("reproduced", check="test_repro", commit=repro.sha,
                     command=[PY, "-m", "unittest", "-q", "tests.test_repro"])
    await quests.add("plan_written", summary="Round the page count up in pager.py")
    events: Any = await run[EffectType.START_AGENT](
        only(await quests.decide("B"), EffectType.START_AGENT))
    server.assert_clean()
    assert [e.type for e in events][:1] == ["patch_pushed"], events[0]
    stored = fake.repo(REPO)
    before, after = stored.git.files(repro.sha), stored.git.files(events[0].head)
    assert [p for p in after if after.get(p) != before.get(p)] == ["pager.py"]
    assert b"return -(-total // per_page)" in (stored.git.read(events[0].head, "pager.py") or b"")
    assert stored.git.commits[events[0].head].message.startswith("Count a partial last page")


def test_the_pins_are_what_is_installed(clis: Path) -> None:
    """What setup-clis installed is what testing/clis pins, by version."""
    lock = json.loads((ROOT / "testing" / "clis" / "package-lock.json").read_text())
    for package in ("@anthropic-ai/claude-code", "@openai/codex"):
        installed = json.loads((clis / "npm" / "node_modules" / package / "package.json")
                               .read_text())
        assert installed["version"] == lock["packages"][f"node_modules/{package}"]["version"]
