"""The demo's story, as steps that each check what GitHub was asked to do and what a maintainer
saw. ``scripts/demo`` prints it as a timeline; ``tests/e2e/test_demo.py`` runs the same story.

A step that did not happen raises ``StepFailed``: the demo exits non-zero, the test fails.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from bot.core import Quest, State
from questbot_testing.fakegithub import ci
from questbot_testing.sample import sample_files
from questbot_testing.stack import Stack

REPO = "octo/sample"
MAINTAINER = "maya"
READER = "rex"
SETTINGS = """\
# questbot settings for the sample: every checkpoint waits for a person
checkpoints: {A: blocking, B: blocking, C: blocking}
reviewers: [maya]
watch_window_minutes: 60
proof:
  commands: ["python3 -m unittest discover -q"]
"""


class StepFailed(AssertionError):
    """A step of the story did not happen as it should have."""


@dataclass
class Line:
    state: str
    revision: int
    github: list[str]
    seen: str
    seconds: float


@dataclass
class Story:
    stack: Stack
    say: Callable[[Line], None] = lambda line: None
    lines: list[Line] = field(default_factory=list)
    quest_id: str = ""
    _seen_requests: int = 0
    agent_seconds: float = 0.0
    signalled_at: float | None = None
    """When the failing check's webhook was sent (wall clock, as ``Exchange.at``)."""

    def first_sign_seconds(self) -> float | None:
        """Seconds from the failing check's webhook to questbot's first write to GitHub about
        it (its installation token aside): the first sign a maintainer sees."""
        if self.signalled_at is None:
            return None
        writes = [e.at for e in self.stack.fake.requests
                  if e.at >= self.signalled_at and e.method != "GET"
                  and not e.path.startswith("/app/")]
        return min(writes) - self.signalled_at if writes else None

    def _github_since(self) -> list[str]:
        new = self.stack.fake.requests[self._seen_requests:]
        self._seen_requests = len(self.stack.fake.requests)
        writes = [e for e in new if e.method != "GET" and not e.path.startswith("/app/")]
        return [f"{e.method} {e.operation_id or e.path} → {e.status}" for e in writes]

    async def _quest(self) -> Quest:
        return await self.stack.quest(self.quest_id)

    async def step(self, seen: str, expect: State, revision: int | None = None) -> Quest:
        start = time.perf_counter()
        await self.stack.settle()
        quest = await self._quest()
        line = Line(quest.state.value, quest.revision, self._github_since(), seen,
                    time.perf_counter() - start)
        self.lines.append(line)
        self.say(line)
        if quest.state is not expect or (revision is not None and quest.revision != revision):
            raise StepFailed(f"expected {expect.value} at revision {revision or quest.revision}, "
                             f"the quest is {quest.state.value} at revision {quest.revision} "
                             f"(last failure: {quest.last_failure})")
        return quest

    def pr_number(self) -> int:
        for pr in self.stack.fake.repo(REPO).pulls.values():
            if pr.head_ref == f"quest/{self.quest_id}":
                return int(pr.number)
        raise StepFailed(f"quest {self.quest_id} has no pull request on GitHub")

    def status_comment(self) -> str:
        number = self.pr_number()
        bodies = [c.body for c in self.stack.fake.repo(REPO).comments.values()
                  if c.issue_number == number and "questbot:status" in c.body]
        if len(bodies) != 1:
            raise StepFailed(f"expected one status comment on #{number}, found {len(bodies)}")
        return str(bodies[0])

    async def approve(self, checkpoint: str, expect: State) -> Quest:
        await self.stack.fake.comment(REPO, self.pr_number(), f"/approve {checkpoint}",
                                      user=MAINTAINER)
        return await self.step(f"@{MAINTAINER} commented /approve {checkpoint}", expect)


NO_RERUN = SETTINGS + "triage: {rerun_failed: false}\n"
"""The sample's settings without triage's re-run of a failed check, for tests about something
else that deliver one red CI run (``test_flaky`` has the re-run)."""


async def setup_repository(stack: Stack, settings: str = SETTINGS,
                           extra: Mapping[str, str | bytes] | None = None) -> str:
    files: dict[str, str | bytes] = {**sample_files(), ".github/questbot.yml": settings,
                                     **(extra or {})}
    repo = stack.fake.create_repository(REPO, files)
    stack.fake.set_permission(REPO, MAINTAINER, "write")
    stack.fake.set_permission(REPO, READER, "read")
    return str(repo.branch_sha("main"))


async def main_line(story: Story, extra: Mapping[str, str | bytes] | None = None) -> Quest:
    """A failing check to closed, through A, B and C (in the sample with ``extra`` files)."""
    stack = story.stack
    main = await setup_repository(stack, extra=extra)
    story._seen_requests = len(stack.fake.requests)
    story.signalled_at = time.time()
    await stack.fake.fail_check(REPO, main, name="tests")
    await stack.settle()
    quests = await stack.quests(REPO)
    if len(quests) != 1:
        raise StepFailed(f"the failing check made {len(quests)} quests, not one")
    story.quest_id = quests[0].id
    await story.step("check `tests` failed on main; questbot researched it", State.HYPOTHESISED)
    if "checkpoint a" not in story.status_comment().lower():
        raise StepFailed("the status comment does not say checkpoint A is open")
    await story.approve("A", State.PLANNED)
    await story.approve("B", State.READY)
    quest = await story.approve("C", State.WATCHING)
    merges = stack.calls("pulls/merge")
    if not merges or merges[-1].json.get("sha") != quest.head:
        raise StepFailed("the merge did not pass the approved head SHA")
    await stack.advance(61)
    return await story.step("the watch window passed with the checks green", State.CLOSED)


RED = {"tests (3.11)": "failure", "tests (3.12)": "failure"}
GREEN = {"tests (3.11)": "success", "tests (3.12)": "success"}


async def landed(stack: Stack) -> tuple[Story, str]:
    """A quest made from a red CI run on main, approved at A, B and C and merged; returns the
    story and the commit the failure was on. Triage's re-run of the failure is off
    (``NO_RERUN``): the watch's own re-runs are what its tests count."""
    story = Story(stack)
    main = await setup_repository(stack, NO_RERUN)
    run = ci.actions_run(stack.fake, REPO, main, RED)
    await ci.deliver(stack.fake, ci.completed(stack.fake, REPO, run))
    await stack.settle()
    (quest,) = await stack.quests(REPO)
    story.quest_id = quest.id
    await story.step("CI failed on main", State.HYPOTHESISED)
    await story.approve("A", State.PLANNED)
    await story.approve("B", State.READY)
    await story.approve("C", State.WATCHING)
    return story, main


BUG_BACK = "a later change brings the bug back"


async def regression(story: Story) -> Quest:
    """A later change on main brings the bug back and the same check fails: the closed quest
    is reopened at revision 2 and researched from main's head, on a fresh branch and PR."""
    stack = story.stack
    repo = stack.fake.repo(REPO)
    pager = (repo.git.read(str(repo.branch_sha("main")), "pager.py") or b"").decode()
    fixed = "return -(-total // per_page)"
    if fixed not in pager:
        raise StepFailed("main does not hold the landed fix, so it cannot be undone")
    head = await stack.fake.push(REPO, "main", {"pager.py": pager.replace(
        fixed, "return total // per_page")}, user="carol", message=BUG_BACK)
    await stack.fake.fail_check(REPO, head.sha, name="tests")
    quest = await story.step(f"{BUG_BACK}; check `tests` failed again on main",
                             State.HYPOTHESISED, 2)
    if quest.base != head.sha or quest.branch != f"quest/{story.quest_id}-r2":
        raise StepFailed(f"the reopened quest works from {quest.base} on {quest.branch}, not "
                         f"from main's head {head.sha} on a fresh branch")
    fresh = [pr for pr in repo.pulls.values() if pr.head_ref == quest.branch]
    if len(fresh) != 1 or fresh[0].merged:
        raise StepFailed(f"the reopened quest has no open pull request of its own on "
                         f"{quest.branch}")
    return quest
