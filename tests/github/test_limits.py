"""Everything questbot writes stays within GitHub's limits: the status comment cuts its
evidence with a pointer to the rest, and the Forge cuts any body or check-run output that is
still too long, so GitHub never refuses a write for its size (BEHAVIOUR §7, §9)."""

from __future__ import annotations

import re

from bot.agent.evidence import EvidenceBundle
from bot.agent.machine import RunState
from bot.agent.result import TaskResult
from bot.agent.validation import Claim, ClaimVerdict, Evidence, Verdict
from bot.core import Quest, State
from bot.github.forge import Forges
from bot.words import status_comment as status
from bot.words.github_limits import BODY_LIMIT, OUTPUT_LIMIT, fit, fit_check_run
from tests.github.conftest import REPO, World


def huge_bundle() -> EvidenceBundle:
    claims = tuple(
        ClaimVerdict(claim=Claim(statement=f"claim {n} " + "x" * 150, confidence=0.9,
                                 evidence=(Evidence(path="pager.py", quote="y" * 150),)),
                     verdict=Verdict.SUPPORTED)
        for n in range(600))
    result = TaskResult(run_id="q:proof:1", state=RunState.FAILED, reason="proof failed")
    return EvidenceBundle(hypothesis="h", claims=claims, result=result)


def test_fit_cuts_at_a_line_end_closes_a_fence_and_says_how_much() -> None:
    text = "```\n" + "line\n" * 20_000
    cut = fit(text, 1000)
    assert len(cut) <= 1000 and cut.count("```") == 2
    found = re.search(r"GitHub allows 1,000 characters; ([\d,]+) more were left out\)\*\n$", cut)
    assert found is not None and int(found.group(1).replace(",", "")) > len(text) - 1000
    assert cut.split("\n```")[0].endswith("line")  # cut at a line end
    assert fit("short", 1000) == "short"


def test_a_check_run_body_is_fitted_field_by_field() -> None:
    body = {"status": "completed", "output": {"title": "t", "summary": "s" * 70_000,
                                              "text": "x" * 70_000}}
    fitted = fit_check_run(body)
    assert all(len(fitted["output"][k]) <= OUTPUT_LIMIT for k in ("summary", "text"))
    assert fitted["output"]["title"] == "t" and body["output"]["summary"] == "s" * 70_000


def test_the_status_comment_cuts_its_evidence_and_points_to_the_check_run() -> None:
    quest = Quest(id="q", repo=REPO, state=State.PARKED, fingerprint="f", kind="check_failure")
    view = status.StatusView(quest, evidence=huge_bundle(),
                             pull_url="https://github.com/octo/demo/pull/7")
    body = status.status_comment(view)
    assert len(body) <= BODY_LIMIT
    assert "more are in the `questbot` check run's details " \
           "(https://github.com/octo/demo/pull/7/checks)" in body
    assert body.rstrip().endswith("</details>")  # the lifecycle after the evidence survives
    assert body.count("<details>") == body.count("</details>")


async def test_the_forge_never_sends_github_a_body_it_would_refuse(world: World) -> None:
    forge = await Forges(world.clients).for_repo(REPO)
    issue = await world.fake.open_issue(REPO, "long")
    comment = await forge.comment(issue.number, "<!-- marker -->\n" + "word " * 20_000)
    stored = world.fake.repo(REPO).comments[comment.id].body
    assert len(stored) <= BODY_LIMIT and stored.startswith("<!-- marker -->")
    assert await forge.edit_comment(comment.id, "z\n" * 40_000) is not None
    assert len(world.fake.repo(REPO).comments[comment.id].body) <= BODY_LIMIT
    sha = world.main_sha
    run = await forge.create_check_run({"name": "questbot", "head_sha": sha, "output": {
        "title": "t", "summary": "s", "text": "x\n" * 40_000}})
    assert len(str(world.fake.repo(REPO).check_runs[run.id].output["text"])) <= OUTPUT_LIMIT
    assert world.fake.violations == []
