"""What a chaos run proved, read from what GitHub (the fake) recorded and what Redis holds.

Each check names the quest, the object and the evidence, so a failing run says what to fix:

* every quest closed, merged once at the head that was approved at C;
* every GitHub object questbot creates, created once: one pull request per quest, one status
  comment, one "questbot inbox" issue per repository, one reaction per command, one reply per
  refusal (and none to commands that should have been obeyed), no commit pushed twice on a
  quest branch;
* no check run of questbot's left ``queued``/``in_progress`` at the end. (Several completed
  ``questbot`` runs on one head are by design: the projection starts a new run when a
  completed one must show work again, because GitHub shows the newest run of a name. A run
  created twice for one step is left open by whoever lost it, so it shows up here.)
* no acknowledged delivery lost: every delivery some web process answered 2xx for has its
  dedupe marker in Redis (it was stored), none went to the dead letters, and none is still
  waiting in the inbound stream at the end;
* no 5xx of questbot's own: any 500 is a bug; a 503 is right only while Redis was away.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import redis.asyncio

from bot.journal.keys import DEFAULT_SHARDS, RUNNERS_GROUP, doorbell_key, quest_keys, shard_of
from bot.runner.inbound import Inbound, seen_key
from bot.runner.inbound_consumer import GROUP
from bot.words.render import INBOX_TITLE
from questbot_testing.chaos.processes import Outage, was_down
from questbot_testing.chaos.story import QuestRun

BOT = "questbot[bot]"


@dataclass
class Verdict:
    quests_ok: int = 0
    duplicate_writes: int = 0
    lost_deliveries: int = 0
    unhandled_deliveries: int = 0
    orphaned_check_runs: int = 0
    own_5xx: int = 0
    violations: int = 0
    problems: list[str] = field(default_factory=list)
    duplicates: Counter[str] = field(default_factory=Counter)

    def duplicate(self, what: str, extra: int, evidence: str) -> None:
        if extra > 0:
            self.duplicate_writes += extra
            self.duplicates[what] += extra
            self.problems.append(f"duplicate {what}: {evidence}")


def _quest_problems(run: QuestRun, repo: dict[str, Any], requests: list[dict[str, Any]],
                    base: str | None, v: Verdict) -> list[str]:
    """Checks one quest's objects; duplicates go to ``v``, returns what keeps it from being ok."""
    wrong: list[str] = []
    qid = run.quest_id
    if run.state != "closed":
        wrong.append(f"stopped at {run.state}: {run.error} (last failure: {run.last_failure})")
    if qid is None:
        return wrong
    pulls = [p for p in repo["pulls"] if p["head_ref"] == f"quest/{qid}"]
    v.duplicate("pull requests", len(pulls) - 1, f"quest {qid} has {len(pulls)}")
    marker = f"questbot:status quest={qid}"
    status = [c for c in repo["comments"] if marker in (c["body"] or "")]
    v.duplicate("status comments", len(status) - 1,
                f"quest {qid} has {len(status)}: ids {[c['id'] for c in status]}")
    if not status and run.pr is not None:
        wrong.append("no status comment")
    if not pulls:
        wrong.append("no pull request")
        return wrong
    pr = pulls[0]
    merge_path = f"/repos/{run.repo}/pulls/{pr['number']}/merge"
    merges = [r for r in requests if r["operation_id"] == "pulls/merge"
              and r["path"] == merge_path and 200 in (r["status"], r["hidden_status"])]
    v.duplicate("merges", len(merges) - 1, f"PR #{pr['number']} of quest {qid} merged "
                f"{len(merges)} times")
    if run.state == "closed":
        if not pr["merged"]:
            wrong.append(f"closed but PR #{pr['number']} is not merged")
        elif run.approved_head and pr["head_sha"] != run.approved_head:
            wrong.append(f"merged at {pr['head_sha'][:10]}, approved at "
                         f"{run.approved_head[:10]}")
        sent = [(r["json"] or {}).get("sha") for r in merges]
        if run.approved_head and any(sha != run.approved_head for sha in sent):
            wrong.append(f"a merge did not pass the approved head {run.approved_head[:10]}")
    _conversation(run, repo, pr["number"], v, wrong)
    _commits(run, repo, pr["head_sha"], base, v)
    return wrong


def _conversation(run: QuestRun, repo: dict[str, Any], number: int, v: Verdict,
                  wrong: list[str]) -> None:
    by_id = {c["id"]: c for c in repo["comments"]}
    for command in run.commands:
        reactions = by_id.get(command.comment_id, {}).get("reactions", [])
        if not reactions:
            wrong.append(f"{command.user}'s {command.body!r} (comment {command.comment_id}) "
                         "got no reaction: questbot never read it")
        v.duplicate("reactions", len(reactions) - 1,
                    f"{command.user}'s {command.body!r} has {reactions}")
    replies = [c for c in repo["comments"] if c["issue_number"] == number
               and c["user"] == BOT and "questbot:reply=" in (c["body"] or "")]
    keys = Counter(c["body"].rsplit("questbot:reply=", 1)[1].split(" ")[0] for c in replies)
    for key, count in keys.items():
        v.duplicate("replies", count - 1, f"reply {key} posted {count} times")
    expected = sum(1 for c in run.commands if c.refused)
    if len(keys) < expected:
        wrong.append(f"{expected - len(keys)} refusal(s) got no reply")
    if len(keys) > expected:
        texts = [c["body"].splitlines()[0][:160] for c in replies]
        wrong.append(f"{len(keys) - expected} unexpected refusal(s): {texts}")


def _commits(run: QuestRun, repo: dict[str, Any], head: str, base: str | None,
             v: Verdict) -> None:
    """Commits on the quest branch, from its head back to the base it started from: each
    message once (the reproduction, the patch); twice means a push was repeated."""
    commits = repo["commits"]
    seen: set[str] = set()
    stack = [head]
    base_side = _ancestors(commits, base) if base else set()
    messages: list[str] = []
    while stack:
        sha = stack.pop()
        if sha in seen or sha in base_side or sha not in commits:
            continue
        seen.add(sha)
        messages.append(commits[sha]["message"].splitlines()[0])
        stack += commits[sha]["parents"]
    for message, count in Counter(messages).items():
        v.duplicate("commits", count - 1, f"quest {run.quest_id}: {message!r} x{count}")


def _ancestors(commits: dict[str, Any], sha: str) -> set[str]:
    out: set[str] = set()
    stack = [sha]
    while stack:
        at = stack.pop()
        if at in out or at not in commits:
            continue
        out.add(at)
        stack += commits[at]["parents"]
    return out


async def judge(state: dict[str, Any], runs: list[QuestRun], bases: dict[str, str],
                client: redis.asyncio.Redis, outages: Sequence[Outage], t0: float) -> Verdict:
    """The verdict on a run that started at ``t0`` (epoch seconds), Redis away ``outages``."""
    v = Verdict()
    requests = state["requests"]
    for run in runs:
        repo = state["repositories"][run.repo]
        wrong = _quest_problems(run, repo, requests, bases.get(run.repo), v)
        if wrong:
            v.problems += [f"quest {run.quest_id} ({run.repo}): {w}" for w in wrong]
        else:
            v.quests_ok += 1
    for name, repo in state["repositories"].items():
        inboxes = [i for i in repo["issues"] if i["title"] == INBOX_TITLE]
        v.duplicate("inbox issues", len(inboxes) - 1,
                    f"{name} has {len(inboxes)}: #{[i['number'] for i in inboxes]}")
        for run_ in repo["check_runs"]:
            if run_["app_slug"] == "questbot" and run_["status"] != "completed":
                v.orphaned_check_runs += 1
                v.problems.append(f"orphaned check run {run_['id']} ({run_['name']}, "
                                  f"{run_['external_id']}) on {name}@{run_['head_sha'][:10]} "
                                  f"left {run_['status']}")
    await _deliveries(state, client, v)
    for attempt in state["webhooks"]["attempts"]:
        status = attempt["status"]
        if status < 500:
            continue
        down = was_down(outages, attempt["started"], attempt["finished"])
        if status == 503 and down:
            continue
        v.own_5xx += 1
        back = [attempt["started"] - o.up for o in outages
                if o.up is not None and o.up <= attempt["started"]]
        when = (f"{min(back):.2f} s after redis came back" if back and not down else
                "with redis away" if down else "with redis up all along")
        v.problems.append(f"questbot answered {status} to {attempt['event']} "
                          f"{attempt['guid']} at +{attempt['started'] - t0:.1f} s, {when} "
                          f"({attempt['target']})")
    v.violations = len(state["violations"])
    v.problems += [f"GitHub API violation: {text}" for text in state["violations"][:20]]
    return v


async def _deliveries(state: dict[str, Any], client: redis.asyncio.Redis, v: Verdict) -> None:
    acknowledged = state["webhooks"]["acknowledged"]
    inbound = Inbound(client)  # one stream on one Redis, every shard on a cluster
    pipe = client.pipeline(transaction=False)
    for guid in acknowledged:
        pipe.exists(seen_key(guid, inbound.shards))
    found = await pipe.execute() if acknowledged else []
    for guid, present in zip(acknowledged, found, strict=True):
        if not present:
            v.lost_deliveries += 1
            v.problems.append(f"delivery {guid} was acknowledged and is not in redis")
    dead = await inbound.dead_letters()
    if dead:
        v.lost_deliveries += dead
        v.problems.append(f"{dead} deliveries in the dead letters "
                          f"({', '.join(s + ':dead' for s in inbound.streams[:2])}…)")
    backlog = await inbound.backlog()
    if backlog:
        v.unhandled_deliveries += backlog
        pending = 0
        for stream in inbound.streams:
            pending += int((await client.xpending(stream, GROUP)).get("pending", 0))
        v.problems.append(f"{backlog} deliveries still in the inbound stream at the end "
                          f"({pending} read by a worker and never acknowledged)")


async def diagnose(client: redis.asyncio.Redis, run: QuestRun) -> dict[str, Any]:
    """Why a quest did not finish, from Redis: its outbox, its lease, its failures."""
    if run.quest_id is None:
        return {}
    k = quest_keys(run.quest_id)
    outbox: Any = await client.xrange(k.outbox, "-", "+")
    lease = await client.get(k.lease)
    ttl = await client.pttl(k.lease)
    failures: Any = await client.xrange(k.failures, "-", "+")
    shard = shard_of(run.quest_id, DEFAULT_SHARDS)
    bells: list[dict[str, Any]] = []
    pending: Any = await client.xpending_range(doorbell_key(shard), RUNNERS_GROUP, "-", "+", 100)
    for entry in pending:
        rows: Any = await client.xrange(doorbell_key(shard), entry["message_id"],
                                        entry["message_id"])
        if rows and _text(rows[0][1].get(b"q", b"")) == run.quest_id:
            bells.append({"consumer": _text(entry["consumer"]),
                          "idle_s": round(entry["time_since_delivered"] / 1000, 1)})
    return {
        "outbox": [_text(fields.get(b"k", b"?")) for _id, fields in outbox],
        "lease": _text(lease) if lease is not None else None,
        "lease_ttl_s": round(ttl / 1000, 1) if ttl and ttl > 0 else None,
        "failures": [_text(fields.get(b"error", b""))[:200] for _id, fields in failures],
        "doorbells_pending": bells,
    }


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
