"""Every conversation at one endpoint shares one HTTP client in an event loop
(``bot.agent.model.steady.http_client``): a client made and closed by each conversation grew a
worker's memory with every quest (``docs/performance.md``, the soak)."""

from __future__ import annotations

import asyncio

from pydantic import SecretStr

from bot.agent.model import ModelEndpoint, Wire
from bot.agent.model.steady import http_client


def endpoint(url: str) -> ModelEndpoint:
    return ModelEndpoint(wire=Wire.OPENAI, url=url, api_key=SecretStr("sk-test"),
                         model="gpt-4.1-mini")


async def test_many_conversations_share_one_client_which_none_of_them_closes() -> None:
    one = endpoint("http://127.0.0.1:9/v1")
    models = [one.chat_model() for _ in range(200)]
    clients = {id(m._provider.client._client) for m in models}  # type: ignore[attr-defined]
    assert clients == {id(http_client(one.base_url))}
    for model in models[:3]:  # a conversation enters and leaves its model
        async with model:
            pass
    assert not http_client(one.base_url).is_closed
    other = endpoint("http://127.0.0.1:10/v1")
    assert http_client(other.base_url) is not http_client(one.base_url)


def test_each_event_loop_has_its_own() -> None:
    async def client() -> object:
        return http_client("http://127.0.0.1:9/v1")

    assert asyncio.run(client()) is not asyncio.run(client())
    assert http_client("http://127.0.0.1:9/v1") is None  # no loop: the provider makes one
