"""What the agent and the proof established, as maintainers see it on the fake GitHub: the
status comment and the ``questbot`` check run carry the evidence bundle, and a proof that
failed never reads as verified."""

from __future__ import annotations

import re

from bot.agent.evidence import EvidenceBundle
from bot.agent.machine import RunState
from bot.agent.result import TaskResult
from bot.agent.validation import Claim, ClaimVerdict, Evidence, Verdict
from bot.core import Quest, State
from bot.words import check_run as checks
from bot.words.evidence import render_markdown
from bot.words.markdown import plain
from questbot_testing.sample import sample_files, sample_spec
from questbot_testing.scenario import MAINTAINER, REPO, SETTINGS, Story
from questbot_testing.stack import Stack
from tests.e2e.test_github_flows import at_checkpoint_a

SUCCESS = "✅ Verified"
CHECK = "python3 -m unittest discover -q"


def check_text(stack: Stack, story: Story, head: str | None = None) -> str:
    """The ``output.text`` of the quest's newest ``questbot`` check run (on ``head``)."""
    runs = [r for r in stack.fake.repo(REPO).check_runs.values()
            if r.name == "questbot" and r.external_id == story.quest_id
            and (head is None or r.head_sha == head)]
    assert runs, "no questbot check run"
    return str(runs[-1].output.get("text") or "")


def status_bodies(stack: Stack) -> list[str]:
    """Every status comment body questbot ever wrote (creates and edits), in order."""
    return [str(e.json["body"]) for e in stack.fake.as_rest()
            if e.operation_id in ("issues/create-comment", "issues/update-comment")
            and isinstance(e.json, dict) and "questbot:status" in str(e.json.get("body"))]


async def test_after_research_the_claims_show_with_their_verdicts_and_real_lines(
        stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    status = story.status_comment()
    spec = sample_spec()
    files = sample_files()
    assert "<summary>Evidence</summary>" in status
    assert "#### Hypothesis" in status and plain(spec.hypothesis, 4000) in status  # a quote
    for number, claim in enumerate(spec.claims, start=1):
        assert f"{number}. **supported**" in status
        assert plain(claim.statement) in status  # prose a person reads, not a code chip
        for evidence in claim.evidence:
            assert evidence.quote is not None
            # the quote is a real line of the file in the repository, and the comment shows it
            assert evidence.quote in files[evidence.path]
            assert f"`{evidence.path}`: `{evidence.quote}`" in status
    # a hypothesis waiting at checkpoint A is not a verified result, and says so
    assert "✋ Waiting for a person's decision — not verified yet" in status
    assert "This is a checkpoint, as planned" in status  # a normal step, not a failure
    assert "checkpoint A" in status and SUCCESS not in status
    assert "No reproduction was recorded." in status and "No checks were executed." in status
    text = check_text(stack, story)
    assert "#### Claims" in text and "return total // per_page" in text
    assert SUCCESS not in text


async def test_after_proof_the_checks_show_with_their_exit_codes(stack: Stack) -> None:
    story = await at_checkpoint_a(stack)
    quest = await story.approve("A", State.PLANNED)
    status = story.status_comment()
    # at B: the reproduction failed on the base (its commit is the branch head), not confirmed
    assert "the reproduction and plan wait for checkpoint B" in status
    assert "`test_questbot_reproduction`" in status and "not confirmed" in status
    assert plain(sample_spec().plan) in status and SUCCESS not in status  # quoted

    quest = await story.approve("B", State.READY)
    assert quest.proof is not None and quest.head is not None
    status = story.status_comment()
    assert SUCCESS in status
    assert f"`{CHECK}` passed (exit 0)" in status
    assert "`test_questbot_reproduction` passed (exit 0)" in status
    assert re.search(r"base exit [1-9]\d*, head exit 0: confirmed", status)
    assert quest.proof.proof_digest[:12] not in status  # a digest is no sentence
    assert "pager.py" in status  # the change the proof saw
    text = check_text(stack, story, quest.head)
    assert SUCCESS in text and f"`{CHECK}` passed (exit 0)" in text


async def test_a_failing_proof_never_shows_verified(stack: Stack) -> None:
    """A person pushes the bug back at checkpoint C: the proof of their head fails, and with
    one attempt allowed the quest parks showing the failed checks, never a success."""
    story = Story(stack)
    files: dict[str, str | bytes] = {
        **sample_files(), ".github/questbot.yml": SETTINGS + "max_attempts: 1\n"}
    main = str(stack.fake.create_repository(REPO, files).branch_sha("main"))
    stack.fake.set_permission(REPO, MAINTAINER, "write")
    await stack.fake.fail_check(REPO, main, name="tests")
    await stack.settle()
    (quest,) = await stack.quests(REPO)
    story.quest_id = quest.id
    await story.step("researched", State.HYPOTHESISED)
    await story.approve("A", State.PLANNED)
    ready = await story.approve("B", State.READY)
    assert SUCCESS in story.status_comment()  # the agent's proven patch, at revision 1
    written = len(status_bodies(stack))

    await stack.fake.push(REPO, f"quest/{story.quest_id}",
                          {"pager.py": sample_files()["pager.py"]}, user="carol")
    parked = await story.step("carol pushed the bug back", State.PARKED)
    assert parked.revision == ready.revision + 1 and parked.head != ready.head
    status = story.status_comment()
    assert "❌ Failed, not verified" in status
    assert f"`{CHECK}` FAILED (exit 1)" in status
    assert "`test_questbot_reproduction` FAILED (exit 1)" in status
    assert "not confirmed" in status
    assert plain(f"check '{CHECK}' failed (exit 1)") in status  # the gap, in words
    assert "- change: none\n" in status  # the head put back exactly the base's pager.py
    # the hypothesis and claims of revision 1 still stand: the person only moved the head
    assert "#### Claims" in status and "1. **supported**" in status
    assert SUCCESS not in status
    # nothing written after the person's push ever claimed success
    later = status_bodies(stack)[written:]
    assert later and all(SUCCESS not in body for body in later)
    text = check_text(stack, story, parked.head)
    assert "❌ Failed, not verified" in text and SUCCESS not in text


def test_the_check_run_text_is_cut_to_githubs_limit_after_the_verdict() -> None:
    """Pure: a bundle far larger than ``output.text`` allows keeps its heading and is cut."""
    claims = tuple(
        ClaimVerdict(claim=Claim(statement=f"claim {n} " + "x" * 150, confidence=0.9,
                                 evidence=(Evidence(path="pager.py", quote="y" * 150),)),
                     verdict=Verdict.SUPPORTED)
        for n in range(400))
    result = TaskResult(run_id="q:proof:1", state=RunState.FAILED, reason="proof failed")
    bundle = EvidenceBundle(hypothesis="h", claims=claims, result=result)
    quest = Quest(id="q", repo=REPO, state=State.PARKED, fingerprint="f", kind="check_failure")
    text = checks.check_run(quest, bundle).body()["output"]["text"]
    assert len(text) <= checks.CHECK_TEXT_LIMIT < len(render_markdown(bundle))
    assert "❌ Failed, not verified" in text and SUCCESS not in text
    assert text.endswith("more were left out)*\n")


async def test_a_quest_killed_at_checkpoint_a_shows_what_its_run_found_and_nothing_waits(
        stack: Stack) -> None:
    """The research run stopped at checkpoint A for a person's decision; once the quest is
    killed there, neither the status comment nor the check run says anything waits."""
    story = await at_checkpoint_a(stack)
    assert "waits for checkpoint A" in story.status_comment()  # while it did
    await stack.fake.comment(REPO, story.pr_number(), "/kill not worth it", user=MAINTAINER)
    quest = await story.step("killed", State.ABANDONED)
    for text in (story.status_comment(), check_text(stack, story, quest.head)):
        assert "The quest has ended; this is what its last run found." in text
        assert "⏹️ Stopped for a decision, not verified" in text
        assert "#### Claims" in text and plain(sample_spec().hypothesis, 4000) in text
        assert not re.search(r"\bwait(s|ing)?\b|needs a person|needs human", text, re.I)
