"""What the quest's pull request tells questbot, read from GitHub's example payloads: reviews
that decide, closing and reopening by hand, and the merge (``bot.pulls.signals``)."""

from __future__ import annotations

from typing import Any

from bot.adapters import AppIdentity
from bot.intake.routes import read_intents
from bot.pulls.signals import PullClosed, PullReopened, ReviewSubmitted
from questbot_testing.fakegithub.webhooks import build_payload

REPO = "octo/sample"
QUESTBOT = AppIdentity(id=4242, slug="questbot")
QUEST = {"head": {"ref": "quest/q0123456789", "sha": "b" * 40, "repo": {"full_name": REPO}}}


async def intents(event: str, example: str, **overrides: Any) -> list[object]:
    payload = build_payload(event, example, repository=REPO, overrides=overrides)
    return [i for i in await read_intents(event, payload, delivery_id="d-1", app=QUESTBOT)
            if type(i).__name__ != "Installed"]


def review(state: str, *, login: str = "maya", kind: str = "User") -> dict[str, Any]:
    return {"review": {"id": 77, "state": state, "commit_id": "c" * 40, "body": "split it",
                       "user": {"login": login, "type": kind}},
            "pull_request": QUEST}


async def test_an_approval_and_a_change_request_are_decisions_bound_to_their_commit() -> None:
    (approve,) = await intents("pull_request_review", "submitted", **review("approved"))
    assert approve == ReviewSubmitted(REPO, 2, "quest/q0123456789", REPO, 77, "maya",
                                      "approved", "c" * 40, "split it")
    (revise,) = await intents("pull_request_review", "submitted",
                              **review("changes_requested"))
    assert isinstance(revise, ReviewSubmitted) and revise.state == "changes_requested"
    assert await intents("pull_request_review", "submitted", **review("commented")) == []


async def test_reviews_of_other_pull_requests_or_by_bots_are_not_read() -> None:
    assert await intents("pull_request_review", "submitted") == []  # the example: a topic PR
    assert await intents("pull_request_review", "submitted",
                         **review("approved", login="helper[bot]", kind="Bot")) == []
    revert = {**review("approved"), "pull_request": {"head": {"ref": "quest/q1-revert-2"}}}
    assert await intents("pull_request_review", "submitted", **revert) == []


async def test_closed_by_hand_merged_and_reopened() -> None:
    (closed,) = await intents("pull_request", "closed", pull_request={**QUEST, "merged": False},
                              sender={"login": "maya", "type": "User"})
    assert closed == PullClosed(REPO, 2, "quest/q0123456789", REPO, "b" * 40, False,
                                "", "maya", False)
    (merged,) = await intents("pull_request", "closed",
                              pull_request={**QUEST, "merged": True, "merge_commit_sha": "m" * 40},
                              sender={"login": "questbot[bot]", "type": "Bot"})
    assert isinstance(merged, PullClosed) and merged.merged and merged.merge_sha == "m" * 40
    assert merged.by_us
    (reopened,) = await intents("pull_request", "reopened", pull_request=QUEST,
                                sender={"login": "maya", "type": "User"})
    assert reopened == PullReopened(REPO, 2, "quest/q0123456789", REPO, "maya", False)


async def test_a_user_named_like_questbot_is_not_questbot() -> None:
    (closed,) = await intents("pull_request", "closed", pull_request={**QUEST, "merged": False},
                              sender={"login": "questbot[bot]", "type": "User"})
    assert isinstance(closed, PullClosed) and not closed.by_us


async def test_a_fork_pull_request_names_the_fork_and_no_quest() -> None:
    """Which quest a pull request is, is not the branch's to say: the intent carries the head's
    repository (a fork's here) for ``bot.quests.quest_of`` to judge, and no quest id."""
    fork = {"head": {**QUEST["head"], "repo": {"full_name": "eve/sample"}}}
    (closed,) = await intents("pull_request", "closed", pull_request={**fork, "merged": False},
                              sender={"login": "eve", "type": "User"})
    assert isinstance(closed, PullClosed) and closed.head_repo == "eve/sample"
    assert not hasattr(closed, "quest_id")
    gone = {"head": {**QUEST["head"], "repo": None}}  # a deleted fork: GitHub says null
    (reopened,) = await intents("pull_request", "reopened", pull_request=gone,
                                sender={"login": "eve", "type": "User"})
    assert isinstance(reopened, PullReopened) and reopened.head_repo == ""
