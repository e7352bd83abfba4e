"""What people (and the world) do to the fake GitHub, with the webhooks GitHub would send.

Tests and the demo script arrange a scene with these: a repository with files, a push, a pull
request, a comment with a slash command, a CI check that fails. Each helper changes the state
and — when ``webhook_url`` is set — delivers the signed event the real GitHub would deliver to
the App, built from the real example payloads. Without a target, deliveries are still recorded
(status 0), so a test can inspect what would have been sent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tests.fakegithub.gitstore import FILE_MODE, Commit
from tests.fakegithub.hooklog import HookLog
from tests.fakegithub.state import (
    CheckRun,
    Comment,
    Issue,
    Permission,
    PullRequest,
    Repository,
    WorkflowRun,
    World,
    iso,
)
from tests.fakegithub.webhooks import (
    Delivery,
    DeliveryResult,
    build_delivery,
    build_payload,
    deep_merge,
)

if TYPE_CHECKING:
    from tests.fakegithub.dispatch import Dispatcher
    from tests.fakegithub.render import Renderer

ZERO_SHA = "0" * 40


def _kind(login: str) -> str:
    return "Bot" if login.endswith("[bot]") else "User"


class Actions:
    """Scene-setting helpers mixed into :class:`~tests.fakegithub.server.FakeGitHub`."""

    world: World
    render: Renderer
    webhook_url: str | None
    webhook_secret: str
    settle_merges: Any
    """``Landing.settle_merges``: what GitHub merges on its own once it can."""

    def __init__(self) -> None:
        self.deliveries: list[DeliveryResult] = []
        self.hooks = HookLog()
        """Every delivery attempt, as ``GET /app/hook/deliveries`` lists them
        (``tests.fakegithub.hooklog``); ``hooks.drop(n)`` loses the next ``n``."""
        self.dispatcher: Dispatcher | None = None
        """Set it to send webhooks from a queue, as GitHub does (``tests.fakegithub.dispatch``);
        the deliveries are then recorded there, and ``deliveries`` holds them with status 0."""

    # -- state only ------------------------------------------------------------------------

    def create_repository(
        self,
        full_name: str,
        files: dict[str, str | bytes] | None = None,
        *,
        default_branch: str = "main",
        private: bool = False,
        installation_id: int | None = None,
        modes: dict[str, str] | None = None,
    ) -> Repository:
        """A repository whose default branch holds one commit with ``files`` (each ``100644``
        unless ``modes`` names another: ``100755``, or ``120000`` with the link's target as
        the content).

        The App is installed on the owner's account (one installation per account) unless an
        ``installation_id`` is given; read it back as ``repo.installation_id``.
        """
        owner, name = full_name.split("/", 1)
        if installation_id is None:
            installation_id = self.world.installation_for(owner).id
        repo = Repository(
            self.world.new_id(), owner, name, default_branch, installation_id, private=private
        )
        self.world.repositories[full_name.lower()] = repo
        blobs = {p: repo.git.put_blob(_bytes(c)) for p, c in (files or {}).items()}
        commit = repo.git.put_commit(
            repo.git.write_files(blobs, modes), [], "Initial commit", author=owner
        )
        repo.refs[f"refs/heads/{default_branch}"] = commit.sha
        return repo

    def repo(self, full_name: str) -> Repository:
        """The repository named ``owner/name``; KeyError if the fake has none."""
        found = self.world.repository(full_name)
        if found is None:
            raise KeyError(f"no repository {full_name!r} in the fake")
        return found

    def set_permission(self, full_name: str, login: str, permission: Permission | str) -> None:
        """Make ``login`` a collaborator with a role: ``admin``, ``maintain``, ``write``,
        ``triage`` or ``read`` (or ``none``)."""
        self.repo(full_name).permissions[login] = Permission(permission)

    def add_comment(self, repo: Repository, issue: Issue, body: str, user: str) -> Comment:
        now = iso()
        comment = Comment(self.world.new_id(), issue.number, body, user, now, now)
        repo.comments[comment.id] = comment
        issue.comments.append(comment.id)
        return comment

    def add_pull(
        self,
        repo: Repository,
        head: str,
        base: str,
        title: str,
        body: str | None,
        user: str,
        *,
        draft: bool = False,
    ) -> PullRequest:
        number = repo.take_number()
        repo.issues[number] = Issue(number, title, body, user, iso(), is_pull_request=True)
        head_sha, base_sha = repo.refs[f"refs/heads/{head}"], repo.refs[f"refs/heads/{base}"]
        pr = PullRequest(number, head, base, head_sha, base_sha, draft=draft)
        repo.pulls[number] = pr
        return pr

    # -- webhooks --------------------------------------------------------------------------

    async def deliver(
        self,
        repo: Repository,
        event: str,
        example: str,
        overrides: dict[str, Any] | None = None,
        *,
        sender: str,
    ) -> DeliveryResult:
        """Build ``event`` from an example for ``repo``, sign it and POST it to ``webhook_url``."""
        payload = build_payload(
            event,
            example,
            installation_id=repo.installation_id,
            user=sender,
            user_type=_kind(sender),
        )
        if isinstance(payload.get("repository"), dict):
            overrides = {"repository": self._webhook_repo(repo), **(overrides or {})}
        delivery = build_delivery(
            event,
            deep_merge(payload, overrides or {}),
            self.webhook_secret,
            target_id=self.world.app_id,
        )
        return await self._send(delivery)

    async def _send(self, delivery: Delivery) -> DeliveryResult:
        if not self.world.subscribed(delivery.event):
            # GitHub sends an App only what it subscribed to: nothing is sent or recorded
            return DeliveryResult(delivery, 0, "not subscribed")
        if self.dispatcher is not None:
            return self._queue(self.dispatcher, delivery)
        if self.webhook_url is None:  # an App without a webhook: nothing is attempted
            result = DeliveryResult(delivery, 0, "")
        else:
            result = await self.hooks.attempt(self.webhook_url, delivery, redelivery=False)
        self.deliveries.append(result)
        return result

    async def redeliver(self, delivery: Delivery) -> None:
        """Send ``delivery`` again as a redelivery (``POST /app/hook/deliveries/{id}/
        attempts``): same guid and body, a new entry in the log."""
        if self.dispatcher is not None:
            self.dispatcher.hooks = self.hooks
            await self.dispatcher.resend(delivery)
        elif self.webhook_url is not None:
            self.deliveries.append(
                await self.hooks.attempt(self.webhook_url, delivery, redelivery=True))

    def _queue(self, dispatcher: Dispatcher, delivery: Delivery) -> DeliveryResult:
        dispatcher.hooks = self.hooks
        dispatcher.submit(delivery)
        result = DeliveryResult(delivery, 0, "queued")
        self.deliveries.append(result)
        return result

    def _webhook_repo(self, repo: Repository) -> dict[str, Any]:
        return {
            "id": repo.id,
            "name": repo.name,
            "full_name": repo.full_name,
            "private": repo.private,
            "default_branch": repo.default_branch,
            "html_url": f"https://github.com/{repo.full_name}",
            "url": self.render.repo_url(repo),
            "owner": {"login": repo.owner, "id": self.render.user(repo.owner)["id"]},
        }

    def _webhook_pull(self, repo: Repository, pr: PullRequest) -> dict[str, Any]:
        issue = repo.issues[pr.number]

        def side(ref: str, sha: str) -> dict[str, Any]:
            repository = self._webhook_repo(repo)
            return {"ref": ref, "sha": sha, "label": f"{repo.owner}:{ref}", "repo": repository}

        return {
            "number": pr.number,
            "title": issue.title,
            "body": issue.body,
            "state": "closed" if pr.merged else issue.state,
            "draft": pr.draft,
            "merged": pr.merged,
            "merge_commit_sha": pr.merge_commit_sha,
            "user": {"login": issue.user, "type": _kind(issue.user)},
            "head": side(pr.head_ref, pr.head_sha),
            "base": side(pr.base_ref, pr.base_sha),
            "url": f"{self.render.repo_url(repo)}/pulls/{pr.number}",
            "html_url": f"https://github.com/{repo.full_name}/pull/{pr.number}",
            "labels": [],
            "requested_reviewers": [],
        }

    async def ref_moved(
        self, repo: Repository, ref: str, before: str, after: str, *, pusher: str
    ) -> None:
        """Send ``push``, then ``pull_request synchronize`` for open PRs whose head is ``ref``."""
        commit = repo.git.commits[after]
        head_commit = {
            "id": after,
            "message": commit.message,
            "timestamp": commit.date,
            "author": {"name": commit.author, "email": commit.email},
        }
        await self.deliver(
            repo,
            "push",
            "with-installation.payload.json",
            {
                "ref": ref,
                "before": before,
                "after": after,
                "created": before == ZERO_SHA,
                "deleted": False,
                "forced": not repo.git.is_ancestor(before, after),
                "commits": [head_commit],
                "head_commit": head_commit,
                "pusher": {"name": pusher, "email": f"{pusher}@example.com"},
            },
            sender=pusher,
        )
        branch = ref.removeprefix("refs/heads/")
        for pr in repo.pulls.values():
            if repo.issues[pr.number].state != "open" or pr.merged:
                continue
            if pr.base_ref == branch:
                pr.base_sha = after
            if pr.head_ref == branch and pr.head_sha != after:
                old, pr.head_sha = pr.head_sha, after
                await self.deliver(
                    repo,
                    "pull_request",
                    "synchronize",
                    {
                        "number": pr.number,
                        "before": old,
                        "after": after,
                        "pull_request": self._webhook_pull(repo, pr),
                    },
                    sender=pusher,
                )

    # -- what people do --------------------------------------------------------------------

    async def push(
        self,
        full_name: str,
        branch: str,
        files: dict[str, str | bytes | None],
        *,
        user: str = "octocat",
        message: str = "Update files",
        modes: dict[str, str] | None = None,
    ) -> Commit:
        """Commit ``files`` (``None`` deletes a path) on ``branch`` as ``user`` and push it; a
        changed file keeps its mode unless ``modes`` gives one.

        A missing branch starts from the default branch. Sends ``push`` and, for an open pull
        request with this head, ``pull_request`` ``synchronize``.
        """
        repo = self.repo(full_name)
        ref = f"refs/heads/{branch}"
        before = repo.refs.get(ref, ZERO_SHA)
        parent = repo.refs.get(ref) or repo.refs[f"refs/heads/{repo.default_branch}"]
        tree = repo.git.entries(parent)
        for path, content in files.items():
            if content is None:
                tree.pop(path, None)
            else:
                mode = (modes or {}).get(path) or tree.get(path, (FILE_MODE, ""))[0]
                tree[path] = (mode, repo.git.put_blob(_bytes(content)))
        commit = repo.git.put_commit(
            repo.git.write_entries(tree),
            [parent],
            message,
            author=user,
            email=f"{user}@example.com",
            date=iso(),
        )
        repo.refs[ref] = commit.sha
        await self.ref_moved(repo, ref, before, commit.sha, pusher=user)
        return commit

    async def open_pull_request(
        self,
        full_name: str,
        head: str,
        *,
        base: str | None = None,
        title: str = "A change",
        body: str | None = None,
        user: str = "octocat",
        draft: bool = False,
    ) -> PullRequest:
        """Open a pull request from ``head`` as ``user``; sends ``pull_request`` ``opened``."""
        repo = self.repo(full_name)
        pr = self.add_pull(repo, head, base or repo.default_branch, title, body, user, draft=draft)
        await self.deliver(
            repo,
            "pull_request",
            "opened",
            {"number": pr.number, "pull_request": self._webhook_pull(repo, pr)},
            sender=user,
        )
        return pr

    async def open_issue(
        self,
        full_name: str,
        title: str,
        body: str | None = None,
        *,
        user: str = "octocat",
        labels: list[str] | None = None,
    ) -> Issue:
        """Open an issue as ``user``; sends ``issues`` ``opened``."""
        repo = self.repo(full_name)
        issue = Issue(repo.take_number(), title, body, user, iso(), labels=list(labels or []))
        repo.issues[issue.number] = issue
        await self.deliver(
            repo, "issues", "opened", {"issue": self._webhook_issue(repo, issue)}, sender=user
        )
        return issue

    def _webhook_issue(self, repo: Repository, issue: Issue) -> dict[str, Any]:
        out: dict[str, Any] = {
            "number": issue.number,
            "title": issue.title,
            "body": issue.body,
            "state": issue.state,
            "user": {"login": issue.user, "type": _kind(issue.user)},
            "url": f"{self.render.repo_url(repo)}/issues/{issue.number}",
            "html_url": f"https://github.com/{repo.full_name}/issues/{issue.number}",
            "labels": [{"name": name, "color": "ededed", "default": False}
                       for name in issue.labels],
        }
        if issue.is_pull_request:
            out["pull_request"] = {"url": f"{self.render.repo_url(repo)}/pulls/{issue.number}"}
        return out

    async def comment(
        self, full_name: str, number: int, body: str, *, user: str = "octocat"
    ) -> Comment:
        """Comment on an issue or pull request as ``user``; sends ``issue_comment`` ``created``."""
        repo = self.repo(full_name)
        issue = repo.issues[number]
        comment = self.add_comment(repo, issue, body, user)
        payload_issue = self._webhook_issue(repo, issue)
        await self.deliver(
            repo,
            "issue_comment",
            "created",
            {
                "issue": payload_issue,
                "comment": {
                    "id": comment.id,
                    "body": body,
                    "user": {"login": user, "type": _kind(user)},
                    "created_at": comment.created_at,
                    "updated_at": comment.updated_at,
                },
            },
            sender=user,
        )
        return comment

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
            if pr.head_sha == sha
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

    # -- what the API does on the bot's behalf ---------------------------------------------

    async def merge_pull(
        self, repo: Repository, pr: PullRequest, user: str, method: str, title: str | None
    ) -> str:
        """Land ``pr`` on its base (merge commit, or one commit for squash/rebase)."""
        base = repo.refs[f"refs/heads/{pr.base_ref}"]
        files = repo.git.merge_entries(base, pr.head_sha) or repo.git.entries(pr.head_sha)
        parents = [base, pr.head_sha] if method == "merge" else [base]
        message = title or f"Merge pull request #{pr.number} from {repo.owner}/{pr.head_ref}"
        commit = repo.git.put_commit(
            repo.git.write_entries(files), parents, message, author=user, date=iso()
        )
        repo.refs[f"refs/heads/{pr.base_ref}"] = commit.sha
        pr.merged, pr.merged_by, pr.merged_at = True, user, iso()
        pr.merge_commit_sha = commit.sha
        repo.issues[pr.number].state = "closed"
        await self.ref_moved(repo, f"refs/heads/{pr.base_ref}", base, commit.sha, pusher=user)
        await self.deliver(
            repo,
            "pull_request",
            "closed",
            {"number": pr.number, "pull_request": self._webhook_pull(repo, pr)},
            sender=user,
        )
        return commit.sha

    async def update_pull_branch(self, repo: Repository, pr: PullRequest, user: str) -> bool:
        """Merge the base into the head branch; False on a conflict."""
        base = repo.refs[f"refs/heads/{pr.base_ref}"]
        if repo.git.is_ancestor(base, pr.head_sha):
            return True
        files = repo.git.merge_entries(pr.head_sha, base)
        if files is None:
            return False
        before = pr.head_sha
        commit = repo.git.put_commit(
            repo.git.write_entries(files),
            [before, base],
            f"Merge branch '{pr.base_ref}' into {pr.head_ref}",
            author=user,
            date=iso(),
        )
        repo.refs[f"refs/heads/{pr.head_ref}"] = commit.sha
        await self.ref_moved(repo, f"refs/heads/{pr.head_ref}", before, commit.sha, pusher=user)
        return True


def _bytes(content: str | bytes) -> bytes:
    return content.encode() if isinstance(content, str) else content


def _branch_at(repo: Repository, sha: str) -> str | None:
    """The branch GitHub names as a check suite's ``head_branch``: one whose head is ``sha``,
    the default branch first; ``None`` when no branch points there."""
    heads = [ref.removeprefix("refs/heads/") for ref, at in repo.refs.items()
             if at == sha and ref.startswith("refs/heads/")]
    if repo.default_branch in heads:
        return repo.default_branch
    return heads[0] if heads else None
