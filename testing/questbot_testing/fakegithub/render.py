"""Turn the fake's state into GitHub's JSON, starting from GitHub's own documented examples.

Each answer begins as a deep copy of the matching ``components/examples`` value from the REST
description and has the fields the fake knows overwritten. Fields the fake does not model keep
GitHub's example values, so every answer has GitHub's full shape, and the server's response
validation catches any field set to the wrong type.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from questbot_testing.fakegithub import nodes
from questbot_testing.fakegithub.openapi import OpenAPI
from questbot_testing.fakegithub.state import (
    CheckRun,
    Comment,
    CommitStatus,
    Installation,
    Issue,
    PullRequest,
    Repository,
    Review,
    WorkflowRun,
    World,
)


def mergeable_state(repo: Repository, pr: PullRequest) -> str:
    """GitHub's ``mergeable_state``: ``draft``, ``blocked`` while a required check has not
    passed or approvals are missing, else ``clean`` (the fake computes mergeability at once;
    GitHub may say ``null`` and ``unknown`` first, BEHAVIOUR §1)."""
    if pr.merged:
        return "unknown"
    if pr.draft:
        return "draft"
    return "blocked" if repo.missing_checks(pr) or repo.missing_approvals(pr) else "clean"


def reactions(url: str) -> dict[str, Any]:
    """An empty ``reaction-rollup``: the fake counts no reactions on issues."""
    counts = dict.fromkeys(("+1", "-1", "laugh", "confused", "heart", "hooray", "eyes",
                            "rocket"), 0)
    return {"url": url, "total_count": 0, **counts}


def user_id(login: str) -> int:
    """A stable numeric id for a login; the fake has no user table."""
    return int(hashlib.sha256(login.encode()).hexdigest()[:7], 16)


class Renderer:
    """Renders state for one server; ``base`` is the fake's URL, used in every ``url`` field."""

    def __init__(self, api: OpenAPI, world: World, base: str) -> None:
        self.api = api
        self.world = world
        self.base = base.rstrip("/")

    def repo_url(self, repo: Repository) -> str:
        return f"{self.base}/repos/{repo.full_name}"

    def user(self, login: str, kind: str | None = None) -> dict[str, Any]:
        out: dict[str, Any] = self.api.example("pull-request")["user"]
        kind = kind or ("Bot" if login.endswith("[bot]") else "User")
        out.update(
            login=login,
            id=user_id(login),
            node_id=f"U_{user_id(login)}",
            url=f"{self.base}/users/{login}",
            html_url=f"https://github.com/{login}",
            type=kind,
        )
        return out

    def repository(self, repo: Repository) -> dict[str, Any]:
        out: dict[str, Any] = self.api.example("pull-request")["head"]["repo"]
        out.update(
            id=repo.id,
            node_id=f"R_{repo.id}",
            name=repo.name,
            full_name=repo.full_name,
            owner=self.user(repo.owner, "Organization"),
            private=repo.private,
            default_branch=repo.default_branch,
            url=self.repo_url(repo),
            html_url=f"https://github.com/{repo.full_name}",
            allow_merge_commit=repo.allow_merge_commit,
            allow_squash_merge=repo.allow_squash_merge,
            allow_rebase_merge=repo.allow_rebase_merge,
            allow_auto_merge=repo.allow_auto_merge,
        )
        return out

    def full_repository(self, repo: Repository) -> dict[str, Any]:
        """``repos/get``: the repository with its settings (``full-repository``)."""
        out: dict[str, Any] = self.api.example("full-repository-default-response")
        out.update({k: v for k, v in self.repository(repo).items() if k in out})
        for absent in ("template_repository", "parent", "source"):  # not a fork or template
            out.pop(absent, None)
        out.update(fork=False, language=None, web_commit_signoff_required=False,
                   allow_update_branch=False, use_squash_pr_title_as_default=False,
                   visibility="private" if repo.private else "public",
                   permissions={"admin": False, "maintain": False, "push": True, "triage": True,
                                "pull": True})
        return out

    def label(self, repo: Repository, name: str) -> dict[str, Any]:
        out: dict[str, Any] = self.api.example("label-items")[0]
        known = repo.labels.get(name.lower())
        out.update(
            id=user_id(f"{repo.full_name}#{name}"),
            node_id=f"LA_{user_id(f'{repo.full_name}#{name}')}",
            name=name,
            url=f"{self.repo_url(repo)}/labels/{name}",
            color=known.color if known else "ededed",
            description=known.description if known else None,
            default=False,
        )
        return out

    def issue(self, repo: Repository, issue: Issue) -> dict[str, Any]:
        out: dict[str, Any] = self.api.example("issue")
        url = f"{self.repo_url(repo)}/issues/{issue.number}"
        kind = nodes.PULL_REQUEST if issue.is_pull_request else nodes.ISSUE
        out.update(
            id=repo.id * 100000 + issue.number,
            node_id=nodes.node_id(kind, repo.id, issue.number),
            url=url,
            repository_url=self.repo_url(repo),
            labels_url=f"{url}/labels{{/name}}",
            comments_url=f"{url}/comments",
            events_url=f"{url}/events",
            html_url=f"https://github.com/{repo.full_name}/issues/{issue.number}",
            number=issue.number,
            state=issue.state,
            title=issue.title,
            body=issue.body,
            user=self.user(issue.user),
            labels=[self.label(repo, name) for name in issue.labels],
            assignee=self.user(issue.assignees[0]) if issue.assignees else None,
            assignees=[self.user(login) for login in issue.assignees],
            milestone=None,
            comments=len(issue.comments),
            created_at=issue.created_at,
            updated_at=issue.created_at,
            closed_at=None,
            closed_by=None,
            locked=issue.locked,
            active_lock_reason=issue.lock_reason,
            # GitHub sends these (recorded/paginate-issues.json); the example lacks them
            timeline_url=f"{url}/timeline",
            performed_via_github_app=None,
            reactions=reactions(f"{url}/reactions"),
            author_association="MEMBER" if repo.permission(issue.user) != "none" else "NONE",
            state_reason=None,
        )
        if not issue.is_pull_request:
            out.pop("pull_request", None)
        else:
            out["pull_request"]["url"] = f"{self.repo_url(repo)}/pulls/{issue.number}"
        return out

    def comment(self, repo: Repository, comment: Comment) -> dict[str, Any]:
        out: dict[str, Any] = self.api.example("issue-comment")
        out.update(
            id=comment.id,
            node_id=f"IC_{comment.id}",
            url=f"{self.repo_url(repo)}/issues/comments/{comment.id}",
            html_url=f"https://github.com/{repo.full_name}/issues/{comment.issue_number}"
            f"#issuecomment-{comment.id}",
            issue_url=f"{self.repo_url(repo)}/issues/{comment.issue_number}",
            body=comment.body,
            user=self.user(comment.user),
            created_at=comment.created_at,
            updated_at=comment.updated_at,
        )
        return out

    def pull_request(self, repo: Repository, pr: PullRequest) -> dict[str, Any]:
        issue = repo.issues[pr.number]
        out: dict[str, Any] = self.api.example("pull-request")
        out.update({k: v for k, v in self.issue(repo, issue).items() if k in out})
        url = f"{self.repo_url(repo)}/pulls/{pr.number}"
        out.update(
            url=url,
            issue_url=f"{self.repo_url(repo)}/issues/{pr.number}",
            html_url=f"https://github.com/{repo.full_name}/pull/{pr.number}",
            state="closed" if pr.merged else issue.state,
            draft=pr.draft,
            merged=pr.merged,
            merged_at=pr.merged_at,
            merged_by=self.user(pr.merged_by) if pr.merged_by else None,
            merge_commit_sha=pr.merge_commit_sha,
            mergeable=None if pr.merged else True,
            mergeable_state=mergeable_state(repo, pr),
            requested_reviewers=[self.user(login) for login in pr.requested_reviewers],
            requested_teams=[],
            auto_merge=self.auto_merge(pr),
        )
        fork = self.world.repository(pr.head_repo) if pr.head_repo else None
        sides = (("head", pr.head_ref, pr.head_sha, fork or repo),
                 ("base", pr.base_ref, pr.base_sha, repo))
        for side, ref, sha, where in sides:  # a fork's head names the fork
            out[side].update(
                label=f"{where.owner}:{ref}",
                ref=ref,
                sha=sha,
                user=self.user(where.owner, "Organization" if where is repo else None),
                repo=self.repository(where),
            )
        return out

    def auto_merge(self, pr: PullRequest) -> dict[str, Any] | None:
        if pr.auto_merge is None:
            return None
        return {"enabled_by": self.user(pr.auto_merge.enabled_by),
                "merge_method": pr.auto_merge.method.lower(),
                "commit_title": "", "commit_message": ""}

    def pull_simple(self, repo: Repository, pr: PullRequest) -> dict[str, Any]:
        out: dict[str, Any] = self.api.example("pull-request-simple")
        full = self.pull_request(repo, pr)
        out.update({k: v for k, v in full.items() if k in out})
        return out

    def review(self, repo: Repository, number: int, review: Review) -> dict[str, Any]:
        out: dict[str, Any] = self.api.example("pull-request-review")
        out.update(
            id=review.id,
            node_id=f"PRR_{review.id}",
            user=self.user(review.user),
            body=review.body,
            state=review.state,
            commit_id=review.commit_id,
            submitted_at=review.submitted_at,
            pull_request_url=f"{self.repo_url(repo)}/pulls/{number}",
        )
        return out

    def check_run(self, repo: Repository, run: CheckRun) -> dict[str, Any]:
        out: dict[str, Any] = self.api.example("check-run")
        output = out["output"]
        output.update(title=None, summary=None, text=None, annotations_count=0)
        output.update({k: v for k, v in run.output.items() if k in ("title", "summary", "text")})
        out.update(
            id=run.id,
            node_id=f"CR_{run.id}",
            head_sha=run.head_sha,
            name=run.name,
            external_id=run.external_id,
            url=f"{self.repo_url(repo)}/check-runs/{run.id}",
            html_url=f"https://github.com/{repo.full_name}/runs/{run.id}",
            details_url=run.details_url,
            status=run.status,
            conclusion=run.conclusion,
            started_at=run.started_at,
            completed_at=run.completed_at,
            output=output,
            pull_requests=[],
        )
        out["app"].update(id=self.world.app_id_of(run.app_slug), slug=run.app_slug)
        return out

    def status(self, repo: Repository, status: CommitStatus) -> dict[str, Any]:
        out: dict[str, Any] = self.api.example("status")
        out.update(
            id=status.id,
            url=f"{self.repo_url(repo)}/statuses/{status.sha}",
            state=status.state,
            description=status.description,
            target_url=status.target_url,
            context=status.context,
            created_at=status.created_at,
            updated_at=status.created_at,
        )
        return out

    def status_simple(self, repo: Repository, status: CommitStatus) -> dict[str, Any]:
        """A status inside ``combined-commit-status`` (no ``creator``)."""
        out: dict[str, Any] = self.api.example("combined-commit-status")["statuses"][0]
        out.update({k: v for k, v in self.status(repo, status).items() if k in out})
        return out

    def minimal_repository(self, repo: Repository) -> dict[str, Any]:
        out: dict[str, Any] = self.api.example("combined-commit-status")["repository"]
        out.update({k: v for k, v in self.repository(repo).items() if k in out})
        return out

    def content_file(self, repo: Repository, ref: str, path: str, sha: str) -> dict[str, Any]:
        data = repo.git.blobs[sha]
        # GitHub wraps the base64 text at 60 columns with "\n"; clients must tolerate that.
        encoded = base64.encodebytes(data).decode()
        out: dict[str, Any] = self.api.example("content-file-response-if-content-is-a-file")
        blob_url = f"{self.repo_url(repo)}/git/blobs/{sha}"
        self_url = f"{self.repo_url(repo)}/contents/{path}?ref={ref}"
        html = f"https://github.com/{repo.full_name}/blob/{ref}/{path}"
        out.update(
            size=len(data),
            name=path.rsplit("/", 1)[-1],
            path=path,
            content=encoded,
            sha=sha,
            url=self_url,
            git_url=blob_url,
            html_url=html,
            download_url=None,
            _links={"git": blob_url, "self": self_url, "html": html},
        )
        return out

    def git_commit(self, repo: Repository, sha: str) -> dict[str, Any]:
        commit = repo.git.commits[sha]
        out: dict[str, Any] = self.api.example("git-commit")
        person = {"date": commit.date, "name": commit.author, "email": commit.email}
        out.update(
            sha=sha,
            node_id=f"C_{sha}",
            url=f"{self.repo_url(repo)}/git/commits/{sha}",
            html_url=f"https://github.com/{repo.full_name}/commit/{sha}",
            author=person,
            committer=person,
            message=commit.message,
            tree={"sha": commit.tree, "url": f"{self.repo_url(repo)}/git/trees/{commit.tree}"},
            parents=[
                {
                    "sha": p,
                    "url": f"{self.repo_url(repo)}/git/commits/{p}",
                    "html_url": f"https://github.com/{repo.full_name}/commit/{p}",
                }
                for p in commit.parents
            ],
        )
        return out

    def commit(self, repo: Repository, sha: str) -> dict[str, Any]:
        """The "commit" shape (``POST /merges``): a git commit plus GitHub's decorations."""
        git = self.git_commit(repo, sha)
        out: dict[str, Any] = self.api.example("commit")
        out.update(
            url=f"{self.repo_url(repo)}/commits/{sha}",
            sha=sha,
            node_id=git["node_id"],
            html_url=git["html_url"],
            comments_url=f"{self.repo_url(repo)}/commits/{sha}/comments",
            parents=git["parents"],
            files=[],
        )
        out["commit"].update(
            url=git["url"],
            author=git["author"],
            committer=git["committer"],
            message=git["message"],
            tree=git["tree"],
        )
        return out

    def git_ref(self, repo: Repository, ref: str) -> dict[str, Any]:
        sha = repo.refs[ref]
        return {
            "ref": ref,
            "node_id": f"REF_{repo.id}_{ref}",
            "url": f"{self.repo_url(repo)}/git/{ref}",
            "object": {
                "type": "commit",
                "sha": sha,
                "url": f"{self.repo_url(repo)}/git/commits/{sha}",
            },
        }

    def blob(self, repo: Repository, sha: str) -> dict[str, Any]:
        data = repo.git.blobs[sha]
        return {"content": base64.encodebytes(data).decode(), "encoding": "base64",
                "url": f"{self.repo_url(repo)}/git/blobs/{sha}", "sha": sha, "size": len(data),
                "node_id": f"B_{sha[:16]}"}

    def git_tree(self, repo: Repository, sha: str, *, recursive: bool = False) -> dict[str, Any]:
        entries = []
        listing = repo.git.walk(sha) if recursive else repo.git.trees[sha]
        for entry in listing:
            item: dict[str, Any] = {
                "path": entry.path,
                "mode": entry.mode,
                "type": entry.type,
                "sha": entry.sha,
                "url": f"{self.repo_url(repo)}/git/{entry.type}s/{entry.sha}",
            }
            if entry.type == "blob":
                item["size"] = len(repo.git.blobs[entry.sha])
            entries.append(item)
        url = f"{self.repo_url(repo)}/git/trees/{sha}"
        return {"sha": sha, "url": url, "tree": entries, "truncated": False}

    def installation(self, installation: Installation) -> dict[str, Any]:
        out: dict[str, Any] = self.api.example("installation")
        out.update(
            id=installation.id,
            account=self.user(installation.account, installation.account_type),
            app_id=self.world.app_id,
            app_slug=self.world.app_slug,
            target_id=user_id(installation.account),
            access_tokens_url=f"{self.base}/app/installations/{installation.id}/access_tokens",
            repositories_url=f"{self.base}/installation/repositories",
        )
        return out

    def app(self) -> dict[str, Any]:
        out: dict[str, Any] = self.api.example("integration")
        events = self.world.app_events
        out.update(id=self.world.app_id, slug=self.world.app_slug, name=self.world.app_slug,
                   permissions=dict(self.world.app_permissions),
                   events=sorted(events) if events is not None else out.get("events", []))
        return out

    def workflow_run(self, repo: Repository, run: WorkflowRun) -> dict[str, Any]:
        out: dict[str, Any] = self.api.example("workflow-run")
        url = f"{self.repo_url(repo)}/actions/runs/{run.id}"
        out.update(
            id=run.id,
            name=run.name,
            head_branch=run.head_branch,
            head_sha=run.head_sha,
            status=run.status,
            conclusion=run.conclusion,
            run_attempt=run.run_attempt,
            url=url,
            logs_url=f"{url}/logs",
            rerun_url=f"{url}/rerun",
            pull_requests=[],
        )
        out["repository"].update(id=repo.id, name=repo.name, full_name=repo.full_name)
        out["head_repository"].update(id=repo.id, name=repo.name, full_name=repo.full_name)
        return out
