"""The evidence store: records per quest and revision in Redis, and the bundle built from them.

Unit tests on a real Redis with hand-made records, then the agent adapters writing to it on
the sample repository (fake GitHub, real git, real checks)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import redis.asyncio

from bot.adapters import AdapterContext
from bot.agent.evidence_store import (
    EvidenceStore,
    Piece,
    StageRecord,
    compose,
    field_name,
    proof_result,
)
from bot.agent.machine import RunState
from bot.agent.result import TaskResult
from bot.agent.runs import agent_adapters
from bot.agent.scope import scoped_plan
from bot.agent.scripted import ScriptedSpec
from bot.agent.validation import Claim, ClaimVerdict, Evidence, Verdict
from bot.core import EffectType, Quest, State
from bot.core.events.agent_work import ProofFailed
from bot.core.proof import CheckRecord, Reproduction, Risk
from bot.journal.keys import evidence_key
from bot.words.evidence import render_markdown
from questbot_testing.fakegithub import FakeGitHub
from tests.agent.conftest import REPO, Quests, only
from tests.agent.test_proof_adapter import FIXED, at_proving

SUCCESS = "✅ Verified"
SHA = "a" * 64
HYPOTHESIS = "page_count rounds down"
REPRO = Reproduction(name="repro", command=("python", "-m", "unittest", "repro"),
                     base_exit_code=1, head_exit_code=1)


def quest(revision: int = 1, **fields: Any) -> Quest:
    return Quest(id="q-1", repo=REPO, state=State.READY, fingerprint="fp", kind="check_failure",
                 revision=revision, **fields)


def waiting(stage: str) -> TaskResult:
    return TaskResult(run_id=f"q-1:{stage}", state=RunState.NEEDS_HUMAN, attempts=1,
                      reason=f"{stage} waits for a checkpoint")


def check(name: str, exit_code: int = 0) -> CheckRecord:
    return CheckRecord(name=name, command=(name,), exit_code=exit_code, output_sha256=SHA)


def research(revision: int = 1, hypothesis: str = HYPOTHESIS) -> StageRecord:
    claim = Claim(statement="it rounds down", confidence=0.9,
                  evidence=(Evidence(path="pager.py", quote="return total // per_page"),))
    return StageRecord(piece=Piece.RESEARCH, revision=revision, result=waiting("research"),
                       hypothesis=hypothesis,
                       claims=(ClaimVerdict(claim=claim, verdict=Verdict.SUPPORTED),))


def reproduce(revision: int = 1, plan: str = "round up") -> StageRecord:
    return StageRecord(piece=Piece.REPRODUCE, revision=revision, result=waiting("reproduce"),
                       reproduction=REPRO, commit="c1", plan=plan, risk=Risk.LOW)


def plan(revision: int = 1, text: str = "round up, and mind the empty list") -> StageRecord:
    return StageRecord(piece=Piece.PLAN, revision=revision, result=waiting("plan"), plan=text,
                       risk=Risk.LOW)


def patch(revision: int = 1) -> StageRecord:
    result = TaskResult(run_id="q-1:patch", state=RunState.COMPLETED, attempts=1,
                        change={"base": "b1", "head": "h1", "files": ("pager.py",)},
                        checks=(check("unit"), check("repro")))
    return StageRecord(piece=Piece.PATCH, revision=revision, result=result, head="h1")


def proof(revision: int = 1, *, completed: bool = True, exit_code: int = 0,
          base_exit: int = 1, reason: str | None = None) -> StageRecord:
    checks = (check("unit", exit_code), check("repro", 0))
    result = proof_result(quest_id="q-1", revision=revision, completed=completed, reason=reason,
                          attempts=1, risk=Risk.LOW, base="b1", head="h1", files=("pager.py",),
                          checks=checks)
    return StageRecord(piece=Piece.PROOF, revision=revision, result=result,
                       reproduction=REPRO.model_copy(update={"base_exit_code": base_exit,
                                                             "head_exit_code": 0}),
                       base="b1", head="h1", proof_digest="d" * 64)


@pytest.fixture
async def store(redis_async: redis.asyncio.Redis) -> EvidenceStore:
    return EvidenceStore(redis_async)


async def test_keys_live_under_the_quests_hash_tag(store: EvidenceStore,
                                                   redis_async: redis.asyncio.Redis) -> None:
    assert evidence_key("q-1") == "q:{q-1}:evidence"
    assert field_name(2, Piece.PROOF) == "2:proof"
    await store.record("q-1", research())
    assert sorted(await redis_async.hkeys("q:{q-1}:evidence")) == [b"1:research", b"seq"]
    with pytest.raises(ValueError, match="brace"):
        evidence_key("q-{1}")


async def test_records_round_trip_through_redis(store: EvidenceStore) -> None:
    made = [research(), reproduce(), plan(), patch(), proof()]
    numbered = [await store.record("q-1", r) for r in made]
    assert [r.seq for r in numbered] == [1, 2, 3, 4, 5]
    back = sorted(await store.records("q-1"), key=lambda r: r.seq)
    assert back == numbered
    assert back[3].result.verified and back[4].result.verified  # derived again on load


async def test_nothing_before_research_has_finished(store: EvidenceStore) -> None:
    assert await store.lookup(quest()) is None
    await store.record("q-1", proof())  # even a proof is nothing without its research
    assert await store.lookup(quest()) is None


async def test_research_alone_has_no_reproduction_plan_or_checks(store: EvidenceStore) -> None:
    await store.record("q-1", research())
    bundle = await store.lookup(quest())
    assert bundle is not None
    assert bundle.hypothesis == HYPOTHESIS and bundle.claims[0].verdict is Verdict.SUPPORTED
    assert bundle.reproduction is None and bundle.plan is None and bundle.checks == ()
    assert bundle.proof_digest is None and not bundle.verified
    text = render_markdown(bundle)
    assert "No reproduction was recorded." in text and SUCCESS not in text


async def test_the_whole_pipeline_ends_in_the_proofs_result(store: EvidenceStore) -> None:
    for record in (research(), reproduce(), plan(), patch(), proof()):
        await store.record("q-1", record)
    bundle = await store.lookup(quest())
    assert bundle is not None
    assert bundle.plan == "round up, and mind the empty list"  # the revised plan wins
    assert bundle.reproduction is not None and bundle.reproduction.confirmed  # the proof's
    assert bundle.result.run_id == "q-1:proof:1" and bundle.proof_digest == "d" * 64
    assert bundle.verified and SUCCESS in render_markdown(bundle)


async def test_before_the_proof_the_patch_result_shows_without_a_digest(
        store: EvidenceStore) -> None:
    for record in (research(), reproduce(), patch()):
        await store.record("q-1", record)
    bundle = await store.lookup(quest())
    assert bundle is not None
    assert bundle.result.run_id == "q-1:patch" and bundle.proof_digest is None
    assert bundle.plan == "round up"  # the reproduce stage's plan
    assert bundle.reproduction == REPRO


async def test_a_repair_patch_makes_the_failed_proof_before_it_stale(
        store: EvidenceStore) -> None:
    for record in (research(), reproduce(), patch(),
                   proof(completed=False, exit_code=1, reason="unit failed"), patch()):
        await store.record("q-1", record)
    bundle = await store.lookup(quest())
    assert bundle is not None
    assert bundle.result.run_id == "q-1:patch" and bundle.proof_digest is None
    assert bundle.reproduction == REPRO  # not the stale proof's


async def test_a_new_research_makes_everything_after_it_stale(store: EvidenceStore) -> None:
    for record in (research(), reproduce(), plan(), research(hypothesis="it is the cache")):
        await store.record("q-1", record)
    bundle = await store.lookup(quest())
    assert bundle is not None
    assert bundle.hypothesis == "it is the cache"
    assert bundle.plan is None and bundle.reproduction is None
    # a reproduce after a plan drops that plan: the reproduce stage wrote a new one
    await store.record("q-2", research())
    await store.record("q-2", plan())
    await store.record("q-2", reproduce(plan="a new plan"))
    again = await store.lookup(quest().model_copy(update={"id": "q-2"}))
    assert again is not None and again.plan == "a new plan"


async def test_records_are_scoped_to_the_quests_revision(store: EvidenceStore) -> None:
    for record in (research(), reproduce(), patch(), proof()):
        await store.record("q-1", record)
    # researched again (a regression reopened it): no hypothesis yet, so nothing to show
    assert await store.lookup(quest(2)) is None
    await store.record("q-1", research(2, hypothesis="the regression"))
    bundle = await store.lookup(quest(2))
    assert bundle is not None
    assert bundle.hypothesis == "the regression" and bundle.reproduction is None
    assert bundle.result.run_id == "q-1:research" and not bundle.verified
    # an older snapshot still reads its own revision
    old = await store.lookup(quest(1))
    assert old is not None and old.hypothesis == HYPOTHESIS and old.verified


async def test_a_person_push_carries_research_reproduction_and_plan_forward(
        store: EvidenceStore) -> None:
    for record in (research(), reproduce(), plan(), patch(), proof()):
        await store.record("q-1", record)
    held = quest(2, hypothesis=HYPOTHESIS, reproduction="repro",
                 reproduction_command=REPRO.command, plan="round up, and mind the empty list")
    bundle = await store.lookup(held)
    assert bundle is not None
    assert bundle.hypothesis == HYPOTHESIS and bundle.plan == held.plan
    # the patch and proof were about the old head: never carried
    assert bundle.result.run_id == "q-1:plan" and bundle.proof_digest is None
    assert not bundle.verified
    await store.record("q-1", proof(2, completed=False, exit_code=1, reason="unit failed"))
    failed = await store.lookup(held)
    assert failed is not None and failed.result.state is RunState.FAILED
    assert failed.claims and SUCCESS not in render_markdown(failed)
    # only while the quest still holds it: another hypothesis carries nothing
    assert await store.lookup(quest(2, hypothesis="something else")) is None


async def test_a_failed_proof_whose_checks_all_passed_is_not_verified(
        store: EvidenceStore) -> None:
    """The reproduction passed on the base: every check exited 0, the proof still failed."""
    await store.record("q-1", research())
    await store.record("q-1", proof(completed=False, base_exit=0,
                                    reason="reproduction 'repro' passes on the base"))
    bundle = await store.lookup(quest())
    assert bundle is not None and all(c.passed for c in bundle.checks)
    assert not bundle.verified and bundle.result.state is RunState.FAILED
    text = render_markdown(bundle)
    assert SUCCESS not in text and "❌ Failed, not verified" in text
    assert "passes on the base" in text


async def test_an_unreadable_field_is_skipped(store: EvidenceStore,
                                              redis_async: redis.asyncio.Redis) -> None:
    await store.record("q-1", research())
    await redis_async.hset(evidence_key("q-1"), "1:plan", "{not json")
    bundle = await store.lookup(quest())
    assert bundle is not None and bundle.plan is None


def test_a_record_cannot_claim_verification_it_did_not_earn() -> None:
    data = patch().model_dump(mode="json")
    data["result"]["checks"][0]["exit_code"] = 1  # verified: true no longer holds
    with pytest.raises(ValueError, match="verified is derived"):
        StageRecord.model_validate(data)


# -- the adapters write it ----------------------------------------------------------------


async def test_research_records_the_claims_with_their_verdicts(
        ctx: AdapterContext, quests: Quests, spec: ScriptedSpec, main_sha: str) -> None:
    run = agent_adapters(ctx, scripted_specs={REPO: spec})
    await quests.apply(await run[EffectType.START_AGENT](await quests.sense(main_sha)))
    store = EvidenceStore(ctx.journal.client)
    bundle = await store.lookup(quests.now())
    assert bundle is not None
    assert bundle.hypothesis == spec.hypothesis
    assert [v.claim for v in bundle.claims] == list(spec.claims)
    assert {v.verdict for v in bundle.claims} == {Verdict.SUPPORTED}
    assert bundle.result.state is RunState.NEEDS_HUMAN
    assert "checkpoint A" in (bundle.result.reason or "")

    start = only(await quests.decide("A"), EffectType.START_AGENT)
    await quests.apply(await run[EffectType.START_AGENT](start))
    bundle = await store.lookup(quests.now())
    assert bundle is not None and bundle.plan == scoped_plan(spec.plan, spec.plan_files)
    assert bundle.reproduction is not None
    assert bundle.reproduction.command == spec.reproduction_command
    assert bundle.reproduction.base_exit_code != 0 and not bundle.reproduction.confirmed

    start = only(await quests.decide("B"), EffectType.START_AGENT)
    proof_effect = only(await quests.apply(await run[EffectType.START_AGENT](start)),
                        EffectType.RUN_PROOF)
    bundle = await store.lookup(quests.now())
    assert bundle is not None and bundle.result.run_id == "q-1:patch" and bundle.verified
    await quests.apply(await run[EffectType.RUN_PROOF](proof_effect))
    bundle = await store.lookup(quests.now())
    quest_now = quests.now()
    assert bundle is not None and quest_now.proof is not None
    assert bundle.verified and bundle.proof_digest == quest_now.proof.proof_digest
    assert bundle.reproduction is not None and bundle.reproduction.confirmed
    assert [c.exit_code for c in bundle.checks] == [0, 0]
    assert bundle.result.change is not None
    assert bundle.result.change.files == ("pager.py",)
    assert bundle.result.change.head == quest_now.head


async def test_a_failed_research_is_recorded_with_every_reason(
        ctx: AdapterContext, quests: Quests, spec: ScriptedSpec, main_sha: str) -> None:
    lying = dataclasses.replace(spec, claims=(
        Claim(statement="made up", confidence=0.9,
              evidence=(Evidence(path="pager.py", quote="return total / per_page"),
                        Evidence(path="nowhere.py"))),))
    run = agent_adapters(ctx, scripted_specs={REPO: lying})
    events = await run[EffectType.START_AGENT](await quests.sense(main_sha))
    assert events is not None and events[0].type == "agent_halted"
    bundle = await EvidenceStore(ctx.journal.client).lookup(quests.now())
    assert bundle is not None and bundle.result.state is RunState.FAILED
    (verdict,) = bundle.claims
    assert verdict.verdict is Verdict.REJECTED and len(verdict.reasons) == 2
    text = render_markdown(bundle)
    assert "❌ Failed, not verified" in text and SUCCESS not in text


async def test_a_failing_proof_is_recorded_as_failed_with_its_exit_codes(
        fake: FakeGitHub, ctx: AdapterContext, quests: Quests, main_sha: str) -> None:
    wrong = FIXED.replace("-(-total // per_page)", "total // per_page + 1")
    effect = await at_proving(fake, quests, main_sha, {"pager.py": wrong})
    events = await agent_adapters(ctx)[EffectType.RUN_PROOF](effect)
    assert events is not None and isinstance(events[0], ProofFailed)
    (record,) = [r for r in await EvidenceStore(ctx.journal.client).records("q-1")
                 if r.piece is Piece.PROOF]
    assert record.revision == effect.revision and record.proof_digest == events[0].digest
    assert record.result.state is RunState.FAILED and not record.result.verified
    # the unit tests fail at the head; the reproduction (10 items, 3 a page) happens to pass
    assert [c.exit_code for c in record.result.checks] == [1, 0]
    assert record.result.reason == events[0].reason
    # what each command printed, where it ran: the tail people read instead of a digest
    assert [(o.at, o.exit_code) for o in record.outputs] == [("head", 1), ("base", 1),
                                                             ("head", 0)]
    assert "FAIL" in record.outputs[0].tail and "Ran " in record.outputs[0].tail
    research = StageRecord(piece=Piece.RESEARCH, revision=record.revision, seq=0,
                           result=record.result, hypothesis="h")
    bundle = compose([research, record])
    assert bundle is not None and bundle.outputs == record.outputs


async def test_a_proof_refused_before_running_is_recorded_without_checks(
        fake: FakeGitHub, ctx: AdapterContext, quests: Quests, main_sha: str) -> None:
    from questbot_testing.sample import REPRODUCTION_PATH

    effect = await at_proving(fake, quests, main_sha, {REPRODUCTION_PATH: "import unittest\n"})
    await agent_adapters(ctx)[EffectType.RUN_PROOF](effect)
    (record,) = await EvidenceStore(ctx.journal.client).records("q-1")
    assert record.piece is Piece.PROOF and record.result.checks == ()
    assert "changes the reproduction's files" in (record.result.reason or "")
    assert not record.result.verified
