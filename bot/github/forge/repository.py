"""One repository's REST operations: pull requests, check runs, comments, issues, contents.

Each method is one REST operation (named in its docstring, or by the section it sits in) and
returns a record of ``bot.github.forge.records``. Permanent refusals become ``PermanentError``
through ``refusals`` with a message saying what to do; the rest propagates for a retry. Every
body and check-run output is kept within GitHub's limits (``limits.fit``) on its way out; what
only GraphQL can do is ``Forge.graphql`` (``graphql.py``).
"""

from __future__ import annotations

import base64
from typing import Any

import gidgethub
from gidgethub.abc import GitHubAPI

from bot.github.forge.git import GitData
from bot.github.forge.graphql import PullRequestGraphQL
from bot.github.forge.records import (
    CheckRun,
    Comment,
    FileContent,
    Issue,
    Pull,
    RepoInfo,
)
from bot.github.forge.refusals import is_permanent, refusals, refused, status_of
from bot.words.github_limits import fit, fit_check_run

CHECK_NAME = "questbot"
PER_PAGE = 100
"""The most GitHub gives in one page of a listing (comments, issues, pulls, check runs)."""


class Forge:
    """One repository, through one installation client."""

    def __init__(self, gh: GitHubAPI, repo: str) -> None:
        self.gh = gh
        self.repo = repo
        self.base = f"/repos/{repo}"
        self.git = GitData(gh, repo)
        """Refs, and the commits questbot makes through the API (the agent uses git)."""
        self.graphql = PullRequestGraphQL(gh, repo)
        """Draft state, auto-merge, the merge queue and reverts: GraphQL only."""

    # -- pull requests (pulls/create, pulls/get, pulls/merge, pulls/update-branch) ---------

    async def create_pull(self, *, head: str, base: str, title: str, body: str,
                          draft: bool) -> Pull:
        data = await self.gh.post(f"{self.base}/pulls", data={
            "head": head, "base": base, "title": title, "body": fit(body), "draft": draft})
        return Pull.of(data)

    async def find_pull(self, branch: str, *, author: str | None = None) -> Pull | None:
        """``pulls/list`` by head branch, open and closed: the pull request from ``branch``
        (by ``author``, when given) — the open one if there is one, else the newest. How a
        pull request questbot opened but did not record is found again."""
        owner = self.repo.split("/", 1)[0]
        found: list[Pull] = []
        with refusals(f"list the pull requests from {branch} in {self.repo}",
                      "check the App has pull_requests: read"):
            async for data in self.gh.getiter(f"{self.base}/pulls{{?head,state,per_page}}",
                                              {"head": f"{owner}:{branch}", "state": "all",
                                               "per_page": PER_PAGE}):
                pull = Pull.of(data)
                if pull.head_ref == branch and (author is None
                                                or pull.author.lower() == author.lower()):
                    found.append(pull)
        if not found:
            return None
        return max(found, key=lambda p: (p.state == "open", p.number))

    async def pull(self, number: int) -> Pull:
        with refusals(f"read pull request #{number} of {self.repo}",
                      "it may have been deleted; /kill the quest or reopen it"):
            return Pull.of(await self.gh.getitem(f"{self.base}/pulls/{number}"))

    async def edit_pull(self, number: int, *, title: str, body: str) -> Pull:
        """``pulls/update`` with a new title and description (its state untouched)."""
        with refusals(f"edit the title and description of #{number} of {self.repo}",
                      "check the App has pull_requests: write"):
            return Pull.of(await self.gh.patch(f"{self.base}/pulls/{number}",
                                               data={"title": title, "body": fit(body)}))

    async def set_pull_state(self, number: int, state: str) -> Pull:
        """``pulls/update`` with ``state`` (``open`` or ``closed``); GitHub refuses to reopen
        one whose branch is gone (422), which is permanent."""
        with refusals(f"set #{number} of {self.repo} {state}",
                      "its branch may have been deleted; open or close it by hand"):
            return Pull.of(await self.gh.patch(f"{self.base}/pulls/{number}",
                                               data={"state": state}))

    async def merge(self, number: int, sha: str, title: str, method: str = "merge") -> str:
        """``pulls/merge`` pinned to ``sha`` with ``method`` (``merge``, ``squash`` or
        ``rebase``); returns the merge commit (the squashed commit, or the new base tip for a
        rebase). Raises gidgethub's errors unchanged: the caller tells 405 (not mergeable, and
        why) from 409 (head moved)."""
        data = await self.gh.put(f"{self.base}/pulls/{number}/merge",
                                 data={"sha": sha, "merge_method": method,
                                       "commit_title": title})
        return str(data["sha"])

    async def update_branch(self, number: int, expected_head: str) -> None:
        """``pulls/update-branch``: merge the base into the head, only from ``expected_head``."""
        await self.gh.put(f"{self.base}/pulls/{number}/update-branch",
                          data={"expected_head_sha": expected_head})

    async def request_reviewers(self, number: int, reviewers: list[str]) -> None:
        with refusals(f"request reviews from {', '.join(reviewers)} on #{number} of {self.repo}",
                      "make them collaborators with read access, or fix `reviewers` in "
                      ".github/questbot.yml"):
            await self.gh.post(f"{self.base}/pulls/{number}/requested_reviewers",
                               data={"reviewers": reviewers})

    async def remove_reviewers(self, number: int, reviewers: list[str]) -> None:
        """``pulls/remove-requested-reviewers``: withdraw pending review requests (one not
        pending changes nothing)."""
        with refusals(f"withdraw the review requests of {', '.join(reviewers)} on #{number} "
                      f"of {self.repo}", "check the App has pull_requests: write"):
            await self.gh.delete(f"{self.base}/pulls/{number}/requested_reviewers",
                                 data={"reviewers": reviewers})

    async def add_assignees(self, number: int, logins: list[str]) -> tuple[str, ...]:
        """``issues/add-assignees`` on issue or pull request ``number``: the assignees GitHub
        shows afterwards. GitHub silently leaves out a login that cannot be assigned (no push
        access, not the author: BEHAVIOUR §8), so the caller looks for it in the answer."""
        with refusals(f"assign {', '.join(logins)} to #{number} of {self.repo}",
                      "check the App has pull_requests: write (or issues: write)"):
            data = await self.gh.post(f"{self.base}/issues/{number}/assignees",
                                      data={"assignees": logins})
        return tuple(str(u.get("login") or "") for u in data.get("assignees") or ())

    async def remove_assignees(self, number: int, logins: list[str]) -> None:
        """``issues/remove-assignees`` (one not assigned changes nothing)."""
        with refusals(f"unassign {', '.join(logins)} from #{number} of {self.repo}",
                      "check the App has pull_requests: write (or issues: write)"):
            await self.gh.delete(f"{self.base}/issues/{number}/assignees",
                                 data={"assignees": logins})

    # -- check runs (checks/create, checks/update, checks/list-for-ref) --------------------

    async def find_check_run(self, sha: str, external_id: str) -> CheckRun | None:
        """The newest ``questbot`` check run on ``sha`` for this quest, if any: every run of
        that name (``filter=all``, not only the latest of each), every page."""
        runs = [run for run in await self.check_runs(sha, name=CHECK_NAME, latest=False)
                if run.external_id == external_id]
        return max(runs, key=lambda r: r.id) if runs else None

    async def check_runs(self, sha: str, *, name: str | None = None,
                         latest: bool = True) -> list[CheckRun]:
        """``checks/list-for-ref``, every page: the check runs GitHub has for ``sha`` (named
        ``name``, when given; only the latest of each name unless ``latest`` is false)."""
        query: dict[str, str | int] = {"filter": "latest" if latest else "all",
                                       "per_page": PER_PAGE}
        template = f"{self.base}/commits/{sha}/check-runs{{?filter,per_page}}"
        if name is not None:
            query["check_name"] = name
            template = f"{self.base}/commits/{sha}/check-runs{{?check_name,filter,per_page}}"
        return [CheckRun.of(r) async for r in self.gh.getiter(template, query,
                                                              iterable_key="check_runs")]

    async def create_check_run(self, body: dict[str, Any]) -> CheckRun:
        with refusals(f"create the questbot check run on {str(body.get('head_sha'))[:12]} "
                      f"in {self.repo}", "check the App has checks: write permission"):
            return CheckRun.of(await self.gh.post(f"{self.base}/check-runs",
                                                  data=fit_check_run(body)))

    async def update_check_run(self, run_id: int, body: dict[str, Any]) -> CheckRun:
        with refusals(f"update check run {run_id} in {self.repo}",
                      "check the App has checks: write permission"):
            return CheckRun.of(await self.gh.patch(f"{self.base}/check-runs/{run_id}",
                                                  data=fit_check_run(body)))

    # -- issues and comments ---------------------------------------------------------------

    async def comment(self, number: int, body: str) -> Comment:
        with refusals(f"comment on #{number} of {self.repo}",
                      "check the issue exists, is not locked, and the App may write issues"):
            data = await self.gh.post(f"{self.base}/issues/{number}/comments",
                                      data={"body": fit(body)})
        return Comment.of(data)

    async def find_comment(self, number: int, marker: str, *,
                           author: str | None = None) -> Comment | None:
        """``issues/list-comments``, every page: the first comment on ``number`` (by
        ``author``, when given — a person quoting questbot's comment quotes its marker too)
        whose body holds ``marker`` (a hidden ``<!-- questbot:… -->`` line), or ``None``."""
        with refusals(f"list the comments of #{number} of {self.repo}",
                      "check the issue exists and the App may read issues"):
            async for data in self.gh.getiter(f"{self.base}/issues/{number}/comments"
                                              "{?per_page}", {"per_page": PER_PAGE}):
                comment = Comment.of(data)
                if marker in comment.body and (author is None
                                               or comment.author.lower() == author.lower()):
                    return comment
        return None

    async def edit_comment(self, comment_id: int, body: str) -> Comment | None:
        """Edit a comment; ``None`` if it is gone (deleted by a person), so the caller can
        post a fresh one."""
        try:
            data = await self.gh.patch(f"{self.base}/issues/comments/{comment_id}",
                                       data={"body": fit(body)})
        except gidgethub.BadRequest as exc:
            if status_of(exc) == 404:
                return None
            if is_permanent(exc):
                raise refused(exc, f"edit comment {comment_id} in {self.repo}",
                              "questbot can only edit its own comments") from exc
            raise
        return Comment.of(data)

    async def react(self, comment_id: int, content: str) -> None:
        """``reactions/create-for-issue-comment``; GitHub answers 200 for a repeat, so this is
        idempotent by nature."""
        with refusals(f"react {content} to comment {comment_id} in {self.repo}",
                      "the comment may have been deleted"):
            await self.gh.post(f"{self.base}/issues/comments/{comment_id}/reactions",
                               data={"content": content})

    async def find_issue(self, creator: str, marker: str) -> Issue | None:
        """``issues/list-for-repo`` by ``creator``, open and closed, oldest first, every page:
        the first issue (not pull request) ``creator`` opened whose body holds ``marker``."""
        with refusals(f"list the issues {creator} opened in {self.repo}",
                      "check the App has issues: read"):
            async for data in self.gh.getiter(
                    f"{self.base}/issues{{?creator,state,sort,direction,per_page}}",
                    {"creator": creator, "state": "all", "sort": "created",
                     "direction": "asc", "per_page": PER_PAGE}):
                issue = Issue.of(data)
                if ("pull_request" not in data and issue.author.lower() == creator.lower()
                        and marker in issue.body):
                    return issue
        return None

    async def create_issue(self, title: str, body: str) -> Issue:
        with refusals(f"open the issue {title!r} in {self.repo}",
                      "turn issues on for the repository and give the App issues: write"):
            data = await self.gh.post(f"{self.base}/issues", data={"title": title,
                                                                   "body": fit(body)})
        return Issue.of(data)

    async def edit_issue(self, number: int, body: str, *, reopen: bool = False) -> Issue | None:
        """Replace an issue's body (``issues/update``), and with ``reopen`` open it again if a
        person closed it — one request either way; ``None`` if the issue is gone."""
        change: dict[str, Any] = {"body": fit(body)}
        if reopen:
            change["state"] = "open"
        try:
            data = await self.gh.patch(f"{self.base}/issues/{number}", data=change)
        except gidgethub.BadRequest as exc:
            if status_of(exc) in (404, 410):
                return None
            if is_permanent(exc):
                raise refused(exc, f"edit issue #{number} of {self.repo}",
                              "give the App issues: write") from exc
            raise
        return Issue.of(data)

    # -- the repository (repos/get), contents (repos/get-content) and permissions ------

    async def repository(self) -> RepoInfo:
        """``repos/get``: the merge methods and auto-merge its settings allow."""
        with refusals(f"read the settings of {self.repo}", "check the App is installed on it "
                      "with metadata: read"):
            return RepoInfo.of(await self.gh.getitem(self.base))

    async def file(self, path: str, ref: str) -> FileContent | None:
        """``repos/get-content``: a file's text at ``ref``, or ``None`` if there is no such
        file. Repeated reads are conditional when the client has gidgethub's ``cache=``
        (GitHub answers 304 without spending rate limit)."""
        try:
            data = await self.gh.getitem(f"{self.base}/contents/{path}{{?ref}}", {"ref": ref})
        except gidgethub.BadRequest as exc:
            if status_of(exc) == 404:
                return None
            if is_permanent(exc):
                raise refused(exc, f"read {path} at {ref} in {self.repo}",
                              "give the App contents: read") from exc
            raise
        if not isinstance(data, dict) or data.get("type") != "file":
            return None  # a directory of that name is not a settings file
        text = base64.b64decode(data.get("content") or "").decode("utf-8", errors="replace")
        return FileContent(text, str(data.get("sha") or ""))

    async def permission(self, login: str) -> str:
        """``repos/get-collaborator-permission-level``: ``admin``, ``maintain``, ``write``,
        ``triage``, ``read`` or ``none`` (GitHub's 404: not a collaborator at all)."""
        try:
            answer = await self.gh.getitem(f"{self.base}/collaborators/{login}/permission")
        except gidgethub.BadRequest as exc:
            if status_of(exc) != 404:
                raise
            return "none"
        return str(answer.get("permission") or "none")
