"""Which delivery failures the worker retries and which it drops (with a log line)."""

from __future__ import annotations

import http

import gidgethub
import redis.exceptions

from bot.github.auth import InstallationTokenError
from bot.github.client import NotInstalled
from bot.worker import permanent


def test_refusals_are_permanent_and_transient_failures_are_retried() -> None:
    assert permanent(NotInstalled("no installation"))
    assert permanent(InstallationTokenError("gone", installation_id=1, status=404))
    assert permanent(gidgethub.BadRequest(http.HTTPStatus(422)))
    assert not permanent(InstallationTokenError("down", installation_id=1, status=502))
    assert not permanent(gidgethub.GitHubBroken(http.HTTPStatus(502)))
    assert not permanent(redis.exceptions.ConnectionError("redis went away"))
    assert not permanent(ConnectionResetError())
