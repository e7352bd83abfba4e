"""What GitHub tells the App about the App's own writes.

GitHub sends an App the events it subscribed to whoever caused them, the App included: a
comment the App posts or edits arrives as ``issue_comment`` ``created``/``edited`` with the
App's bot account as sender and author (``type: Bot``), and a check run the App completes
arrives as ``check_run`` ``completed`` with the App in ``check_run.app`` — an App with
``checks: write`` gets every check run's events, its own among them, and is told to drop what
is not its own by the App's id (https://github.com/orgs/community/discussions/210531; not in
BEHAVIOUR.md). A bot that takes its own status comment for a person's command, or its own
failing check for a failure to fix, meets these. ``created`` check runs are not sent: questbot
reads none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from questbot_testing.fakegithub.state import CheckRun, Comment, Repository

if TYPE_CHECKING:
    from questbot_testing.fakegithub.server import FakeGitHub


def bot_login(fake: FakeGitHub) -> str:
    return f"{fake.world.app_slug}[bot]"


async def comment_written(fake: FakeGitHub, repo: Repository, comment: Comment, *,
                          before: str | None = None) -> None:
    """``issue_comment`` ``created`` (``before`` is ``None``) or ``edited`` for a comment the
    App wrote; an edit carries the old body in ``changes.body.from``, as GitHub's does."""
    issue = repo.issues[comment.issue_number]
    login = bot_login(fake)
    payload = {
        "issue": fake._webhook_issue(repo, issue),
        "comment": {"id": comment.id, "body": comment.body,
                    "user": {"login": login, "type": "Bot"},
                    "created_at": comment.created_at, "updated_at": comment.updated_at},
    }
    if before is not None:
        payload["changes"] = {"body": {"from": before}}
    await fake.deliver(repo, "issue_comment", "created" if before is None else "edited",
                       payload, sender=login)


async def check_run_completed(fake: FakeGitHub, repo: Repository, run: CheckRun) -> None:
    """``check_run`` ``completed`` for a run the App made, naming the App by id and slug."""
    from questbot_testing.fakegithub.ci_results import _branch_at

    await fake.deliver(repo, "check_run", "completed", {"check_run": {
        "id": run.id, "name": run.name, "head_sha": run.head_sha, "status": run.status,
        "conclusion": run.conclusion, "external_id": run.external_id,
        "started_at": run.started_at, "completed_at": run.completed_at,
        "output": {"title": run.output.get("title"), "summary": run.output.get("summary"),
                   "text": run.output.get("text")},
        "app": {"id": fake.world.app_id, "slug": fake.world.app_slug,
                "name": fake.world.app_slug},
        "check_suite": {"id": fake.world.suite_id(repo, fake.world.app_slug, run.head_sha),
                        "head_sha": run.head_sha, "head_branch": _branch_at(repo, run.head_sha),
                        "app": {"id": fake.world.app_id, "slug": fake.world.app_slug}},
        "pull_requests": [],
    }}, sender=bot_login(fake))
