"""A ``start_agent`` whose worker died after its push and before its outcome was remembered is
delivered again (its doorbell taken over by another worker): the stage runs again and reports
the commit the first run pushed, without pushing a second one."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bot.adapters import GitHost, GitHosts
from bot.agent.outcome_store import push_field
from bot.agent.runs import agent_adapters
from bot.agent.scripted import ScriptedSpec
from bot.agent.workspace import EFFECT_TRAILER, blob_sha
from bot.core import EffectType, State
from bot.journal.keys import outcomes_key
from questbot_testing.fakegithub import FakeGitHub
from tests.agent.conftest import REPO, Quests, only


class Crash(Exception):
    """The worker dies here: after the branch moved, before the run's outcome was memoed."""


class DiesAfterPush:
    """The real host; its first push goes through and then the worker dies."""

    def __init__(self, host: GitHost) -> None:
        self.host = host
        self.pushed: list[str] = []

    @property
    def repo(self) -> str:
        return self.host.repo

    async def fetch(self, into: Path, commits: Sequence[str]) -> None:
        await self.host.fetch(into, commits)

    async def branch_head(self, branch: str) -> str | None:
        return await self.host.branch_head(branch)

    async def push(self, into: Path, commit: str, branch: str, *,
                   replacing: str | None = None) -> None:
        await self.host.push(into, commit, branch, replacing=replacing)
        self.pushed.append(commit)
        raise Crash(commit)


def dying(real: GitHosts) -> GitHosts:
    async def hosts(repo: str) -> GitHost:
        return DiesAfterPush(await real(repo))

    return hosts


def test_blob_shas_are_gits() -> None:
    assert blob_sha(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
    assert blob_sha(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"


async def test_a_run_that_died_after_its_push_pushes_once_when_delivered_again(
        fake: FakeGitHub, ctx: Any, quests: Quests, spec: ScriptedSpec,
        main_sha: str) -> None:
    run: dict[EffectType, Any] = agent_adapters(ctx, scripted_specs={REPO: spec})
    await quests.apply(await run[EffectType.START_AGENT](await quests.sense(main_sha)))
    stored = fake.repo(REPO)
    real = ctx.hosts
    heads: list[str] = []
    for decision, outcome in (("A", "commit"), ("B", "head")):
        start = only(await quests.decide(decision), EffectType.START_AGENT)
        pushes = len(fake.git_requests)
        ctx.hosts = dying(real)
        try:
            await run[EffectType.START_AGENT](start)
            raise AssertionError("the worker was to die after its push")
        except Crash as died:
            pushed = str(died)
        finally:
            ctx.hosts = real
        assert stored.branch_sha("quest/q-1") == pushed
        assert f"{EFFECT_TRAILER}: {start.key}" in stored.git.commits[pushed].message
        assert await ctx.journal.client.hget(outcomes_key("q-1"), push_field(start))
        events = await run[EffectType.START_AGENT](start)  # delivered again
        assert stored.branch_sha("quest/q-1") == pushed, "it pushed again"
        again = [e.operation_id for e in fake.git_requests[pushes:]]
        assert again.count("git/receive-pack") == 1, f"it pushed twice: {again}"
        assert getattr(events[0], outcome) == pushed
        assert not await ctx.journal.client.hget(outcomes_key("q-1"), push_field(start))
        await quests.apply(events)
        heads.append(pushed)
    assert quests.now().state is State.PROVING
    reproduction, patch = heads
    assert stored.git.commits[patch].parents == (reproduction,)
    assert b"-(-total // per_page)" in (stored.git.read(patch, "pager.py") or b"")


async def test_a_push_that_never_happened_is_made_by_the_next_run(
        fake: FakeGitHub, ctx: Any, quests: Quests, spec: ScriptedSpec,
        main_sha: str) -> None:
    """Noted, then the worker died before the host took it: the next run pushes."""
    run: dict[EffectType, Any] = agent_adapters(ctx, scripted_specs={REPO: spec})
    await quests.apply(await run[EffectType.START_AGENT](await quests.sense(main_sha)))
    start = only(await quests.decide("A"), EffectType.START_AGENT)
    stored = fake.repo(REPO)
    await ctx.journal.client.hset(outcomes_key("q-1"), push_field(start), json.dumps(
        {"branch": "quest/q-1", "parent": main_sha, "files": {"nothing.txt": blob_sha(b"x")}}))
    events = await run[EffectType.START_AGENT](start)
    assert events[0].commit == stored.branch_sha("quest/q-1")
    assert stored.git.commits[events[0].commit].parents == (main_sha,)
