"""The ``command`` agent against small Python scripts: replies, patches, and every way it fails."""

from __future__ import annotations

import asyncio
import json
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.adapters import AdapterContext
from bot.agent import sandbox
from bot.agent.command import parse_reply
from bot.agent.runs import agent_adapters
from bot.agent.sandbox import SandboxPolicy
from bot.agent.task import ReplyStatus
from bot.core import EffectType, State
from questbot_testing.fakegithub import FakeGitHub
from tests.agent.conftest import PY, REPO, Quests, StaticSettings, only, settings_for

RESEARCH_REPLY = {
    "hypothesis": "page_count rounds down",
    "claims": [{"statement": "integer division", "confidence": 0.9,
                "evidence": [{"path": "pager.py", "quote": "return total // per_page"}]}],
    "usage": {"tokens": 42, "cost_cents": 3},
}

AGENT = '''\
import json, os, pathlib, sys, time
task = json.load(sys.stdin)
marker = os.environ.get("AGENT_MARKER")
if marker:
    pathlib.Path(marker).write_text(task["stage"])
assert "QUESTBOT_SECRET" not in os.environ, "the worker's secrets leaked"
assert pathlib.Path("pager.py").is_file() and task["checkout"] == os.getcwd()
BODY
'''


@pytest.fixture(autouse=True)
def tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Where the agent programs live: a directory the sandbox shows read-only, as an operator
    adds one with ``QUESTBOT_SANDBOX_READONLY``; and a scratch ``tempfile`` directory, so a
    test can find the checkout an agent runs in."""
    path = tmp_path / "tools"
    path.mkdir()
    (tmp_path / "scratch").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "scratch"))
    with sandbox.using(SandboxPolicy(readonly=(path,))):
        yield path


def script(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "tools" / "agent.py"
    path.write_text(AGENT.replace("BODY", textwrap.dedent(body)))
    return path


def use(settings: StaticSettings, path: Path, timeout: int = 60) -> None:
    settings.value = settings_for(kind="command", command=[PY, str(path)],
                                  timeout_seconds=timeout)


async def test_a_valid_reply_becomes_a_hypothesis(
        ctx: AdapterContext, settings: StaticSettings, quests: Quests, main_sha: str,
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QUESTBOT_SECRET", "do-not-leak")
    use(settings, script(tmp_path, f"print(json.dumps({RESEARCH_REPLY!r}))"))
    events = await agent_adapters(ctx)[EffectType.START_AGENT](await quests.sense(main_sha))
    assert [e.type for e in events or ()] == ["hypothesis_written", "usage_recorded"]
    await quests.apply(events)
    assert quests.now().state is State.HYPOTHESISED
    assert quests.now().usage_tokens == 42 and quests.now().usage_cost_cents == 3


async def test_the_agent_runs_in_the_sandbox(
        ctx: AdapterContext, settings: StaticSettings, quests: Quests, main_sha: str,
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QUESTBOT_SECRET", "do-not-leak")
    monkeypatch.setenv("AGENT_MODEL_KEY", "for-the-agent")
    (tmp_path / "worker-file").write_text("the worker's")
    use(settings, script(tmp_path, f"""
        first = open("/proc/1/environ", "rb").read()
        assert b"do-not-leak" not in first and b"for-the-agent" in first, first
        assert os.environ["AGENT_MODEL_KEY"] == "for-the-agent" and os.getuid() == 65534
        assert not pathlib.Path({str(tmp_path / "worker-file")!r}).exists()
        try:
            pathlib.Path(".git/config").write_text("[core]")
            raise SystemExit("wrote .git/config")
        except OSError:
            pass
        import socket
        try:
            socket.create_connection(("1.1.1.1", 443), timeout=1)
            raise SystemExit("reached the network")
        except OSError:
            pass
        print(json.dumps({RESEARCH_REPLY!r}))
    """))
    events = await agent_adapters(ctx)[EffectType.START_AGENT](await quests.sense(main_sha))
    assert [e.type for e in events or ()] == ["hypothesis_written", "usage_recorded"]


async def test_a_patch_left_in_the_checkout_is_verified_and_pushed(
        fake: FakeGitHub, ctx: AdapterContext, settings: StaticSettings, quests: Quests,
        main_sha: str, tmp_path: Path) -> None:
    use(settings, script(tmp_path, """
        if task["stage"] == "patch":
            p = pathlib.Path("pager.py")
            p.write_text(p.read_text().replace("total // per_page", "-(-total // per_page)"))
            print(json.dumps({"message": "round up"}))
        else:
            print(json.dumps({"hypothesis": "h", "claims": [{"statement": "s",
                "confidence": 0.9, "evidence": [{"path": "pager.py"}]}]}))
    """))
    run = agent_adapters(ctx)
    await quests.apply(await run[EffectType.START_AGENT](await quests.sense(main_sha)))
    await quests.decide("A")
    # a person wrote the reproduction; the agent only patches
    repro = await fake.push(REPO, "quest/q-1", {"tests/test_repro.py": (
        "import unittest\nfrom pager import page_count\n\nclass T(unittest.TestCase):\n"
        "    def test_last(self) -> None:\n        self.assertEqual(page_count(10, 3), 4)\n")})
    await quests.add("reproduced", check="test_repro", commit=repro.sha,
                     command=[PY, "-m", "unittest", "-q", "tests.test_repro"])
    await quests.add("plan_written", summary="round up")
    start = only(await quests.decide("B"), EffectType.START_AGENT)
    events = await run[EffectType.START_AGENT](start)
    assert [e.type for e in events or ()] == ["patch_pushed"]
    head = events[0].head  # type: ignore[index,union-attr]
    stored = fake.repo(REPO)
    assert stored.git.commits[head].parents == (repro.sha,)
    before, after = stored.git.files(repro.sha), stored.git.files(head)
    assert set(after) == set(before)  # no __pycache__ from the checks came along
    assert [p for p in after if after[p] != before[p]] == ["pager.py"]
    assert stored.git.commits[head].message.startswith("round up")


# a generous time limit except where the limit is the point: a loaded machine must not turn
# "printed too much" into "ran too long"
@pytest.mark.parametrize(("body", "expected", "timeout"), [
    ("print('{not json')", "the agent's output is not JSON", 60),
    ("print(json.dumps({'hypothesis': 'h', 'surprise': 1}))", "surprise: Extra inputs", 60),
    ("print('')", "printed nothing", 60),
    ("sys.exit(3)", "exited with status 3", 60),
    ("sys.stdout.write('x' * 5_000_000)", "printed more than 1048576 bytes", 60),
    ("time.sleep(30)", "ran longer than 1 s and was killed", 1),
])
async def test_failures_end_the_run_with_a_clear_reason(
        ctx: AdapterContext, settings: StaticSettings, quests: Quests, main_sha: str,
        tmp_path: Path, body: str, expected: str, timeout: int) -> None:
    use(settings, script(tmp_path, body), timeout=timeout)
    events = await agent_adapters(ctx)[EffectType.START_AGENT](await quests.sense(main_sha))
    assert [e.type for e in events or ()] == ["agent_halted"]
    halted: Any = events[0]
    assert (halted.stage, halted.outcome) == ("research", "failed")
    assert expected in halted.reason


async def started(tmp_path: Path) -> None:
    """The agent wrote ``started`` in its checkout (the one place outside its sandbox's
    private /tmp that it can write, besides its home)."""
    for _ in range(500):
        if list((tmp_path / "scratch").glob("questbot-agent-*/checkout/started")):
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the agent never started")


async def test_stop_agent_kills_the_run_and_drops_its_outcome(
        ctx: AdapterContext, settings: StaticSettings, quests: Quests, main_sha: str,
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_MARKER", "started")
    use(settings, script(tmp_path, "time.sleep(60)"))
    run = agent_adapters(ctx, poll_seconds=60)
    start = await quests.sense(main_sha)
    running = asyncio.ensure_future(run[EffectType.START_AGENT](start))
    await started(tmp_path)
    stop = await quests.add("paused", actor="maintainer", reason="lunch")
    await run[EffectType.STOP_AGENT](only(stop, EffectType.STOP_AGENT))
    assert await asyncio.wait_for(running, 10) is None


async def test_a_run_stops_itself_when_the_quest_leaves_the_stage(
        ctx: AdapterContext, settings: StaticSettings, quests: Quests, main_sha: str,
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_MARKER", "started")
    use(settings, script(tmp_path, "time.sleep(60)"))
    run = agent_adapters(ctx, poll_seconds=0.05)
    running = asyncio.ensure_future(run[EffectType.START_AGENT](await quests.sense(main_sha)))
    await started(tmp_path)
    await quests.add("killed", actor="maintainer", reason="not worth it")
    assert await asyncio.wait_for(running, 10) is None


def test_parse_reply_is_json_only() -> None:
    assert parse_reply(b'{"plan": {"summary": "s", "risk": "high"}}').plan is not None
    reply = parse_reply(b"__import__('os').system('echo pwned')")
    assert reply.status is ReplyStatus.FAILED and "not JSON" in (reply.reason or "")
    assert parse_reply(json.dumps({"status": "refused", "reason": "no"}).encode()).status is (
        ReplyStatus.REFUSED)
