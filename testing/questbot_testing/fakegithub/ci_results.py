"""CI results in the fake: another App's check run completing on a commit (with the ``check_run``
webhook GitHub sends) and recorded Actions runs for the reruns and logs endpoints. Mixed into
:class:`~.server.FakeGitHub` through :class:`~.actions.Actions`.
"""

from __future__ import annotations

from typing import Any

from questbot_testing.fakegithub.state import CheckRun, Repository, WorkflowRun, iso


class CiResults:
    """Check runs by CI and recorded workflow runs."""

    deliver: Any
    repo: Any
    world: Any
    settle_merges: Any
    """``Landing.settle_merges``: what GitHub merges on its own once it can."""

    async def complete_check_run(
        self,
        full_name: str,
        sha: str,
        name: str,
        conclusion: str,
        *,
        app_slug: str = "ci",
        summary: str = "",
    ) -> CheckRun:
        """A check run by another App (CI) completes on ``sha``; sends ``check_run completed``."""
        repo = self.repo(full_name)
        now = iso()
        run = CheckRun(
            self.world.new_id(),
            sha,
            name,
            "completed",
            conclusion,
            "",
            now,
            now,
            output={"title": f"{name}: {conclusion}", "summary": summary},
            app_slug=app_slug,
        )
        # another CI's run: its page on GitHub, and where that CI says its log is
        run.details_url = f"https://{app_slug}.example.com/{full_name}/jobs/{run.id}"
        repo.check_runs[run.id] = run
        pulls = [
            {
                "number": pr.number,
                "head": {"ref": pr.head_ref, "sha": pr.head_sha},
                "base": {"ref": pr.base_ref, "sha": pr.base_sha},
            }
            for pr in repo.pulls.values()
            if pr.head_sha == sha and not pr.head_repo  # GitHub lists no fork's here
        ]
        await self.deliver(
            repo,
            "check_run",
            "completed",
            {
                "check_run": {
                    "id": run.id,
                    "name": name,
                    "head_sha": sha,
                    "status": "completed",
                    "conclusion": conclusion,
                    "external_id": "",
                    "started_at": now,
                    "completed_at": now,
                    "html_url": f"https://github.com/{full_name}/runs/{run.id}",
                    "details_url": run.details_url,
                    "output": run.output | {"text": None},
                    "app": {"slug": app_slug},
                    "check_suite": {"head_sha": sha, "head_branch": _branch_at(repo, sha)},
                    "pull_requests": pulls,
                }
            },
            sender="github-actions[bot]",
        )
        await self.settle_merges(full_name)  # auto-merge and the queue act on their own
        return run

    async def fail_check(self, full_name: str, sha: str, name: str = "ci") -> CheckRun:
        return await self.complete_check_run(full_name, sha, name, "failure")

    async def pass_check(self, full_name: str, sha: str, name: str = "ci") -> CheckRun:
        return await self.complete_check_run(full_name, sha, name, "success")

    def add_workflow_run(
        self,
        full_name: str,
        sha: str,
        branch: str,
        *,
        name: str = "CI",
        conclusion: str | None = "failure",
        logs: bytes | None = None,
    ) -> WorkflowRun:
        """Record an Actions run (for ``GET .../actions/runs/{id}``, rerun and logs)."""
        repo = self.repo(full_name)
        run = WorkflowRun(self.world.new_id(), name, sha, branch, conclusion=conclusion)
        if logs is not None:
            run.logs = logs
        repo.workflow_runs[run.id] = run
        return run


def _branch_at(repo: Repository, sha: str) -> str | None:
    """The branch GitHub names as a check suite's ``head_branch``: one whose head is ``sha``,
    the default branch first; ``None`` when no branch points there."""
    heads = [ref.removeprefix("refs/heads/") for ref, at in repo.refs.items()
             if at == sha and ref.startswith("refs/heads/")]
    if repo.default_branch in heads:
        return repo.default_branch
    return heads[0] if heads else None
