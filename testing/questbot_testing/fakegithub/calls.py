"""The types handlers share: one request as a handler sees it, its reply, and GitHub's errors."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from questbot_testing.fakegithub.render import Renderer
from questbot_testing.fakegithub.state import Repository, World

if TYPE_CHECKING:
    from questbot_testing.fakegithub.server import FakeGitHub

DOCS = "https://docs.github.com/rest"


@dataclass
class Reply:
    """A handler's answer: JSON ``body`` unless ``raw`` bytes are given."""

    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None
    content_type: str = "application/json; charset=utf-8"


ARCHIVED = "Repository was archived so is read-only."
"""GitHub's answer (403) to a write to an archived repository (BEHAVIOUR §23)."""
SUSPENDED = "This installation has been suspended"
"""GitHub's answer (403) to a token of a suspended installation, or to minting one (§23)."""


class GitHubError(Exception):
    """An error answer in GitHub's shape: ``{"message", "documentation_url", "status"}``."""

    def __init__(self, status: int, message: str, *, errors: list[Any] | None = None,
                 headers: dict[str, str] | None = None, documentation_url: str = DOCS) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.errors = errors
        self.headers = dict(headers or {})
        self.documentation_url = documentation_url

    def reply(self) -> Reply:
        body: dict[str, Any] = {
            "message": self.message,
            "documentation_url": self.documentation_url,
            "status": str(self.status),
        }
        if self.errors is not None:
            body["errors"] = self.errors
        return Reply(self.status, body, headers=dict(self.headers))


def not_found() -> GitHubError:
    return GitHubError(404, "Not Found")


@dataclass
class Call:
    """A validated, authenticated request on its way to a handler."""

    fake: FakeGitHub
    params: dict[str, str]
    query: dict[str, str]
    body: Any
    repo: Repository | None
    installation_id: int | None
    accept: str

    @property
    def world(self) -> World:
        return self.fake.world

    @property
    def render(self) -> Renderer:
        return self.fake.render

    @property
    def repository(self) -> Repository:
        """The repository of a ``/repos/{owner}/{repo}/...`` call (checked by the server)."""
        assert self.repo is not None
        return self.repo

    def int_param(self, name: str) -> int:
        return int(self.params[name])


Handler = Callable[[Call], Awaitable[Reply]]
