"""What the fake's own tests share: a repository, a token, and a way to read GitHub's answer.

``answer`` sends one request as the App and returns GitHub's status and JSON body, so a test
can compare both with what BEHAVIOUR.md says GitHub answers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from questbot_testing.fakegithub import FakeGitHub

REPO = "octo-org/rules"
OWNER = "octo-org"


@pytest.fixture
async def fake() -> AsyncIterator[FakeGitHub]:
    async with FakeGitHub() as server:
        server.create_repository(REPO, {"README.md": "hello\n", "src/app.py": "x = 1\n"})
        server.set_permission(REPO, "alice", "write")
        yield server


@pytest.fixture
async def answer(fake: FakeGitHub) -> AsyncIterator[Any]:
    token = fake.installation_token(fake.repo(REPO).installation_id)
    async with aiohttp.ClientSession() as session:

        async def send(method: str, path: str, body: Any = None, *,
                       accept: str = "application/vnd.github+json") -> tuple[int, Any]:
            headers = {"Authorization": f"token {token}", "Accept": accept}
            async with session.request(method, fake.url + path, json=body,
                                       headers=headers) as response:
                if response.content_type == "application/json":
                    return response.status, await response.json()
                return response.status, await response.read()

        yield send


def error_of(body: Any) -> dict[str, Any]:
    """The one ``errors`` entry of a 422 ``Validation Failed``."""
    assert body["message"] == "Validation Failed", body
    (error,) = body["errors"]
    assert isinstance(error, dict)
    return error
