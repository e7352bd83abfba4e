"""The ``run_proof`` adapter on the sample repository: real checks, real git, GitHub SHAs."""

from __future__ import annotations

import pytest

from bot.adapters import AdapterContext
from bot.agent import sandbox
from bot.agent.runs import agent_adapters
from bot.agent.sandbox import SandboxPolicy, SandboxUnavailable
from bot.core import (
    Effect,
    EffectType,
    InvalidTransition,
    ProofBundle,
    State,
    step,
)
from bot.core.events.agent_work import ProofCompleted, ProofFailed
from bot.errors import PermanentError
from questbot_testing.fakegithub import FakeGitHub
from questbot_testing.sample import REPRODUCTION_PATH, REPRODUCTION_TEST, sample_files
from tests.agent.conftest import POLICY, PY, REPO, Quests, only

FIXED = sample_files()["pager.py"].replace("total // per_page", "-(-total // per_page)")
COMMAND = (PY, "-m", "unittest", "-q", "tests.test_questbot_reproduction")


async def at_proving(fake: FakeGitHub, quests: Quests, main_sha: str,
                     patch: dict[str, str | bytes | None], *,
                     repro: str = REPRODUCTION_TEST) -> Effect:
    """A quest in ``proving`` whose reproduction and patch were pushed by someone else."""
    await quests.sense(main_sha)
    await quests.add("hypothesis_written", summary="pages round down")
    await quests.decide("A")
    commit = await fake.push(REPO, "quest/q-1", {REPRODUCTION_PATH: repro})
    await quests.add("reproduced", check="test_questbot_reproduction", command=COMMAND,
                     commit=commit.sha)
    await quests.add("plan_written", summary="round up", risk="low")
    await quests.decide("B")
    head = await fake.push(REPO, "quest/q-1", patch)
    return only(await quests.add("patch_pushed", head=head.sha, pusher="questbot[bot]"),
                EffectType.RUN_PROOF)


async def test_a_passing_patch_completes_a_proof_the_core_accepts(
        fake: FakeGitHub, ctx: AdapterContext, quests: Quests, main_sha: str) -> None:
    effect = await at_proving(fake, quests, main_sha, {"pager.py": FIXED})
    events = await agent_adapters(ctx)[EffectType.RUN_PROOF](effect)
    assert events is not None and len(events) == 1
    done = events[0]
    assert isinstance(done, ProofCompleted)
    quest = quests.now()
    assert (done.bundle.base, done.bundle.head) == (main_sha, quest.head)
    assert done.digest == done.bundle.digest()
    assert [c.name for c in done.bundle.checks] == [f"{PY} -m unittest -q"]
    assert done.bundle.reproduction is not None
    assert done.bundle.reproduction.base_exit_code != 0
    assert done.bundle.reproduction.head_exit_code == 0
    moved = step(quest, done, POLICY)
    assert moved.quest.state is State.READY and moved.quest.proof_bound
    await quests.apply(events)
    assert quests.now().state is State.READY


async def test_a_failing_patch_fails_the_proof_with_the_check_and_exit_code(
        fake: FakeGitHub, ctx: AdapterContext, quests: Quests, main_sha: str) -> None:
    wrong = sample_files()["pager.py"].replace("total // per_page", "total // per_page + 1")
    effect = await at_proving(fake, quests, main_sha, {"pager.py": wrong})
    events = await agent_adapters(ctx)[EffectType.RUN_PROOF](effect)
    assert events is not None
    failed = events[0]
    assert isinstance(failed, ProofFailed)
    assert failed.head == quests.now().head
    assert f"check '{PY} -m unittest -q' failed at the head (exit 1)" in failed.reason
    assert "FAIL" in failed.reason  # the output tail, for the repair
    repair = only(await quests.apply(events), EffectType.START_AGENT)
    assert repair.payload["stage"] == "patch" and repair.payload["repair"] == failed.reason
    assert quests.now().state is State.PATCHING


async def test_a_reproduction_that_passes_on_the_base_fails_the_proof(
        fake: FakeGitHub, ctx: AdapterContext, quests: Quests, main_sha: str) -> None:
    harmless = ("import unittest\n\nclass T(unittest.TestCase):\n"
                "    def test_ok(self) -> None:\n        pass\n")
    effect = await at_proving(fake, quests, main_sha, {"pager.py": FIXED}, repro=harmless)
    events = await agent_adapters(ctx)[EffectType.RUN_PROOF](effect)
    assert events is not None
    failed = events[0]
    assert isinstance(failed, ProofFailed)
    assert "passes on the base, so it does not show the bug" in failed.reason
    assert failed.digest is not None


async def test_a_head_that_rewrites_the_reproduction_fails_before_running(
        fake: FakeGitHub, ctx: AdapterContext, quests: Quests, main_sha: str) -> None:
    effect = await at_proving(fake, quests, main_sha, {REPRODUCTION_PATH: "import unittest\n"})
    events = await agent_adapters(ctx)[EffectType.RUN_PROOF](effect)
    assert events is not None
    assert isinstance(events[0], ProofFailed)
    assert "changes the reproduction's files" in events[0].reason


async def test_a_failed_bundle_is_never_accepted_as_proof(
        fake: FakeGitHub, ctx: AdapterContext, quests: Quests, main_sha: str) -> None:
    """Even if someone sent the failing bundle as ``proof_completed``, the core refuses it."""
    wrong = sample_files()["pager.py"].replace("total // per_page", "total // per_page + 1")
    effect = await at_proving(fake, quests, main_sha, {"pager.py": wrong})
    events = await agent_adapters(ctx)[EffectType.RUN_PROOF](effect)
    assert events is not None and isinstance(events[0], ProofFailed)
    quest = quests.now()
    bundle = ProofBundle.model_validate({
        "quest_id": quest.id, "revision": quest.revision, "risk": "low", "base": quest.base,
        "head": quest.head, "checks": [{"name": "t", "command": ["t"], "exit_code": 1,
                                        "output_sha256": "0" * 64}]})
    forged = quests.event("proof_completed", bundle=bundle.as_json(), digest=bundle.digest())
    with pytest.raises(InvalidTransition, match="failing check"):
        step(quest, forged, POLICY)


async def test_without_a_sandbox_the_proof_refuses_to_run_repository_code(
        fake: FakeGitHub, ctx: AdapterContext, quests: Quests, main_sha: str) -> None:
    """Where bubblewrap cannot run, the effect fails for good with what to install or set."""
    effect = await at_proving(fake, quests, main_sha, {"pager.py": FIXED})
    policy = SandboxPolicy(bwrap="/nonexistent/questbot-bwrap")
    with sandbox.using(policy), pytest.raises(SandboxUnavailable) as caught:
        await agent_adapters(ctx)[EffectType.RUN_PROOF](effect)
    assert isinstance(caught.value, PermanentError)
    assert "apt-get install bubblewrap" in str(caught.value)
    assert "QUESTBOT_SANDBOX=unsafe-off" in str(caught.value)
