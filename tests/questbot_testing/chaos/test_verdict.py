"""The chaos verdict tells the truth: each kind of wrong it is meant to find, it finds, and a
run that did everything once is judged clean."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import redis.asyncio

from bot.runner.inbound import seen_key
from questbot_testing.chaos.processes import Outage
from questbot_testing.chaos.story import Command, QuestRun
from questbot_testing.chaos.verdict import judge

REPO = "chaos1/sample"
QID = "q1"
BASE, REPRO, HEAD = "b" * 40, "c" * 40, "d" * 40
T0 = 1000.0


def clean() -> tuple[dict[str, Any], QuestRun]:
    run = QuestRun(REPO, QID, pr=1, states=[("hypothesised", 1.0), ("closed", 9.0)],
                   commands=[Command("rex", "/approve A", 11, True),
                             Command("maya", "/approve A", 12, False)],
                   approved_head=HEAD)
    bot = "questbot[bot]"
    state = {
        "repositories": {REPO: {
            "issues": [{"number": 1, "title": "questbot: x", "is_pull_request": True},
                       {"number": 2, "title": "questbot inbox", "is_pull_request": False}],
            "pulls": [{"number": 1, "head_ref": f"quest/{QID}", "head_sha": HEAD,
                       "merged": True}],
            "comments": [
                {"id": 10, "issue_number": 1, "user": bot, "reactions": [],
                 "body": f"<!-- questbot:status quest={QID} -->\nstatus"},
                {"id": 11, "issue_number": 1, "user": "rex", "body": "/approve A",
                 "reactions": [[bot, "eyes"]]},
                {"id": 12, "issue_number": 1, "user": "maya", "body": "/approve A",
                 "reactions": [[bot, "+1"]]},
                {"id": 13, "issue_number": 1, "user": bot, "reactions": [],
                 "body": "@rex needs write access\n\n<!-- questbot:reply=d1:0 -->"},
            ],
            "check_runs": [{"id": 5, "head_sha": HEAD, "name": "questbot",
                            "status": "completed", "conclusion": "success",
                            "external_id": QID, "app_slug": "questbot"}],
            "commits": {
                BASE: {"message": "Initial commit", "parents": []},
                REPRO: {"message": "Add a reproduction", "parents": [BASE]},
                HEAD: {"message": "Fix it", "parents": [REPRO]},
            },
        }},
        "requests": [{"at": 5.0, "method": "PUT", "path": f"/repos/{REPO}/pulls/1/merge",
                      "operation_id": "pulls/merge", "status": 200, "fault": None,
                      "hidden_status": None, "json": {"sha": HEAD}}],
        "webhooks": {"submitted": [], "acknowledged": ["g1"], "in_flight": 0, "attempts": [
            {"guid": "g1", "event": "issue_comment", "status": 202, "started": T0 + 1,
             "finished": T0 + 1.01, "target": "web-1"}]},
        "faults": [],
        "violations": [],
    }
    return state, run


@pytest.fixture
async def r(redis_async: redis.asyncio.Redis) -> redis.asyncio.Redis:
    await redis_async.set(seen_key("g1"), "1-0")
    return redis_async


async def test_a_run_that_did_everything_once_is_clean(r: redis.asyncio.Redis) -> None:
    state, run = clean()
    v = await judge(state, [run], {REPO: BASE}, r, [], T0)
    assert v.problems == []
    assert (v.quests_ok, v.duplicate_writes, v.lost_deliveries, v.own_5xx) == (1, 0, 0, 0)


async def test_each_kind_of_duplicate_write_is_counted(r: redis.asyncio.Redis) -> None:
    state, run = clean()
    repo = state["repositories"][REPO]
    repo["comments"].append(copy.deepcopy(repo["comments"][0]) | {"id": 20})  # status twice
    repo["comments"].append(copy.deepcopy(repo["comments"][3]) | {"id": 21})  # reply twice
    repo["comments"][2]["reactions"].append(["questbot[bot]", "eyes"])  # two reactions
    repo["issues"].append({"number": 3, "title": "questbot inbox", "is_pull_request": False})
    again = "e" * 40
    repo["commits"][again] = {"message": "Fix it", "parents": [HEAD]}  # the patch pushed twice
    repo["pulls"][0]["head_sha"] = again
    run.approved_head = again
    state["requests"][0]["json"] = {"sha": again}
    state["requests"].append(state["requests"][0] | {"status": 502, "fault": "timeout",
                                                     "hidden_status": 200})
    v = await judge(state, [run], {REPO: BASE}, r, [], T0)
    assert dict(v.duplicates) == {"status comments": 1, "replies": 1, "reactions": 1,
                                  "inbox issues": 1, "commits": 1, "merges": 1}
    assert v.duplicate_writes == 6


async def test_a_quest_that_did_not_close_or_merged_elsewhere_is_not_ok(
    r: redis.asyncio.Redis,
) -> None:
    state, run = clean()
    run.approved_head = REPRO
    v = await judge(state, [run], {REPO: BASE}, r, [], T0)
    assert v.quests_ok == 0
    assert any("approved at" in p for p in v.problems)
    state, run = clean()
    run.states.append(("patching", 10.0))
    run.error = "did not reach closed"
    v = await judge(state, [run], {REPO: BASE}, r, [], T0)
    assert v.quests_ok == 0
    assert any("stopped at patching" in p for p in v.problems)


async def test_an_unread_command_and_a_missing_or_extra_refusal_are_found(
    r: redis.asyncio.Redis,
) -> None:
    state, run = clean()
    repo = state["repositories"][REPO]
    repo["comments"][2]["reactions"] = []
    del repo["comments"][3]
    v = await judge(state, [run], {REPO: BASE}, r, [], T0)
    assert any("got no reaction" in p for p in v.problems)
    assert any("refusal(s) got no reply" in p for p in v.problems)
    state, run = clean()
    run.commands[0].refused = False
    v = await judge(state, [run], {REPO: BASE}, r, [], T0)
    assert any("unexpected refusal" in p and "needs write access" in p for p in v.problems)


async def test_an_acknowledged_delivery_redis_does_not_have_is_lost(
    r: redis.asyncio.Redis,
) -> None:
    state, run = clean()
    state["webhooks"]["acknowledged"].append("g2")
    v = await judge(state, [run], {REPO: BASE}, r, [], T0)
    assert v.lost_deliveries == 1
    assert any("g2" in p for p in v.problems)


async def test_a_503_is_questbots_own_only_when_redis_was_up(r: redis.asyncio.Redis) -> None:
    state, run = clean()
    attempt = {"guid": "g1", "event": "push", "status": 503, "target": "web-2"}
    state["webhooks"]["attempts"] += [attempt | {"started": T0 + 10, "finished": T0 + 10.5},
                                      attempt | {"started": T0 + 30, "finished": T0 + 30.1},
                                      attempt | {"started": T0 + 40, "status": 500,
                                                 "finished": T0 + 40.1}]
    outages = [Outage(T0 + 9, T0 + 11), Outage(T0 + 29.5, T0 + 29.9)]
    v = await judge(state, [run], {REPO: BASE}, r, outages, T0)
    assert v.own_5xx == 2
    assert any("0.10 s after redis came back" in p for p in v.problems)


async def test_a_check_run_left_in_progress_is_an_orphan(r: redis.asyncio.Redis) -> None:
    state, run = clean()
    state["repositories"][REPO]["check_runs"].append(
        {"id": 6, "head_sha": REPRO, "name": "questbot", "status": "in_progress",
         "conclusion": None, "external_id": QID, "app_slug": "questbot"})
    v = await judge(state, [run], {REPO: BASE}, r, [], T0)
    assert v.orphaned_check_runs == 1
