"""The coding-agent CLI presets, end to end through ``start_agent`` and the sandbox, against
stand-ins that speak each CLI's documented non-interactive interface (``clis/standin.py``).

For each of Claude Code, Codex, aider, mini-swe-agent and OpenHands: a good answer becomes the
stage's events with the spend the CLI reported as a usage receipt; an error the CLI reports
and output that cannot be read each end the run ``failed`` with a reason naming the CLI —
never a success. The CLI sees its own API key, under the name it reads, and nothing else of
the worker's environment.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.adapters import AdapterContext
from bot.agent import sandbox
from bot.agent.runs import agent_adapters
from bot.agent.sandbox import SandboxPolicy
from bot.core import EffectType, State
from questbot_testing.fakegithub import FakeGitHub
from tests.agent.conftest import PY, REPO, Quests, StaticSettings, only, settings_for

STANDIN = Path(__file__).parent / "clis" / "standin.py"
RESEARCH = {"hypothesis": "page_count rounds down",
            "claims": [{"statement": "integer division drops the last page", "confidence": 0.9,
                        "evidence": [{"path": "pager.py", "quote": "return total // per_page"}]}],
            "usage": {"tokens": 1, "cost_cents": 0}}
"""What the model answers; its ``usage`` is the model's claim, which questbot ignores."""

# preset, its program, the key it reads, tokens and cents it reports for a good run
PRESETS = [
    ("claude-code", "claude", "ANTHROPIC_API_KEY", 2000, 5),
    ("codex", "codex", "OPENAI_API_KEY", 24885, 0),
    ("aider", "aider", "OPENAI_API_KEY", 2810, 1),
    ("mini-swe-agent", "mini", "OPENAI_API_KEY", 0, 4),
    ("openhands", "openhands", "LLM_API_KEY", 9700, 12),
]
ERRORS = {"claude-code": "Claude Code reported an error: Reached the maximum number of turns",
          "codex": "Codex reported an error: model response stream ended unexpectedly",
          "aider": "aider exited with status 1: litellm.AuthenticationError",
          "mini-swe-agent": "mini-swe-agent stopped with LimitsExceeded",
          "openhands": "OpenHands reported an error: LLM authentication failed"}
GARBAGE = {"claude-code": "Claude Code printed no JSON result object",
           "codex": "Codex printed no JSON events",
           "aider": "aider's final message holds no JSON answer",
           "mini-swe-agent": "mini-swe-agent wrote no readable trajectory file",
           "openhands": "OpenHands printed no JSON events" }


@pytest.fixture
def tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The CLIs' ``bin`` in a directory the sandbox shows read-only (its ``bin`` goes on the
    sandbox's ``PATH``, as ``QUESTBOT_SANDBOX_READONLY`` does for an operator's tools)."""
    root = tmp_path / "tools"
    (root / "bin").mkdir(parents=True)
    for name in ("claude", "codex", "aider", "mini", "openhands"):
        program = root / "bin" / name
        program.write_text(f"#!{PY}\n" + STANDIN.read_text())
        program.chmod(0o755)
    (tmp_path / "scratch").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "scratch"))
    monkeypatch.setenv("QUESTBOT_SECRET", "do-not-leak")
    monkeypatch.setenv("GITHUB_PRIVATE_KEY", "-----BEGIN RSA PRIVATE KEY-----")
    monkeypatch.setenv("AGENT_OTHER_TOKEN", "for-another-agent")
    with sandbox.using(SandboxPolicy(readonly=(root,))):
        yield root


def scene(tools: Path, settings: StaticSettings, monkeypatch: pytest.MonkeyPatch,
          preset: str, key: str, *, mode: str = "ok", answer: Any = None,
          **more: Any) -> None:
    monkeypatch.setenv(f"AGENT_{key}", "sk-for-the-cli")
    (tools / "scenario.json").write_text(json.dumps(
        {"mode": mode, "answer": RESEARCH if answer is None else answer, "key": key,
         "prompt_has": ["Stage: research", "tests fail on main"], **more}))
    settings.value = settings_for(kind="command", preset=preset, timeout_seconds=60,
                                  network=True)


@pytest.mark.parametrize(("preset", "program", "key", "tokens", "cents"), PRESETS)
async def test_a_good_answer_becomes_a_hypothesis_with_the_cli_s_spend(
        ctx: AdapterContext, settings: StaticSettings, quests: Quests, main_sha: str,
        tools: Path, monkeypatch: pytest.MonkeyPatch, preset: str, program: str, key: str,
        tokens: int, cents: int) -> None:
    scene(tools, settings, monkeypatch, preset, key)
    events = await agent_adapters(ctx)[EffectType.START_AGENT](await quests.sense(main_sha))
    types = [e.type for e in events or ()]
    assert types == ["hypothesis_written"] + (["usage_recorded"] if tokens or cents else []), (
        getattr((events or [None])[0], "reason", events))
    await quests.apply(events)
    assert quests.now().state is State.HYPOTHESISED
    assert quests.now().hypothesis == "page_count rounds down"
    assert (quests.now().usage_tokens, quests.now().usage_cost_cents) == (tokens, cents)


@pytest.mark.parametrize(("preset", "program", "key", "tokens", "cents"), PRESETS)
@pytest.mark.parametrize("mode", ["error", "garbage"])
async def test_an_error_or_garbage_is_a_failed_run_never_a_success(
        ctx: AdapterContext, settings: StaticSettings, quests: Quests, main_sha: str,
        tools: Path, monkeypatch: pytest.MonkeyPatch, preset: str, program: str, key: str,
        tokens: int, cents: int, mode: str) -> None:
    scene(tools, settings, monkeypatch, preset, key, mode=mode)
    events = list(await agent_adapters(ctx)[EffectType.START_AGENT](
        await quests.sense(main_sha)) or ())
    halted: Any = events[0]
    assert (halted.type, halted.stage, halted.outcome) == ("agent_halted", "research", "failed")
    assert (ERRORS if mode == "error" else GARBAGE)[preset] in halted.reason
    assert "hypothesis_written" not in [e.type for e in events]


async def test_an_answer_of_the_wrong_shape_is_refused_with_what_is_wrong(
        ctx: AdapterContext, settings: StaticSettings, quests: Quests, main_sha: str,
        tools: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scene(tools, settings, monkeypatch, "claude-code", "ANTHROPIC_API_KEY",
          answer={"hypothesis": "h", "claims": "all of them"})
    events: Any = await agent_adapters(ctx)[EffectType.START_AGENT](await quests.sense(main_sha))
    assert [e.type for e in events] == ["agent_halted", "usage_recorded"]
    assert "Claude Code's answer is not a reply (claims" in events[0].reason
    assert events[1].cost_cents == 5  # the spend is kept even when the answer is refused


async def test_a_missing_key_says_which_variable_the_operator_sets(
        ctx: AdapterContext, settings: StaticSettings, quests: Quests, main_sha: str,
        tools: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scene(tools, settings, monkeypatch, "codex", "OPENAI_API_KEY")
    monkeypatch.delenv("AGENT_OPENAI_API_KEY")
    events: Any = await agent_adapters(ctx)[EffectType.START_AGENT](await quests.sense(main_sha))
    assert events[0].outcome == "failed"
    assert "OPENAI_API_KEY is not set" in events[0].reason
    assert "set AGENT_OPENAI_API_KEY in its environment" in events[0].reason


async def test_the_repository_may_rename_the_key_and_pick_the_model(
        ctx: AdapterContext, settings: StaticSettings, quests: Quests, main_sha: str,
        tools: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scene(tools, settings, monkeypatch, "openhands", "OPENROUTER_KEY",
          env={"LLM_MODEL": "openrouter/qwen-coder"})
    settings.value = settings_for(kind="command", preset="openhands", timeout_seconds=60,
                                  api_key_env="OPENROUTER_KEY", model="openrouter/qwen-coder",
                                  network=True)
    events: Any = await agent_adapters(ctx)[EffectType.START_AGENT](await quests.sense(main_sha))
    assert [e.type for e in events] == ["hypothesis_written", "usage_recorded"]


async def test_the_failing_log_reaches_the_cli_fenced(
        ctx: AdapterContext, settings: StaticSettings, quests: Quests, main_sha: str,
        tools: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The prompt carries the task's CI log as untrusted data, trimmed to the failing step."""
    from bot.agent.presets import prompt
    from bot.agent.task import AgentTask, QuestBrief, Stage

    await quests.sense(main_sha)
    log = ("##[group]Run setup\nok\n##[endgroup]\n##[group]Run pytest\nFAILED test_last\n"
           "##[error]Process completed with exit code 1.\n")
    text = prompt(AgentTask(stage=Stage.RESEARCH, quest=QuestBrief.of(quests.now()), log=log))
    fenced = text.split('<untrusted-data source="CI log of the failing step">\n', 1)[1]
    assert fenced.startswith("##[group]Run pytest\nFAILED test_last")
    assert "Run setup" not in text


async def test_aider_s_edits_are_the_patch_and_its_cache_is_not(
        fake: FakeGitHub, ctx: AdapterContext, settings: StaticSettings, quests: Quests,
        main_sha: str, tools: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = fake.repo(REPO).git.read(main_sha, "pager.py")
    assert source is not None
    fixed = source.decode().replace("total // per_page", "-(-total // per_page)")
    scene(tools, settings, monkeypatch, "aider", "OPENAI_API_KEY")
    run = agent_adapters(ctx)
    await quests.apply(await run[EffectType.START_AGENT](await quests.sense(main_sha)))
    await quests.decide("A")
    repro = await fake.push(REPO, "quest/q-1", {"tests/test_repro.py": (
        "import unittest\nfrom pager import page_count\n\nclass T(unittest.TestCase):\n"
        "    def test_last(self) -> None:\n        self.assertEqual(page_count(10, 3), 4)\n")})
    await quests.add("reproduced", check="test_repro", commit=repro.sha,
                     command=[PY, "-m", "unittest", "-q", "tests.test_repro"])
    await quests.add("plan_written", summary="round up")
    scene(tools, settings, monkeypatch, "aider", "OPENAI_API_KEY",
          answer={"message": "Round the page count up"}, edit={"pager.py": fixed},
          prompt_has=["Stage: patch", "round up"])
    events: Any = await run[EffectType.START_AGENT](
        only(await quests.decide("B"), EffectType.START_AGENT))
    assert [e.type for e in events] == ["patch_pushed", "usage_recorded"], events[0]
    stored = fake.repo(REPO)
    before, after = stored.git.files(repro.sha), stored.git.files(events[0].head)
    assert [p for p in after if after.get(p) != before.get(p)] == ["pager.py"]
    assert stored.git.commits[events[0].head].message.startswith("Round the page count up")


async def test_the_repository_may_name_the_cli_s_program(
        ctx: AdapterContext, settings: StaticSettings, quests: Quests, main_sha: str,
        tools: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A CLI installed off the sandbox's ``PATH``: ``agent.command`` names it; the preset's
    flags follow it."""
    (tools / "opt").mkdir()
    (tools / "bin" / "claude").rename(tools / "opt" / "claude")
    scene(tools, settings, monkeypatch, "claude-code", "ANTHROPIC_API_KEY")
    settings.value = settings_for(kind="command", preset="claude-code", timeout_seconds=60,
                                  command=[str(tools / "opt" / "claude")], network=True)
    events: Any = await agent_adapters(ctx)[EffectType.START_AGENT](await quests.sense(main_sha))
    assert [e.type for e in events] == ["hypothesis_written", "usage_recorded"]


async def test_a_cli_missing_from_the_sandbox_is_a_clear_failure(
        ctx: AdapterContext, settings: StaticSettings, quests: Quests, main_sha: str,
        tools: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tools / "bin" / "mini").unlink()
    scene(tools, settings, monkeypatch, "mini-swe-agent", "OPENAI_API_KEY")
    events: Any = await agent_adapters(ctx)[EffectType.START_AGENT](await quests.sense(main_sha))
    assert events[0].outcome == "failed"
    assert "'mini' is not an executable the sandbox can see" in events[0].reason


async def test_a_second_attempt_never_reads_what_the_first_left(
        tools: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The agent's home outlives one attempt of a stage; a CLI's files there do not."""
    from bot.agent.command import CommandAgent, RunningAgents
    from bot.agent.presets import PRESETS
    from bot.agent.task import AgentTask, QuestBrief, ReplyStatus, Stage
    from bot.core.proof import Risk

    checkout = tmp_path / "checkout"
    checkout.mkdir()
    agent = CommandAgent((), timeout_seconds=60, quest_id="q-1", registry=RunningAgents(),
                         home=tmp_path / "home", preset=PRESETS["mini-swe-agent"],
                         network=True)
    quest = QuestBrief(id="q-1", repo=REPO, title="tests fail on main", kind="check_failure",
                       severity="high", revision=1, base="a" * 40, head=None, hypothesis=None,
                       reproduction=None, reproduction_command=(), plan=None, risk=Risk.LOW,
                       attempts=0)
    task = AgentTask(stage=Stage.RESEARCH, quest=quest)
    scene(tools, StaticSettings(), monkeypatch, "mini-swe-agent", "OPENAI_API_KEY")
    first = await agent.run(task, checkout)
    assert first.status is ReplyStatus.OK and first.hypothesis == "page_count rounds down"
    scene(tools, StaticSettings(), monkeypatch, "mini-swe-agent", "OPENAI_API_KEY",
          mode="silent")
    second = await agent.run(task, checkout)
    assert second.status is ReplyStatus.FAILED
    assert "wrote no readable trajectory file" in (second.reason or "")


async def test_without_the_network_a_failed_run_says_how_to_allow_it(
        ctx: AdapterContext, settings: StaticSettings, quests: Quests, main_sha: str,
        tools: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scene(tools, settings, monkeypatch, "claude-code", "ANTHROPIC_API_KEY", mode="error")
    settings.value = settings_for(kind="command", preset="claude-code", timeout_seconds=60)
    events: Any = await agent_adapters(ctx)[EffectType.START_AGENT](await quests.sense(main_sha))
    assert events[0].outcome == "failed"
    assert "`agent.network: true` in .github/questbot.yml" in events[0].reason
