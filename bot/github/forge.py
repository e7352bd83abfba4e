"""Thin, typed calls over gidgethub for the GitHub writes questbot's effects make.

Each function is one REST operation of ``../shared/github/rest-subset.openapi.json`` (named in
its docstring) and returns a small frozen record of the fields questbot reads, so the adapters
never index into raw JSON. Refusals that retrying cannot fix — a 403 that is not a rate limit,
a 404, a 422 — become ``bot.journal.PermanentError`` through ``refused``, with a message saying
what happened, to what, and what to do; everything else (5xx, rate limits that outlast the
client's patience, network errors) propagates and the effect runner retries it.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import gidgethub
from gidgethub.abc import GitHubAPI

from bot.journal import PermanentError

CHECK_NAME = "questbot"
PERMANENT_STATUSES = frozenset({403, 404, 422})


def status_of(exc: gidgethub.HTTPException) -> int:
    return int(exc.status_code)


def refused(exc: gidgethub.HTTPException, what: str, todo: str) -> PermanentError:
    """A ``PermanentError`` for a GitHub refusal of ``what``, saying what to do about it."""
    return PermanentError(f"github refused to {what} (HTTP {status_of(exc)}: {exc}); {todo}")


def is_permanent(exc: Exception) -> bool:
    return (isinstance(exc, gidgethub.BadRequest)
            and not isinstance(exc, gidgethub.RateLimitExceeded)
            and status_of(exc) in PERMANENT_STATUSES)


@contextmanager
def refusals(what: str, todo: str) -> Iterator[None]:
    """Inside, a permanent GitHub refusal becomes ``refused(exc, what, todo)``; anything else
    (a 5xx, a rate limit) goes through unchanged, for a retry."""
    try:
        yield
    except gidgethub.BadRequest as exc:
        if is_permanent(exc):
            raise refused(exc, what, todo) from exc
        raise


@dataclass(frozen=True, slots=True)
class Pull:
    number: int
    html_url: str
    head_ref: str
    head_sha: str
    base_ref: str
    base_sha: str
    author: str
    draft: bool
    merged: bool
    merge_commit_sha: str | None
    state: str

    @classmethod
    def of(cls, data: dict[str, Any]) -> Pull:
        return cls(
            number=int(data["number"]), html_url=str(data.get("html_url") or ""),
            head_ref=str(data["head"]["ref"]), head_sha=str(data["head"]["sha"]),
            base_ref=str(data["base"]["ref"]), base_sha=str(data["base"]["sha"]),
            author=str((data.get("user") or {}).get("login") or ""),
            draft=bool(data.get("draft")), merged=bool(data.get("merged")),
            merge_commit_sha=data.get("merge_commit_sha"), state=str(data.get("state")),
        )


@dataclass(frozen=True, slots=True)
class CheckRun:
    id: int
    head_sha: str
    status: str
    conclusion: str | None
    external_id: str
    html_url: str


def _check_run(data: dict[str, Any]) -> CheckRun:
    return CheckRun(int(data["id"]), str(data["head_sha"]), str(data["status"]),
                    data.get("conclusion"), str(data.get("external_id") or ""),
                    str(data.get("html_url") or ""))


@dataclass(frozen=True, slots=True)
class Comment:
    id: int
    html_url: str


@dataclass(frozen=True, slots=True)
class FileContent:
    text: str
    sha: str


class Forge:
    """One repository, through one installation client."""

    def __init__(self, gh: GitHubAPI, repo: str) -> None:
        self.gh = gh
        self.repo = repo
        self.base = f"/repos/{repo}"

    # -- refs (git/get-ref, git/create-ref, git/update-ref) --------------------------------

    async def ref_sha(self, branch: str) -> str | None:
        """``git/get-ref``: the commit a branch points at, or ``None`` if it does not exist."""
        try:
            data = await self.gh.getitem(f"{self.base}/git/ref/heads/{branch}")
        except gidgethub.BadRequest as exc:
            if status_of(exc) == 404:
                return None
            raise
        return str(data["object"]["sha"])

    async def ensure_branch(self, branch: str, sha: str) -> str:
        """The branch's commit, creating it at ``sha`` if missing (``git/create-ref``)."""
        found = await self.ref_sha(branch)
        if found is not None:
            return found
        try:
            data = await self.gh.post(f"{self.base}/git/refs",
                                      data={"ref": f"refs/heads/{branch}", "sha": sha})
        except gidgethub.BadRequest as exc:
            if status_of(exc) == 422:  # created meanwhile by another runner: read it back
                again = await self.ref_sha(branch)
                if again is not None:
                    return again
            raise refused(exc, f"create branch {branch} at {sha[:12]} in {self.repo}",
                          "check that the commit exists and questbot may write contents") from exc
        return str(data["object"]["sha"])

    # -- pull requests (pulls/create, pulls/get, pulls/merge, pulls/update-branch) ---------

    async def create_pull(self, *, head: str, base: str, title: str, body: str,
                          draft: bool) -> Pull:
        data = await self.gh.post(f"{self.base}/pulls", data={
            "head": head, "base": base, "title": title, "body": body, "draft": draft})
        return Pull.of(data)

    async def pull(self, number: int) -> Pull:
        with refusals(f"read pull request #{number} of {self.repo}",
                      "it may have been deleted; /kill the quest or reopen it"):
            return Pull.of(await self.gh.getitem(f"{self.base}/pulls/{number}"))

    async def merge(self, number: int, sha: str, title: str) -> str:
        """``pulls/merge`` pinned to ``sha``; returns the merge commit. Raises gidgethub's
        errors unchanged: the caller tells 405 (not mergeable) from 409 (head moved)."""
        data = await self.gh.put(f"{self.base}/pulls/{number}/merge",
                                 data={"sha": sha, "merge_method": "merge",
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

    # -- check runs (checks/create, checks/update, checks/list-for-ref) --------------------

    async def find_check_run(self, sha: str, external_id: str) -> CheckRun | None:
        """The newest ``questbot`` check run on ``sha`` for this quest, if any."""
        data = await self.gh.getitem(f"{self.base}/commits/{sha}/check-runs",
                                     {"check_name": CHECK_NAME, "filter": "all"})
        runs = [_check_run(r) for r in data.get("check_runs", [])
                if str(r.get("external_id") or "") == external_id]
        return max(runs, key=lambda r: r.id) if runs else None

    async def create_check_run(self, body: dict[str, Any]) -> CheckRun:
        with refusals(f"create the questbot check run on {str(body.get('head_sha'))[:12]} "
                      f"in {self.repo}", "check the App has checks: write permission"):
            return _check_run(await self.gh.post(f"{self.base}/check-runs", data=body))

    async def update_check_run(self, run_id: int, body: dict[str, Any]) -> CheckRun:
        with refusals(f"update check run {run_id} in {self.repo}",
                      "check the App has checks: write permission"):
            return _check_run(await self.gh.patch(f"{self.base}/check-runs/{run_id}",
                                                  data=body))

    # -- issues and comments ---------------------------------------------------------------

    async def comment(self, number: int, body: str) -> Comment:
        with refusals(f"comment on #{number} of {self.repo}",
                      "check the issue exists, is not locked, and the App may write issues"):
            data = await self.gh.post(f"{self.base}/issues/{number}/comments",
                                      data={"body": body})
        return Comment(int(data["id"]), str(data.get("html_url") or ""))

    async def edit_comment(self, comment_id: int, body: str) -> Comment | None:
        """Edit a comment; ``None`` if it is gone (deleted by a person), so the caller can
        post a fresh one."""
        try:
            data = await self.gh.patch(f"{self.base}/issues/comments/{comment_id}",
                                       data={"body": body})
        except gidgethub.BadRequest as exc:
            if status_of(exc) == 404:
                return None
            if is_permanent(exc):
                raise refused(exc, f"edit comment {comment_id} in {self.repo}",
                              "questbot can only edit its own comments") from exc
            raise
        return Comment(int(data["id"]), str(data.get("html_url") or ""))

    async def react(self, comment_id: int, content: str) -> None:
        """``reactions/create-for-issue-comment``; GitHub answers 200 for a repeat, so this is
        idempotent by nature."""
        with refusals(f"react {content} to comment {comment_id} in {self.repo}",
                      "the comment may have been deleted"):
            await self.gh.post(f"{self.base}/issues/comments/{comment_id}/reactions",
                               data={"content": content})

    async def create_issue(self, title: str, body: str) -> int:
        with refusals(f"open the issue {title!r} in {self.repo}",
                      "turn issues on for the repository and give the App issues: write"):
            data = await self.gh.post(f"{self.base}/issues", data={"title": title,
                                                                   "body": body})
        return int(data["number"])

    async def edit_issue(self, number: int, body: str) -> bool:
        """Replace an issue's body; ``False`` if the issue is gone."""
        try:
            await self.gh.patch(f"{self.base}/issues/{number}", data={"body": body})
        except gidgethub.BadRequest as exc:
            if status_of(exc) in (404, 410):
                return False
            if is_permanent(exc):
                raise refused(exc, f"edit issue #{number} of {self.repo}",
                              "give the App issues: write") from exc
            raise
        return True

    # -- Git data (git/create-commit) and contents (repos/get-content) ---------------------

    async def create_commit(self, *, tree: str, parents: list[str], message: str) -> str:
        data = await self.gh.post(f"{self.base}/git/commits",
                                  data={"tree": tree, "parents": parents, "message": message})
        return str(data["sha"])

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
