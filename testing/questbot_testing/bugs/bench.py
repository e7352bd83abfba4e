"""The bug set, run: every bug's failing check reported to one whole stack, each quest walked by
a scripted maintainer, and where each ended told from GitHub's side and the quest's usage
receipts. ``scripts/bench_agent.py`` prints it; ``tests/e2e/test_bug_set.py`` holds the
recorded model to it.

The scripted maintainer does what the demo's does (``questbot_testing.scenario``), for any
quest and any model: ``/approve A`` at a hypothesis, ``/approve B`` at a plan, ``/approve C``
at a proof; a watched quest gets its CI run on the merged commit (run for real, as every
check here: ``questbot_testing.bugs.ci``) and the watch window is waited out on the worker's
clock. It never judges the agent's work: what stands between a bad patch and ``main`` is
questbot — the claims checked against the code, the reproduction failing on the base, the
proof at the head — and the bench reports whatever it let through.

All the bugs run at once on one stack, as one worker serves many repositories: a round settles
the worker (every quest's running work ends), then the maintainer acts on each quest at a
checkpoint. A bug's ``seconds`` are its agent's, stage by stage from the quest's journal
(``stage_seconds``); its ``wall_seconds``, from its failing check to its ending as the bench
saw it, overlap the others' and wait for the slowest quest of each round. ``serial=True`` runs
one bug at a time.

How each ending is read, from the fake GitHub:

* **fixed**: the quest's pull request was merged with the head approved at C (the merge
  call's ``sha``), the proof's ``questbot`` check run concluded ``success``, CI on the merged
  commit passed, and the quest closed after the watch.
* **flaky**: no pull request and no agent run; the ``questbot`` check run says flaky.
* **parked**: the ``questbot`` check run asks for action, and ``why`` is its title and summary —
  the words a maintainer reads.
* **failed**: anything else, said in the same terms (the state the quest stopped in, what
  GitHub shows, or that the time ran out).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from pydantic import SecretStr

from bot.agent.model import ModelEndpoint, Prices, Wire
from bot.core import Event, Quest, State
from questbot_testing.bugs import BUGS, Bug, Ending, settings
from questbot_testing.bugs import ci as bug_ci
from questbot_testing.fakegithub import ci
from questbot_testing.modelserver.demo import spent_by_stage
from questbot_testing.modelserver.make_bugs import conversations
from questbot_testing.modelserver.server import ModelServer, recorded
from questbot_testing.stack import Stack

MAINTAINER = "maya"
CHECK = "questbot"
"""The check run questbot keeps on each quest's head (``bot.github``'s ``CHECK_NAME``)."""
WATCH_MINUTES = 61
"""Past the repositories' ``watch_window_minutes: 60``."""
MAX_ROUNDS = 14
"""More rounds than any quest needs (research, A, B, C, the watch, the lesson): a quest still
open after them is going round in circles."""
APPROVALS = {State.HYPOTHESISED: "A", State.PLANNED: "B", State.READY: "C"}
RECORDED_MODEL = "gpt-4.1-mini"


@dataclass
class BugRun:
    """One bug's quest, as the bench saw it end."""

    bug: str
    kind: str
    expected: str
    ending: str = Ending.FAILED.value
    why: str = ""
    """In a maintainer's words: what GitHub shows for a park or a failure, what landed for a
    fix."""
    state: str = ""
    revision: int = 1
    tokens: int = 0
    cost_usd: float = 0.0
    stages: dict[str, int] = field(default_factory=dict)
    """Tokens per agent stage (and ``lesson``), from the usage receipts."""
    seconds: float = 0.0
    """The agent's time on the quest: each stage from the event that started it to the one
    that reported what came of it, from the quest's journal (``timing``)."""
    timing: dict[str, float] = field(default_factory=dict)
    """Seconds per stage — the agent's, and questbot's ``proof`` and ``landing`` — from the
    journal: what the model and the repository's checks cost, without the maintainer's turns
    or the watch window."""
    wall_seconds: float = 0.0
    """From the failing check to the ending, as the bench saw it: every bug shares the
    machine and the worker, and an ending is seen when a round of the worker ends."""
    github_requests: int = 0
    """REST requests questbot made about the bug's repository."""
    pull: int | None = None
    merged: str | None = None
    quest: str = ""

    @property
    def as_expected(self) -> bool:
        return self.ending == self.expected

    def figures(self) -> dict[str, Any]:
        out = asdict(self)
        out["as_expected"] = self.as_expected
        out["cost_usd"] = round(self.cost_usd, 2)
        out["seconds"] = round(self.seconds, 2)
        out["wall_seconds"] = round(self.wall_seconds, 2)
        out["timing"] = {stage: round(s, 2) for stage, s in self.timing.items()}
        return out


@dataclass
class _Walk:
    bug: Bug
    run: BugRun
    started: float
    approvals: dict[str, int] = field(default_factory=dict)
    approved_head: str | None = None
    main_ci: bool | None = None
    """CI on the merged commit passed (``None``: not run yet)."""
    last: tuple[str, int] | None = None
    still: int = 0
    done: bool = False


async def recorded_model(protocol: Wire = Wire.OPENAI,
                         bugs: Sequence[Bug] = BUGS) -> tuple[ModelServer, ModelEndpoint]:
    """The local model server holding the careful model's conversations for ``bugs``."""
    names = [name for bug in bugs for name in conversations(bug)]
    server = await ModelServer(recorded(protocol.value, *names)).start()
    url = f"{server.url}/v1" if protocol is Wire.OPENAI else server.url
    model = RECORDED_MODEL if protocol is Wire.OPENAI else "claude-sonnet-4-5"
    return server, ModelEndpoint(wire=protocol, url=url, model=model,
                                 api_key=SecretStr("sk-bench-not-a-real-key"))


def endpoint(url: str, model: str, api_key: str | None, protocol: Wire,
             prices: tuple[float, float] | None = None) -> ModelEndpoint:
    """A real endpoint, as the worker's ``QUESTBOT_MODEL*`` settings describe one."""
    return ModelEndpoint(wire=protocol, url=url, model=model,
                         api_key=SecretStr(api_key) if api_key else None,
                         prices=Prices(input=prices[0], output=prices[1]) if prices else None)


async def run_bugs(stack: Stack, bugs: Sequence[Bug] = BUGS, *, serial: bool = False,
                   timeout: float = 1800.0,
                   say: Callable[[str], None] = lambda line: None) -> list[BugRun]:
    """Every bug of ``bugs`` from its failing check to where its quest ends, on ``stack``."""
    if serial:
        runs: list[BugRun] = []
        for bug in bugs:
            runs += await _run(stack, [bug], timeout, say)
        return runs
    return await _run(stack, bugs, timeout, say)


async def _run(stack: Stack, bugs: Sequence[Bug], timeout: float,
               say: Callable[[str], None]) -> list[BugRun]:
    deadline = time.perf_counter() + timeout
    shas = {bug.name: _create(stack, bug) for bug in bugs}
    checks = await bug_ci.attempts(bugs)
    walks: list[_Walk] = []
    for bug, (first, rerun) in zip(bugs, checks, strict=True):
        if first.passed:
            raise AssertionError(f"{bug.name}: its check passes on main; there is no bug")
        run = bug_ci.report(stack.fake, bug.repo, shas[bug.name], first, rerun)
        walks.append(_Walk(bug, BugRun(bug.name, bug.kind, bug.ending.value),
                           time.perf_counter()))
        await ci.deliver(stack.fake, ci.completed(stack.fake, bug.repo, run))
        say(f"{bug.name}: the tests check failed on main ({bug.kind})")
    for _round in range(MAX_ROUNDS):
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            break
        try:
            await asyncio.wait_for(stack.settle(), remaining)
        except TimeoutError:
            break
        watching = [walk for walk in walks if not walk.done and await _act(stack, walk, say)]
        if all(w.done for w in walks):
            break
        if watching:
            await _main_ci(stack, [w for w in watching if w.main_ci is None], say)
            await stack.advance(WATCH_MINUTES)
    for walk in walks:
        if not walk.done:
            quest = await _quest(stack, walk.bug)
            walk.run.state = quest.state.value if quest else ""
            walk.run.why = (f"did not end within {timeout:.0f}s or {MAX_ROUNDS} rounds; the "
                            f"quest is {walk.run.state or 'not there'}")
            walk.run.wall_seconds = time.perf_counter() - walk.started
        await _figures(stack, walk)
    return [walk.run for walk in walks]


def _create(stack: Stack, bug: Bug) -> str:
    files: dict[str, str | bytes] = {**bug.files(), ".github/questbot.yml": settings(bug)}
    repo = stack.fake.create_repository(bug.repo, files)
    stack.fake.set_permission(bug.repo, MAINTAINER, "write")
    return str(repo.branch_sha("main"))


async def _quest(stack: Stack, bug: Bug) -> Quest | None:
    quests = await stack.quests(bug.repo)
    if len(quests) > 1:
        raise AssertionError(f"{bug.name}: one failing check made {len(quests)} quests")
    return quests[0] if quests else None


async def _act(stack: Stack, walk: _Walk, say: Callable[[str], None]) -> bool:
    """The maintainer's move on one quest after a round; ``True`` when it waits out a watch."""
    bug, run = walk.bug, walk.run
    quest = await _quest(stack, bug)
    if quest is None:
        return _end(walk, Ending.FAILED, "", "the failing check made no quest")
    run.quest, run.state, run.revision = quest.id, quest.state.value, quest.revision
    run.pull = _pull(stack, bug, quest)
    if quest.state in APPROVALS:
        checkpoint = APPROVALS[quest.state]
        walk.approvals[checkpoint] = walk.approvals.get(checkpoint, 0) + 1
        if walk.approvals[checkpoint] > 3:
            return _end(walk, Ending.FAILED, quest.state.value,
                        f"/approve {checkpoint} did not move the quest, three times")
        if checkpoint == "C":
            walk.approved_head = quest.head
        where = run.pull or _issue(stack, bug, quest)
        if where is None:
            return _end(walk, Ending.FAILED, quest.state.value,
                        f"checkpoint {checkpoint} is open but there is nowhere to approve it")
        await stack.fake.comment(bug.repo, where, f"/approve {checkpoint}", user=MAINTAINER)
        say(f"{bug.name}: @{MAINTAINER} approved checkpoint {checkpoint}")
        return False
    if quest.state is State.WATCHING:
        return True
    if quest.state is State.CLOSED:
        return _landed(stack, walk, quest)
    if quest.state is State.PARKED:
        return _end(walk, Ending.PARKED, quest.state.value, _shown(stack, bug, quest))
    if quest.state is State.ABANDONED:
        shown = _shown(stack, bug, quest)
        flaky = "flaky" in shown.lower() and run.pull is None  # and no agent ran: _figures
        return _end(walk, Ending.FLAKY if flaky else Ending.FAILED, quest.state.value, shown)
    here = (quest.state.value, quest.revision)
    walk.still = walk.still + 1 if walk.last == here else 0
    walk.last = here
    if walk.still >= 2:
        return _end(walk, Ending.FAILED, quest.state.value,
                    f"the quest stays {quest.state.value} with nothing running: "
                    + _shown(stack, bug, quest))
    return False


def _end(walk: _Walk, ending: Ending, state: str, why: str) -> bool:
    walk.done = True
    walk.run.ending, walk.run.state = ending.value, state or walk.run.state
    walk.run.why = why or ending.value
    walk.run.wall_seconds = time.perf_counter() - walk.started
    return False


def _landed(stack: Stack, walk: _Walk, quest: Quest) -> bool:
    """Closed: fixed only if GitHub shows the whole of it."""
    bug = walk.bug
    repo = stack.fake.repo(bug.repo)
    pr = repo.pulls.get(walk.run.pull or -1)
    merges = [c for c in stack.calls("pulls/merge") if f"/repos/{bug.repo}/" in c.path]
    check = _check(stack, bug, quest)
    problems = []
    if pr is None or not pr.merged:
        problems.append("its pull request was not merged")
    if not merges or merges[-1].json.get("sha") != walk.approved_head:
        problems.append("the merge did not pass the head approved at C")
    if check is None or check.conclusion != "success":
        problems.append(f"its check run concluded {check.conclusion if check else 'nothing'}")
    if not walk.main_ci:
        problems.append("CI failed on the merged commit")
    if problems:
        return _end(walk, Ending.FAILED, quest.state.value, "closed, but " + "; ".join(problems))
    walk.run.merged = quest.merge_sha
    return _end(walk, Ending.FIXED, quest.state.value,
                f"merged {str(quest.merge_sha)[:7]} at the head approved at C "
                f"({str(walk.approved_head)[:7]}), CI green on main, watched clean")


async def _main_ci(stack: Stack, walks: Sequence[_Walk], say: Callable[[str], None]) -> None:
    """CI on each default branch's head — the merged fix — run for real and reported, before
    the watch window passes (the watch reads it)."""
    jobs, heads = [], []
    for walk in walks:
        repo = stack.fake.repo(walk.bug.repo)
        head = str(repo.branch_sha("main"))
        files = {path: (repo.git.read(head, path) or b"").decode()
                 for path in repo.git.files(head)}
        jobs.append(bug_ci.Job(walk.bug.name, files, walk.bug.attempt(1)))
        heads.append(head)
    for walk, head, result in zip(walks, heads, await bug_ci.run_checks(jobs), strict=True):
        walk.main_ci = result.passed
        run = bug_ci.report(stack.fake, walk.bug.repo, head, result)
        await ci.deliver(stack.fake, ci.completed(stack.fake, walk.bug.repo, run))
        say(f"{walk.bug.name}: merged; CI on main {'passed' if result.passed else 'FAILED'}")


def _pull(stack: Stack, bug: Bug, quest: Quest) -> int | None:
    for pr in stack.fake.repo(bug.repo).pulls.values():
        if pr.head_ref == quest.branch:
            return int(pr.number)
    return None


def _issue(stack: Stack, bug: Bug, quest: Quest) -> int | None:
    """The issue a quest with no pull request speaks on (its status comment's)."""
    for comment in stack.fake.repo(bug.repo).comments.values():
        if "questbot:status" in comment.body and quest.id in comment.body:
            return int(comment.issue_number)
    return None


def _check(stack: Stack, bug: Bug, quest: Quest) -> Any:
    runs = [c for c in stack.fake.repo(bug.repo).check_runs.values() if c.name == CHECK]
    return max(runs, key=lambda c: c.id) if runs else None


def _shown(stack: Stack, bug: Bug, quest: Quest) -> str:
    """What the ``questbot`` check run tells a maintainer: its title and summary."""
    check = _check(stack, bug, quest)
    if check is None:
        return f"no {CHECK} check run on GitHub"
    output = check.output or {}
    title = _plain(str(output.get("title") or ""))
    summary = _plain(str(output.get("summary") or ""))
    why = summary.split(" Why: ", 1)[1] if " Why: " in summary else summary
    return f"{title} — {why}"[:600]


def _plain(markdown: str) -> str:
    """Markdown as the words it shows: escapes dropped, lines joined."""
    return " ".join(re.sub(r"\\([^\w\s])", r"\1", markdown).split())


async def _figures(stack: Stack, walk: _Walk) -> None:
    run = walk.run
    run.github_requests = sum(1 for e in stack.fake.requests
                              if f"/repos/{walk.bug.repo}/" in e.path)
    if not run.quest:
        return
    events = await stack.runtime.worker.journal.events(run.quest)
    run.timing = stage_seconds(events)
    run.seconds = sum((s for stage, s in run.timing.items() if stage in AGENT_STAGES), 0.0)
    spent = spent_by_stage(events)
    run.tokens = sum(s.tokens for s in spent)
    run.cost_usd = sum(s.cost_cents for s in spent) / 100
    for s in spent:
        run.stages[s.stage] = run.stages.get(s.stage, 0) + s.tokens
    if run.ending == Ending.FLAKY.value and spent:
        run.ending, run.why = Ending.FAILED.value, f"ended as flaky after an agent ran: {run.why}"


STARTS = {"research_started", "checkpoint_decided", "resumed", "patch_pushed", "reopened",
          "rollback_confirmed", "spend_decided", "human_revision"}
"""Events after which questbot (its agent, its proof, its landing) is at work on a quest."""
OUTCOMES = {"hypothesis_written": "research", "reproduced": "reproduce",
            "reproduction_failed": "reproduce", "plan_written": "plan", "patch_pushed": "patch",
            "proof_completed": "proof", "proof_failed": "proof", "landed": "landing"}
"""Events that report what came of that work, and the stage it was (``agent_halted`` names
its own)."""
AGENT_STAGES = {"research", "reproduce", "plan", "patch"}


def stage_seconds(events: Sequence[Event]) -> dict[str, float]:
    """Seconds per stage: from each event that set questbot to work to the first event that
    reported what came of it (a reproduction's plan, reported with it, is not a stage)."""
    out: dict[str, float] = {}
    start: Event | None = None
    for event in events:
        if event.type == "agent_halted":
            stage: str | None = getattr(event, "stage", None) or "research"
        else:
            stage = OUTCOMES.get(event.type)
        if stage is not None and start is not None:
            out[stage] = out.get(stage, 0.0) + (event.at - start.at).total_seconds()
            start = None
        if event.type in STARTS:
            start = event
    return out


def totals(runs: Sequence[BugRun], seconds: float) -> dict[str, Any]:
    """The set's figures: how many ended each way, and what they cost."""
    counts = {ending.value: sum(r.ending == ending.value for r in runs) for ending in Ending}
    return {**counts, "bugs": len(runs), "as_expected": sum(r.as_expected for r in runs),
            "tokens": sum(r.tokens for r in runs),
            "cost_usd": round(sum(r.cost_usd for r in runs), 2),
            "github_requests": sum(r.github_requests for r in runs),
            "agent_seconds": round(sum(r.seconds for r in runs), 2),
            "seconds": round(seconds, 2)}
