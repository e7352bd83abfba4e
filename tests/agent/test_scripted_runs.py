"""The scripted agent through every stage on the sample repository, via the effect adapters."""

from __future__ import annotations

import dataclasses
from typing import Any

from bot.adapters import AdapterContext
from bot.agent import sandbox
from bot.agent.outcome_store import OUTCOMES_TTL_SECONDS
from bot.agent.runs import agent_adapters
from bot.agent.scripted import Edit, ScriptedSpec
from bot.agent.task import ReplyStatus, Stage
from bot.agent.validation import Claim, Evidence
from bot.core import Effect, EffectType, State
from bot.core.events.bookkeeping import UsageRecorded
from bot.core.proof import Risk
from bot.core.quest import ParkReason
from bot.journal.keys import outcomes_key
from questbot_testing.fakegithub import FakeGitHub
from questbot_testing.sample import REPRODUCTION_PATH, sample_files
from tests.agent.conftest import REPO, Quests, only


def adapters(ctx: AdapterContext, spec: ScriptedSpec) -> dict[EffectType, Any]:
    """The adapters, loosely typed: the tests read fields of the events they expect."""
    return agent_adapters(ctx, scripted_specs={REPO: spec})


async def test_research_reproduce_plan_patch_prove(fake: FakeGitHub, ctx: AdapterContext,
                                                   quests: Quests, spec: ScriptedSpec,
                                                   main_sha: str) -> None:
    run = adapters(ctx, spec)
    start = await quests.sense(main_sha)
    events = await run[EffectType.START_AGENT](start)
    assert [e.type for e in events or ()] == ["hypothesis_written", "usage_recorded"]
    await quests.apply(events)
    assert quests.now().state is State.HYPOTHESISED
    assert quests.now().hypothesis == spec.hypothesis

    start = only(await quests.decide("A"), EffectType.START_AGENT)
    assert start.payload["stage"] == "reproduce"
    events = await run[EffectType.START_AGENT](start)
    assert [e.type for e in events or ()] == ["reproduced", "plan_written", "usage_recorded"]
    reproduced = events[0]
    stored = fake.repo(REPO)
    assert stored.branch_sha("quest/q-1") == reproduced.commit
    assert stored.git.read(reproduced.commit, REPRODUCTION_PATH) is not None
    await quests.apply(events)
    assert quests.now().state is State.PLANNED
    assert quests.now().reproduction_command == spec.reproduction_command

    start = only(await quests.decide("B"), EffectType.START_AGENT)
    events = await run[EffectType.START_AGENT](start)
    assert [e.type for e in events or ()] == ["patch_pushed", "usage_recorded"]
    head = events[0].head
    assert stored.branch_sha("quest/q-1") == head
    assert stored.git.commits[head].parents == (reproduced.commit,)
    assert b"-(-total // per_page)" in (stored.git.read(head, "pager.py") or b"")
    proof = only(await quests.apply(events), EffectType.RUN_PROOF)

    outcome = await run[EffectType.RUN_PROOF](proof)
    assert [e.type for e in outcome or ()] == ["proof_completed"]
    await quests.apply(outcome)
    assert quests.now().state is State.READY
    assert quests.now().proof_bound
    assert sum(e.tokens for e in (await ctx.journal.events("q-1"))
               if isinstance(e, UsageRecorded)) == 3 * spec.tokens_per_stage


async def test_revise_at_b_writes_a_new_plan(ctx: AdapterContext, quests: Quests,
                                             spec: ScriptedSpec, main_sha: str) -> None:
    run = adapters(ctx, spec)
    await quests.apply(await run[EffectType.START_AGENT](await quests.sense(main_sha)))
    start = only(await quests.decide("A"), EffectType.START_AGENT)
    await quests.apply(await run[EffectType.START_AGENT](start))
    start = only(await quests.decide("B", "revise", reason="mention the empty list"),
                 EffectType.START_AGENT)
    assert start.payload == {"stage": "plan", "revise": "mention the empty list"}
    events = await run[EffectType.START_AGENT](start)
    assert [e.type for e in events or ()] == ["plan_written", "usage_recorded"]
    assert "mention the empty list" in events[0].summary
    await quests.apply(events)
    assert quests.now().state is State.PLANNED


async def test_a_fabricated_quote_fails_research_with_every_reason(
        ctx: AdapterContext, quests: Quests, spec: ScriptedSpec, main_sha: str) -> None:
    lying = dataclasses.replace(spec, claims=(
        Claim(statement="made up", confidence=0.9,
              evidence=(Evidence(path="pager.py", quote="return total / per_page"),
                        Evidence(path="nowhere.py"))),))
    run = adapters(ctx, lying)
    start = await quests.sense(main_sha)
    events = await run[EffectType.START_AGENT](start)
    assert [e.type for e in events or ()] == ["agent_halted", "usage_recorded"]
    halted = events[0]
    assert (halted.stage, halted.outcome) == ("research", "failed")
    assert "does not contain the quoted text" in halted.reason
    assert "nowhere.py' does not exist" in halted.reason
    # the quest parks with the reason, for a person; the usage is recorded with it
    effects = await quests.apply(events)
    assert [e.type for e in effects] == [EffectType.NOTIFY_INBOX]
    assert quests.now().state is State.PARKED
    assert quests.now().park_reason is ParkReason.AGENT_FAILED
    assert "does not contain the quoted text" in (quests.now().park_note or "")
    assert quests.now().usage_tokens == spec.tokens_per_stage


async def test_a_reproduction_that_passes_on_the_base_parks_the_quest(
        fake: FakeGitHub, ctx: AdapterContext, quests: Quests, spec: ScriptedSpec,
        main_sha: str) -> None:
    passing = dataclasses.replace(spec, reproduction_files={
        REPRODUCTION_PATH: "import unittest\n\nclass T(unittest.TestCase):\n"
                           "    def test_ok(self) -> None:\n        pass\n"})
    run = adapters(ctx, passing)
    await quests.apply(await run[EffectType.START_AGENT](await quests.sense(main_sha)))
    start = only(await quests.decide("A"), EffectType.START_AGENT)
    events = await run[EffectType.START_AGENT](start)
    assert [e.type for e in events or ()] == ["reproduction_failed", "usage_recorded"]
    assert "passes on the base" in events[0].reason
    await quests.apply(events)
    assert quests.now().state is State.PARKED
    assert fake.repo(REPO).branch_sha("quest/q-1") is None  # nothing was pushed


async def test_an_agent_failure_in_reproduce_is_reported(
        ctx: AdapterContext, quests: Quests, spec: ScriptedSpec, main_sha: str) -> None:
    failing = dataclasses.replace(spec, fail={Stage.REPRODUCE: (ReplyStatus.NEEDS_HUMAN,
                                                                "the test needs a database")})
    run = adapters(ctx, failing)
    await quests.apply(await run[EffectType.START_AGENT](await quests.sense(main_sha)))
    events = await run[EffectType.START_AGENT](
        only(await quests.decide("A"), EffectType.START_AGENT))
    assert events is not None
    assert "needs a database" in events[0].reason


async def patch_that_does_not_fix(ctx: AdapterContext, quests: Quests, spec: ScriptedSpec,
                                  main_sha: str) -> tuple[dict[EffectType, Any], Effect]:
    """A quest taken through A and B by a script whose patch leaves the bug in; the adapters
    and the patch stage's ``start_agent``."""
    wrong = dataclasses.replace(spec, patch_edits=(
        Edit(path="pager.py", old="return total // per_page", new="return total // per_page + 0"),))
    run = adapters(ctx, wrong)
    await quests.apply(await run[EffectType.START_AGENT](await quests.sense(main_sha)))
    await quests.apply(await run[EffectType.START_AGENT](
        only(await quests.decide("A"), EffectType.START_AGENT)))
    return run, only(await quests.decide("B"), EffectType.START_AGENT)


async def test_a_patch_that_does_not_fix_is_never_pushed(
        fake: FakeGitHub, ctx: AdapterContext, quests: Quests, spec: ScriptedSpec,
        main_sha: str) -> None:
    run, start = await patch_that_does_not_fix(ctx, quests, spec, main_sha)
    before = fake.repo(REPO).branch_sha("quest/q-1")
    events = await run[EffectType.START_AGENT](start)
    assert [e.type for e in events or ()] == ["agent_halted", "usage_recorded"]
    assert (events[0].stage, events[0].outcome) == ("patch", "failed")
    assert "attempts exhausted (3 of 3)" in events[0].reason  # agent.max_attempts
    assert fake.repo(REPO).branch_sha("quest/q-1") == before
    await quests.apply(events)
    assert quests.now().state is State.PARKED
    assert quests.now().resume_state is State.PATCHING  # /resume runs the patch again


async def test_a_patch_that_edits_the_reproduction_is_rejected_by_review(
        fake: FakeGitHub, ctx: AdapterContext, quests: Quests, spec: ScriptedSpec,
        main_sha: str) -> None:
    cheat = dataclasses.replace(spec, patch_edits=(), patch_files={
        "pager.py": sample_files()["pager.py"].replace("total // per_page",
                                                       "-(-total // per_page)"),
        REPRODUCTION_PATH: "import unittest\n"})
    run = adapters(ctx, cheat)
    await quests.apply(await run[EffectType.START_AGENT](await quests.sense(main_sha)))
    await quests.apply(await run[EffectType.START_AGENT](
        only(await quests.decide("A"), EffectType.START_AGENT)))
    events = await run[EffectType.START_AGENT](only(await quests.decide("B"),
                                                    EffectType.START_AGENT))
    assert events is not None and events[0].type == "agent_halted"
    said = "changes the reproduction's file `tests/test_questbot_reproduction.py`"
    assert said in events[0].reason


async def test_a_repo_without_a_script_parks_saying_what_to_set(
        ctx: AdapterContext, quests: Quests, main_sha: str) -> None:
    run = agent_adapters(ctx)
    events = await run[EffectType.START_AGENT](await quests.sense(main_sha))
    assert [e.type for e in events or ()] == ["agent_halted"]
    assert events[0].outcome == "unconfigured"
    assert "no script" in events[0].reason and "agent: {kind: model}" in events[0].reason


def test_sample_spec_runs_the_reproduction_with_the_given_python() -> None:
    from questbot_testing.sample import sample_spec

    assert sample_spec("/x/python").reproduction_command[0] == "/x/python"
    assert sample_spec().reproduction_command[0] == sandbox.python()


async def test_a_redelivered_run_reports_its_events_again_and_pushes_nothing(
        fake: FakeGitHub, ctx: AdapterContext, quests: Quests, spec: ScriptedSpec,
        main_sha: str) -> None:
    # The worker dies (or the journal refuses) after a run and before its events are applied:
    # the outbox delivers the same effect again.
    run = adapters(ctx, spec)
    await quests.apply(await run[EffectType.START_AGENT](await quests.sense(main_sha)))
    stored = fake.repo(REPO)
    for decision in ("A", "B"):
        start = only(await quests.decide(decision), EffectType.START_AGENT)
        first = await run[EffectType.START_AGENT](start)
        head, commits = stored.branch_sha("quest/q-1"), len(stored.git.commits)
        calls = len(fake.calls())
        again = await run[EffectType.START_AGENT](start)
        assert again == first  # the same events, ids included: the journal takes them once
        assert stored.branch_sha("quest/q-1") == head and len(stored.git.commits) == commits
        assert len(fake.calls()) == calls  # not a single GitHub call the second time
        await quests.apply(again)
    assert quests.now().state is State.PROVING
    pushes = [e for e in await ctx.journal.events("q-1") if e.type == "patch_pushed"]
    assert len(pushes) == 1 and pushes[0].head == stored.branch_sha("quest/q-1")


async def test_a_remembered_run_reports_nothing_once_its_quest_has_moved_on(
        ctx: AdapterContext, quests: Quests, spec: ScriptedSpec, main_sha: str) -> None:
    run = adapters(ctx, spec)
    start = await quests.sense(main_sha)
    first = await run[EffectType.START_AGENT](start)
    assert first
    await quests.apply(first)  # researching → hypothesised: the stage is over
    assert await ctx.journal.client.hget(outcomes_key("q-1"), start.key) is not None
    assert 0 < await ctx.journal.client.ttl(outcomes_key("q-1")) <= OUTCOMES_TTL_SECONDS
    assert await run[EffectType.START_AGENT](start) is None


async def test_a_run_that_failed_is_remembered_like_any_other(
        fake: FakeGitHub, ctx: AdapterContext, quests: Quests, spec: ScriptedSpec,
        main_sha: str) -> None:
    """A failed run's outcome is an event now (``agent_halted``): redelivered, it is reported
    again rather than run again, so its tokens are not spent twice."""
    run, start = await patch_that_does_not_fix(ctx, quests, spec, main_sha)
    first = await run[EffectType.START_AGENT](start)
    assert await ctx.journal.client.hget(outcomes_key("q-1"), start.key) is not None
    again = await run[EffectType.START_AGENT](start)
    assert [e.id for e in again or ()] == [e.id for e in first or ()]


async def test_a_high_impact_patch_stops_for_a_person_and_reaches_the_inbox(
        fake: FakeGitHub, ctx: AdapterContext, quests: Quests, spec: ScriptedSpec,
        main_sha: str) -> None:
    risky = dataclasses.replace(spec, risk=Risk.HIGH)
    run = adapters(ctx, risky)
    await quests.apply(await run[EffectType.START_AGENT](await quests.sense(main_sha)))
    await quests.apply(await run[EffectType.START_AGENT](
        only(await quests.decide("A"), EffectType.START_AGENT)))
    before = fake.repo(REPO).branch_sha("quest/q-1")
    events = await run[EffectType.START_AGENT](only(await quests.decide("B"),
                                                    EffectType.START_AGENT))
    # stopped before the agent was asked: no patch written, so none paid for (no usage)
    assert [e.type for e in events or ()] == ["agent_halted"]
    assert (events[0].stage, events[0].outcome) == ("patch", "needs_human")
    assert "high-impact change" in events[0].reason
    assert fake.repo(REPO).branch_sha("quest/q-1") == before  # nothing was written
    effects = await quests.apply(events)
    assert [e.type for e in effects] == [EffectType.NOTIFY_INBOX]
    assert "the agent needs a person" in effects[0].payload["reason"]
    assert quests.now().park_reason is ParkReason.NEEDS_HUMAN
