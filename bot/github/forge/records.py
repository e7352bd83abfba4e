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
        )


@dataclass(frozen=True, slots=True)
class CheckRun:
    id: int
    head_sha: str
    status: str
    conclusion: str | None
    external_id: str
    html_url: str
    name: str = ""

    @classmethod
    def of(cls, data: dict[str, Any]) -> CheckRun:
        return cls(int(data["id"]), str(data["head_sha"]), str(data["status"]),
                   data.get("conclusion"), str(data.get("external_id") or ""),
                   str(data.get("html_url") or ""), str(data.get("name") or ""))


@dataclass(frozen=True, slots=True)
class Comment:
    id: int
    html_url: str
    body: str = ""
    author: str = ""

    @classmethod
    def of(cls, data: dict[str, Any]) -> Comment:
        return cls(int(data["id"]), str(data.get("html_url") or ""), str(data.get("body") or ""),
                   str((data.get("user") or {}).get("login") or ""))


@dataclass(frozen=True, slots=True)
class Issue:
    number: int
    state: str
    author: str
    body: str = ""

    @classmethod
    def of(cls, data: dict[str, Any]) -> Issue:
        return cls(int(data["number"]), str(data.get("state") or ""),
                   str((data.get("user") or {}).get("login") or ""), str(data.get("body") or ""))


@dataclass(frozen=True, slots=True)
class FileContent:
    text: str
    sha: str
