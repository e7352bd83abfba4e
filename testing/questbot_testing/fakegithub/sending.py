"""How the fake GitHub sends the App its webhooks: each delivery built from the real example
payloads, signed, and POSTed to ``webhook_url`` (or queued on a dispatcher, as GitHub queues
them), with the repository, pull request and issue objects shaped as GitHub's webhooks carry
them. Without a target, deliveries are still recorded (status 0), so a test can inspect what
would have been sent.

Mixed into :class:`~.server.FakeGitHub` under
:class:`~.actions.Actions`, whose scenes send through it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from questbot_testing.fakegithub.hooklog import HookLog
from questbot_testing.fakegithub.state import Issue, PullRequest, Repository, World
from questbot_testing.fakegithub.webhooks import (
    Delivery,
    DeliveryResult,
    build_delivery,
    build_payload,
    deep_merge,
)

if TYPE_CHECKING:
    from questbot_testing.fakegithub.dispatch import Dispatcher
    from questbot_testing.fakegithub.render import Renderer

ZERO_SHA = "0" * 40


def kind_of(login: str) -> str:
    """The account type GitHub shows for ``login``: a ``[bot]`` suffix is an App's bot."""
    return "Bot" if login.endswith("[bot]") else "User"


class Sending:
    """Webhook delivery and the payload objects GitHub puts in them."""

    world: World
    render: Renderer
    webhook_url: str | None
    webhook_secret: str

    def __init__(self) -> None:
        self.deliveries: list[DeliveryResult] = []
        self.hooks = HookLog()
        """Every delivery attempt, as ``GET /app/hook/deliveries`` lists them
        (``fakegithub.hooklog``); ``hooks.drop(n)`` loses the next ``n``."""
        self.dispatcher: Dispatcher | None = None
        """Set it to send webhooks from a queue, as GitHub does (``fakegithub.dispatch``);
        the deliveries are then recorded there, and ``deliveries`` holds them with status 0."""

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
            user_type=kind_of(sender),
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
        head_repo = self.world.repository(pr.head_repo) if pr.head_repo else None

        def side(ref: str, sha: str, of: Repository | None = None) -> dict[str, Any]:
            where = of or repo  # a fork's head names the fork: its repository, owner, label
            return {"ref": ref, "sha": sha, "label": f"{where.owner}:{ref}",
                    "user": {"login": where.owner, "type": kind_of(where.owner)},
                    "repo": self._webhook_repo(where)}

        return {
            "number": pr.number,
            "title": issue.title,
            "body": issue.body,
            "state": "closed" if pr.merged else issue.state,
            "draft": pr.draft,
            "merged": pr.merged,
            "merge_commit_sha": pr.merge_commit_sha,
            "user": {"login": issue.user, "type": kind_of(issue.user)},
            "head": side(pr.head_ref, pr.head_sha, head_repo),
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
            **changed_paths(repo, commit.parents[0] if commit.parents else None, after),
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
            if repo.issues[pr.number].state == "open" and not pr.merged and pr.base_ref == branch:
                pr.base_sha = after
        for base, pr in self._pulls_from(repo, branch):
            if pr.head_sha != after:
                if base is not repo:  # a fork's push: GitHub fetches it into the base
                    base.git.commits.update(repo.git.commits)
                    base.git.trees.update(repo.git.trees)
                    base.git.blobs.update(repo.git.blobs)
                old, pr.head_sha = pr.head_sha, after
                await self.deliver(
                    base,
                    "pull_request",
                    "synchronize",
                    {
                        "number": pr.number,
                        "before": old,
                        "after": after,
                        "pull_request": self._webhook_pull(base, pr),
                    },
                    sender=pusher,
                )

    def _pulls_from(self, repo: Repository,
                    branch: str) -> list[tuple[Repository, PullRequest]]:
        """The open pull requests whose head is ``repo``'s ``branch``, with the repository
        each is in: ``repo``'s own, and those from it as a fork into another repository."""
        found = []
        for base in self.world.repositories.values():
            for pr in base.pulls.values():
                here = pr.head_repo.lower() == repo.full_name.lower() if pr.head_repo \
                    else base is repo
                if (here and pr.head_ref == branch and not pr.merged
                        and base.issues[pr.number].state == "open"):
                    found.append((base, pr))
        return found

    def _webhook_issue(self, repo: Repository, issue: Issue) -> dict[str, Any]:
        out: dict[str, Any] = {
            "number": issue.number,
            "title": issue.title,
            "body": issue.body,
            "state": issue.state,
            "user": {"login": issue.user, "type": kind_of(issue.user)},
            "url": f"{self.render.repo_url(repo)}/issues/{issue.number}",
            "html_url": f"https://github.com/{repo.full_name}/issues/{issue.number}",
            "labels": [{"name": name, "color": "ededed", "default": False}
                       for name in issue.labels],
        }
        if issue.is_pull_request:
            out["pull_request"] = {"url": f"{self.render.repo_url(repo)}/pulls/{issue.number}"}
        return out


def changed_paths(repo: Repository, parent: str | None, sha: str) -> dict[str, list[str]]:
    """A commit's ``added``, ``removed`` and ``modified`` paths, as GitHub lists them for each
    commit of a ``push`` webhook (docs: webhook-events-and-payloads#push) — what a receiver
    reads to tell a push that changed a file it cares about."""
    before = repo.git.entries(parent) if parent else {}
    after = repo.git.entries(sha)
    return {"added": sorted(set(after) - set(before)),
            "removed": sorted(set(before) - set(after)),
            "modified": sorted(p for p in set(after) & set(before) if after[p] != before[p])}
