"""The fields questbot reads from GitHub's answers, as small frozen records.

The Forge hands these out instead of raw JSON, so no adapter indexes into a response.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


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
    requested_reviewers: tuple[str, ...] = ()
    node_id: str = ""
    """The global id GraphQL takes as ``pullRequestId``."""
    auto_merge: str | None = None
    """The merge method auto-merge will use (``merge``, ``squash``, ``rebase``), while on."""
    mergeable_state: str = "unknown"
    """``clean``, ``blocked``, ``dirty``, … (BEHAVIOUR §5); ``pulls/get`` only."""
    head_repo: str = ""
    """The repository the head branch is in (``head.repo.full_name``): another one's for a
    pull request from a fork; empty when GitHub gives none (the fork was deleted)."""
    assignees: tuple[str, ...] = ()
    repo_node: str = ""
    """The base repository's global id (``base.repo.node_id``): what GraphQL's check-run
    mutations take as ``repositoryId``."""

    @classmethod
    def of(cls, data: dict[str, Any]) -> Pull:
        """From ``pulls/get`` or a listing's ``pull-request-simple``, which has ``merged_at``
        but no ``merged``."""
        return cls(
            number=int(data["number"]), html_url=str(data.get("html_url") or ""),
            head_ref=str(data["head"]["ref"]), head_sha=str(data["head"]["sha"]),
            base_ref=str(data["base"]["ref"]), base_sha=str(data["base"]["sha"]),
            author=str((data.get("user") or {}).get("login") or ""),
            draft=bool(data.get("draft")),
            merged=bool(data.get("merged") or data.get("merged_at")),
            merge_commit_sha=data.get("merge_commit_sha"), state=str(data.get("state")),
            requested_reviewers=tuple(str(u.get("login") or "") for u in
                                      data.get("requested_reviewers") or ()),
            node_id=str(data.get("node_id") or ""),
            auto_merge=(str((data.get("auto_merge") or {}).get("merge_method") or "merge")
                        if data.get("auto_merge") else None),
            mergeable_state=str(data.get("mergeable_state") or "unknown"),
            head_repo=str((data["head"].get("repo") or {}).get("full_name") or ""),
            assignees=tuple(str(u.get("login") or "") for u in data.get("assignees") or ()),
            repo_node=str((data["base"].get("repo") or {}).get("node_id") or ""),
        )


MERGE_METHODS = ("merge", "squash", "rebase")
"""``pulls/merge``'s ``merge_method`` values, in the order questbot prefers them when the
repository allows several and ``.github/questbot.yml`` does not choose."""


@dataclass(frozen=True, slots=True)
class RepoInfo:
    """What ``repos/get`` says about how the repository lets pull requests in."""

    merge_methods: tuple[str, ...]
    """The merge methods its settings allow (``allow_merge_commit``, ``allow_squash_merge``,
    ``allow_rebase_merge``; GitHub's default for each is true), in ``MERGE_METHODS`` order."""
    auto_merge: bool = False
    """``allow_auto_merge`` (GitHub's default: false)."""

    @classmethod
    def of(cls, data: dict[str, Any]) -> RepoInfo:
        flags = {"merge": "allow_merge_commit", "squash": "allow_squash_merge",
                 "rebase": "allow_rebase_merge"}
        return cls(tuple(m for m in MERGE_METHODS if data.get(flags[m], True) is not False),
                   bool(data.get("allow_auto_merge")))


@dataclass(frozen=True, slots=True)
class CheckRun:
    id: int
    head_sha: str
    status: str
    conclusion: str | None
    external_id: str
    html_url: str
    name: str = ""
    node_id: str = ""
    """The global id GraphQL's ``updateCheckRun`` takes (``bot.github.forge.batch``)."""

    @classmethod
    def of(cls, data: dict[str, Any]) -> CheckRun:
        return cls(int(data["id"]), str(data["head_sha"]), str(data["status"]),
                   data.get("conclusion"), str(data.get("external_id") or ""),
                   str(data.get("html_url") or ""), str(data.get("name") or ""),
                   str(data.get("node_id") or ""))


@dataclass(frozen=True, slots=True)
class Comment:
    id: int
    html_url: str
    body: str = ""
    author: str = ""
    node_id: str = ""
    """The global id GraphQL's ``updateIssueComment`` takes (``bot.github.forge.batch``)."""

    @classmethod
    def of(cls, data: dict[str, Any]) -> Comment:
        return cls(int(data["id"]), str(data.get("html_url") or ""), str(data.get("body") or ""),
                   str((data.get("user") or {}).get("login") or ""),
                   str(data.get("node_id") or ""))


@dataclass(frozen=True, slots=True)
class Issue:
    number: int
    state: str
    author: str
    body: str = ""
    node_id: str = ""
    """The global id GraphQL takes (``pinIssue``)."""

    @classmethod
    def of(cls, data: dict[str, Any]) -> Issue:
        return cls(int(data["number"]), str(data.get("state") or ""),
                   str((data.get("user") or {}).get("login") or ""), str(data.get("body") or ""),
                   str(data.get("node_id") or ""))


@dataclass(frozen=True, slots=True)
class FileContent:
    text: str
    sha: str
