"""``python -m bot review request QUEST_ID --role ROLE`` against a real Redis: the capability
printed once opens the review; a role asked for the wrong gate is refused with exit 2."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import redis.asyncio

from bot.__main__ import main
from bot.core import State
from bot.journal import Journal
from bot.reviews.capabilities import Capabilities
from tests.reviews.stored import QUEST, stored


async def test_the_printed_capability_opens_the_review(
        redis_url: str, redis_async: redis.asyncio.Redis,
        capsys: pytest.CaptureFixture[str]) -> None:
    await stored(Journal(redis_async), State.PLANNED)
    code = await asyncio.to_thread(main, ["review", "request", QUEST, "--role",
                                          "design_reviewer", "--redis", redis_url,
                                          "--url", "https://questbot.example"])
    out = capsys.readouterr().out
    assert code == 0
    lines = dict(line.split(" ", 1) for line in out.splitlines()[:2])
    record = await Capabilities(redis_async).verify(lines["review"], lines["capability"])
    assert record.role.value == "design_reviewer" and record.checkpoint.value == "B"
    assert f"POST https://questbot.example/reviews/{lines['review']}/start" in out
    assert "Be adversarial" in out


async def test_a_role_for_another_gate_is_refused(redis_url: str,
                                                  redis_async: redis.asyncio.Redis,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    await stored(Journal(redis_async), State.PLANNED)
    code = await asyncio.to_thread(main, ["review", "request", QUEST, "--role",
                                          "experiment_reviewer", "--redis", redis_url])
    assert code == 2
    assert "checkpoint C" in capsys.readouterr().err


async def test_without_a_public_address_it_says_where_the_review_goes(
        redis_url: str, redis_async: redis.asyncio.Redis, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 24: a capability with nowhere to send it is half an answer; the command says the
    prompt names no address, which endpoints the reviewer calls, and the setting to set."""
    monkeypatch.chdir(tmp_path)  # no .env of the checkout's
    monkeypatch.delenv("QUESTBOT_PUBLIC_URL", raising=False)
    await stored(Journal(redis_async), State.PLANNED)
    code = await asyncio.to_thread(main, ["review", "request", QUEST, "--role",
                                          "design_reviewer", "--redis", redis_url])
    captured = capsys.readouterr()
    assert code == 0 and captured.out.startswith("review ")
    review_id = captured.out.split()[1]
    assert captured.err.startswith("review request: QUESTBOT_PUBLIC_URL is not set")
    assert f"/reviews/{review_id}/start" in captured.err and "--url" in captured.err
    assert "POST https://" not in captured.out


async def test_the_public_address_comes_from_the_env_file_and_is_checked(
        redis_url: str, redis_async: redis.asyncio.Redis, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("QUESTBOT_PUBLIC_URL", raising=False)
    await stored(Journal(redis_async), State.PLANNED)
    (tmp_path / ".env").write_text("QUESTBOT_PUBLIC_URL=https://questbot.example/\n")
    argv = ["review", "request", QUEST, "--role", "design_reviewer", "--redis", redis_url]
    assert await asyncio.to_thread(main, argv) == 0
    captured = capsys.readouterr()
    assert "POST https://questbot.example/reviews/" in captured.out and captured.err == ""
    (tmp_path / ".env").write_text("QUESTBOT_PUBLIC_URL=questbot.example\n")
    assert await asyncio.to_thread(main, argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("review request: QUESTBOT_PUBLIC_URL=questbot.example is not an "
                          "http(s) URL") and err.count("\n") == 1
