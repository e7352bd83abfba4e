"""GET /healthz follows Redis; GET /metrics is Prometheus text that counts what happened."""

from __future__ import annotations

import redis.asyncio
from prometheus_client.parser import text_string_to_metric_families

from bot.observe.metrics import Metrics, Outcome
from bot.runner.inbound import Inbound
from questbot_testing.fakegithub.webhooks import build_delivery, signature_headers
from questbot_testing.redis_server import free_port
from tests.web.conftest import SECRET, Client, MakeClient, delivery, post, send


async def test_healthz_is_200_when_redis_answers(client: Client) -> None:
    response = await client.get("/healthz")
    assert response.status == 200
    assert (await response.json())["status"] == "ok"


async def test_healthz_is_503_when_redis_does_not_answer(make_client: MakeClient) -> None:
    dead = redis.asyncio.Redis(port=free_port(), socket_connect_timeout=1)
    client = await make_client(redis=dead, inbound=Inbound(dead))
    response = await client.get("/healthz")
    assert response.status == 503
    assert (await response.json())["status"] == "unavailable"
    await dead.aclose()


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


async def test_metrics_parse_and_count_each_outcome(client: Client, metrics: Metrics) -> None:
    d = delivery("issues", "opened")
    await send(client, d)  # accepted
    await send(client, d)  # duplicate
    await send(client, delivery("ping", "payload.json"))
    await send(client, build_delivery("star", {"action": "created"}, SECRET))  # ignored
    await post(client, d.body, {**d.headers, "X-Hub-Signature-256": "sha256=" + "0" * 64})
    await post(client, b"[]", {**d.headers, **signature_headers(b"[]", SECRET)})  # malformed
    metrics.set_quest_counts({"researching": 2, "ready": 1})
    metrics.set_quest_counts({"ready": 3})
    metrics.effect_delivered("land", 0.2)
    metrics.effect_delivered("land", 1.5, ok=False)
    metrics.set_rate_limit(4999, installation=42)

    response = await client.get("/metrics")
    assert response.status == 200
    assert response.headers["Content-Type"].startswith("text/plain; version=")
    got = samples(await response.text())

    def delivered(event: str, outcome: Outcome) -> float:
        return got[("questbot_webhook_deliveries_total",
                    (("event", event), ("outcome", outcome.value)))]

    assert delivered("issues", Outcome.ACCEPTED) == 1
    assert delivered("issues", Outcome.DUPLICATE) == 1
    assert delivered("ping", Outcome.PING) == 1
    assert delivered("star", Outcome.IGNORED) == 1
    assert delivered("unverified", Outcome.BAD_SIGNATURE) == 1
    assert delivered("issues", Outcome.MALFORMED) == 1
    assert got[("questbot_quests", (("state", "researching"),))] == 0
    assert got[("questbot_quests", (("state", "ready"),))] == 3
    assert got[("questbot_effect_delivery_seconds_count", (("effect", "land"),))] == 2
    assert got[("questbot_effect_failures_total", (("effect", "land"),))] == 1
    assert got[("questbot_github_rate_limit_remaining", (("installation", "42"),))] == 4999
    assert got[("questbot_webhook_seconds_count", ())] == 6
    assert got[("questbot_inbound_batch_size_count", ())] >= 0


async def test_each_metrics_instance_is_its_own_registry() -> None:
    a, b = Metrics(), Metrics()
    a.delivery("issues", Outcome.ACCEPTED)
    assert b"questbot_webhook_deliveries_total{" not in b.render()
    assert b'outcome="accepted"' in a.render()


async def test_the_cached_delivery_counters_count_each_label_pair_apart() -> None:
    m = Metrics()
    for _ in range(3):
        m.delivery("issues", Outcome.ACCEPTED)
    m.delivery("issues", Outcome.DUPLICATE)
    m.delivery("push", Outcome.ACCEPTED)
    got = samples(m.render().decode())

    def delivered(event: str, outcome: Outcome) -> float:
        return got[("questbot_webhook_deliveries_total",
                    (("event", event), ("outcome", outcome.value)))]

    assert delivered("issues", Outcome.ACCEPTED) == 3
    assert delivered("issues", Outcome.DUPLICATE) == 1
    assert delivered("push", Outcome.ACCEPTED) == 1


async def test_metrics_show_the_inbound_backlog_and_dead_letters(
        client: Client, inbound: Inbound) -> None:
    for n in range(3):
        response = await send(client, delivery("issues", "opened", delivery_id=f"m-{n}"))
        assert response.status == 202
    got = samples(await (await client.get("/metrics")).text())
    assert got[("questbot_inbound_backlog", ())] == 3
    assert got[("questbot_inbound_dead_letters", ())] == 0
    (first, *_) = await inbound.read("w1", block_ms=None)
    assert await inbound.failed(first, "cannot be handled", max_tries=1)
    got = samples(await (await client.get("/metrics")).text())
    assert got[("questbot_inbound_backlog", ())] == 2
    assert got[("questbot_inbound_dead_letters", ())] == 1
