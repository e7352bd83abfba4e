"""The quest branch only moves forward: each stage's commit goes on top of what the branch
holds — the commit that opened the pull request, and every commit a person pushed there — and
a push over a head that moved since is refused rather than forced. A person's commit is pushed
during each stage over the fake GitHub's git smart HTTP, and is kept in the end."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from bot.adapters import GitHost, GitHosts
from bot.agent.runs import agent_adapters
from bot.agent.scripted import ScriptedSpec
from bot.agent.workspace import commit_changes, materialise
from bot.core import EffectType, State
from bot.journal import PermanentError
from questbot_testing.fakegithub import FakeGitHub
from tests.agent.conftest import REPO, Quests, only

BRANCH = "quest/q-1"


async def person_pushes(host: GitHost, where: Path, path: str, text: str) -> str:
    """A person's commit of one file on top of the quest branch, pushed over git's smart
    HTTP (the branch is made from main when it is not there yet)."""
    head = await host.branch_head(BRANCH) or await host.branch_head("main")
    assert head is not None
    checkout = await materialise(host, head, where)
    commit = await commit_changes(checkout, {path: text.encode()}, f"carol: {path}")
    await host.push(checkout.path, commit, BRANCH)
    return commit


class PersonDuringTheRun:
    """The real host; at the run's first look at the host (``when="any"``), or at its first
    fetch after it read the branch's head (``when="after_head"``), a person pushes a commit to
    the quest branch, then the run goes on."""

    def __init__(self, host: GitHost, where: Path, path: str, when: str = "any") -> None:
        self.host, self.where, self.path, self.when = host, where, path, when
        self.pushed: str | None = None
        self.heads_read = 0

    @property
    def repo(self) -> str:
        return self.host.repo

    async def _maybe(self, call: str) -> None:
        after_head = self.when == "after_head" and call == "fetch" and self.heads_read > 0
        if self.pushed is None and (self.when == "any" or after_head):
            self.pushed = await person_pushes(self.host, self.where, self.path,
                                              f"{self.path} by a person\n")

    async def fetch(self, into: Path, commits: Sequence[str]) -> None:
        await self._maybe("fetch")
        await self.host.fetch(into, commits)

    async def branch_head(self, branch: str) -> str | None:
        await self._maybe("branch_head")
        self.heads_read += 1
        return await self.host.branch_head(branch)

    async def push(self, into: Path, commit: str, branch: str, *,
                   replacing: str | None = None) -> None:
        await self.host.push(into, commit, branch, replacing=replacing)


def during(real: GitHosts, wrapper: list[PersonDuringTheRun], where: Path, path: str,
           when: str = "any") -> GitHosts:
    async def hosts(repo: str) -> GitHost:
        if not wrapper:
            wrapper.append(PersonDuringTheRun(await real(repo), where, path, when))
        return wrapper[0]

    return hosts


def ancestors(fake: FakeGitHub, head: str) -> set[str]:
    commits, seen, todo = fake.repo(REPO).git.commits, set(), [head]
    while todo:
        sha = todo.pop()
        if sha not in seen and sha in commits:
            seen.add(sha)
            todo.extend(commits[sha].parents)
    return seen


async def test_a_persons_commit_during_each_stage_is_kept(
        fake: FakeGitHub, ctx: Any, quests: Quests, spec: ScriptedSpec, main_sha: str,
        tmp_path: Path) -> None:
    run: dict[EffectType, Any] = agent_adapters(ctx, scripted_specs={REPO: spec})
    real = ctx.hosts
    stored = fake.repo(REPO)
    opened = await person_pushes(await real(REPO), tmp_path / "open", "OPENED.md", "opened\n")
    kept = [opened]  # questbot's first commit stands in for the one that opens the PR
    start = await quests.sense(main_sha)
    for number, (stage, decide) in enumerate((("research", "A"), ("reproduce", "B"),
                                              ("patch", None))):
        seen: list[PersonDuringTheRun] = []
        ctx.hosts = during(real, seen, tmp_path / f"person-{number}", f"PERSON-{stage}.md")
        try:
            events = await run[EffectType.START_AGENT](start)
        finally:
            ctx.hosts = real
        assert seen and seen[0].pushed, f"no person pushed during {stage}"
        kept.append(seen[0].pushed)
        await quests.apply(events)
        if decide is not None:
            start = only(await quests.decide(decide), EffectType.START_AGENT)
    assert quests.now().state is State.PROVING
    head = str(stored.branch_sha(BRANCH))
    assert set(kept) <= ancestors(fake, head), "a commit a person pushed was dropped"
    for stage in ("research", "reproduce", "patch"):
        assert stored.git.read(head, f"PERSON-{stage}.md") is not None
    assert b"-(-total // per_page)" in (stored.git.read(head, "pager.py") or b"")


async def test_a_push_over_a_head_that_moved_since_is_refused_not_forced(
        fake: FakeGitHub, ctx: Any, quests: Quests, spec: ScriptedSpec, main_sha: str,
        tmp_path: Path) -> None:
    """The person pushes after the patch run read the branch's head: questbot's push is
    refused (the run stops; the quest parks with a reason, or proves the person's head when
    their push's webhook arrives) and the person's commit stays the branch's head."""
    run: dict[EffectType, Any] = agent_adapters(ctx, scripted_specs={REPO: spec})
    real = ctx.hosts
    await quests.apply(await run[EffectType.START_AGENT](await quests.sense(main_sha)))
    await quests.apply(await run[EffectType.START_AGENT](
        only(await quests.decide("A"), EffectType.START_AGENT)))
    start = only(await quests.decide("B"), EffectType.START_AGENT)
    seen: list[PersonDuringTheRun] = []
    ctx.hosts = during(real, seen, tmp_path / "person", "LATE.md", when="after_head")
    try:
        with pytest.raises(PermanentError, match="push"):
            await run[EffectType.START_AGENT](start)
    finally:
        ctx.hosts = real
    assert seen[0].pushed is not None
    assert fake.repo(REPO).branch_sha(BRANCH) == seen[0].pushed
