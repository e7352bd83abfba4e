"""Prometheus metrics, on a registry of their own.

prometheus-client's default registry is process-global: two apps in one test process would
count into the same series, and registering a metric twice raises. ``Metrics`` owns a
``CollectorRegistry`` instead, so each app (and each test) has its own numbers, and
``render()`` is what ``GET /metrics`` serves.

Label values are bounded on purpose. ``event`` is GitHub's event name only once the signature
has been checked; a request that fails the check (or is too large to check) is counted under
``event="unverified"``, so nobody without the secret can mint new series by sending made-up
``X-GitHub-Event`` headers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import StrEnum

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

UNVERIFIED_EVENT = "unverified"
"""The ``event`` label of deliveries whose ``X-GitHub-Event`` header cannot be trusted."""


class Outcome(StrEnum):
    """What ``POST /webhook`` did with a delivery."""

    ACCEPTED = "accepted"
    """Journaled to the inbound stream; answered 202."""
    DUPLICATE = "duplicate"
    """A delivery id already journaled (a redelivery); nothing new written."""
    IGNORED = "ignored"
    """A genuine event questbot does not subscribe to; acknowledged, not journaled."""
    PING = "ping"
    """GitHub's ``ping`` on webhook creation; answered 200."""
    BAD_SIGNATURE = "bad_signature"
    """``X-Hub-Signature-256`` missing or wrong; answered 401."""
    MALFORMED = "malformed"
    """Signed, but a required header is missing or the body is not a JSON object; 400."""
    TOO_LARGE = "too_large"
    """Body over the cap; answered 413 without reading it all."""
    TIMED_OUT = "timed_out"
    """Body not sent within a few seconds (``bot.web.ingress``); answered 408 and closed."""
    UNAVAILABLE = "unavailable"
    """Redis could not store it (or not durably in time); answered 503."""


class Metrics:
    """The process's metrics. The web process counts deliveries; the worker sets the quest
    gauge, times effect deliveries, records the GitHub rate limit it sees and counts what its
    redelivery reconciler recovered (``bot.worker.redelivery``); both count their Redis
    connection errors and reconnects (``bot.journal.wire.connect``)."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        self.deliveries = Counter(
            "questbot_webhook_deliveries", "Webhook deliveries by event and outcome.",
            ["event", "outcome"], registry=r,
        )
        self.webhook_seconds = Histogram(
            "questbot_webhook_seconds", "Time from request to answer on POST /webhook.",
            buckets=(0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
            registry=r,
        )
        self.inbound_batch = Histogram(
            "questbot_inbound_batch_size", "Deliveries stored per Redis round trip "
            "(group commit).", buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256), registry=r,
        )
        self.quests = Gauge(
            "questbot_quests", "Quests by lifecycle state.", ["state"], registry=r,
        )
        self.effect_seconds = Histogram(
            "questbot_effect_delivery_seconds", "Time to deliver one effect, by effect type.",
            ["effect"], buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300),
            registry=r,
        )
        self.effect_failures = Counter(
            "questbot_effect_failures", "Failed effect deliveries, by effect type.",
            ["effect"], registry=r,
        )
        self.rate_limit_remaining = Gauge(
            "questbot_github_rate_limit_remaining",
            "GitHub REST requests left in the current rate-limit window, per installation.",
            ["installation"], registry=r,
        )
        self.redis_errors = Counter(
            "questbot_redis_connection_errors", "Connection errors and timeouts talking to "
            "Redis, by process; each closes the connection, and the command is tried again on "
            "a new one.", ["process"],
            registry=r,
        )
        self.redis_reconnects = Counter(
            "questbot_redis_reconnects", "Redis commands that succeeded on a new connection "
            "after the previous one failed (a restart, a failover, a dropped connection), by "
            "process.", ["process"],
            registry=r,
        )
        self.redeliveries = Counter(
            "questbot_webhook_redeliveries", "Webhook deliveries questbot never stored, by "
            "event and what the worker's reconciler did: requested (asked GitHub to redeliver), "
            "recovered (stored since), refused (GitHub would not), given_up (still not stored "
            "after its last try).", ["event", "result"], registry=r,
        )
        self.redelivery_passes = Counter(
            "questbot_webhook_redelivery_passes", "Passes of the redelivery reconciler, by "
            "outcome (failed: GitHub's delivery log could not be read or written to).",
            ["outcome"], registry=r,
        )
        self.redelivery_pending = Gauge(
            "questbot_webhook_redelivery_pending", "Deliveries asked for again and neither "
            "stored nor given up yet, as the last pass left them.", registry=r,
        )
        self.review_agreement = Counter(
            "questbot_review_agreement", "People's decisions at a checkpoint where questbot's "
            "automatic reviewer had reached a verdict first (advisory checkpoints, shadow "
            "mode), by repository and whether the two agreed.", ["repo", "agreed"], registry=r,
        )
        self.inbound_backlog = Gauge(
            "questbot_inbound_backlog", "Webhook deliveries stored and not yet handled by a "
            "worker (every inbound shard), read when /metrics is scraped.", registry=r,
        )
        self.inbound_dead = Gauge(
            "questbot_inbound_dead_letters", "Deliveries moved to the dead letters after "
            "failing every try (every inbound shard), read when /metrics is scraped.",
            registry=r,
        )
        self.model_tokens = Counter(
            "questbot_repository_model_tokens", "Tokens used by model runs that belong to a "
            "repository rather than a quest (the reflection writer and reviewer), by "
            "repository and kind; each run counted once (bot.journal.model_use).",
            ["repo", "kind"], registry=r,
        )
        self.model_cost_cents = Counter(
            "questbot_repository_model_cost_cents", "What those runs cost, in whole US cents "
            "rounded up, by repository and kind.", ["repo", "kind"], registry=r,
        )
        self.model_endpoint = Gauge(
            "questbot_model_endpoint", "What questbot sends its model endpoint, chosen at start "
            "by the probe and changed when the endpoint refuses (1 for the choice in force): "
            "tool_choice required|auto, content null|empty, output_limit max_tokens|"
            "max_completion_tokens.", ["setting", "value"], registry=r,
        )
        self.model_context_window = Gauge(
            "questbot_model_context_window_tokens", "The context window questbot keeps its "
            "model requests within (0: none known).", registry=r,
        )
        self.model_events = Counter(
            "questbot_model_requests_retried", "Model requests tried again (kind retry, by "
            "what went wrong: timeout, connection, rate_limit, overloaded, http_5xx …), given "
            "up on after the budget (gave_up), refused for good (refused; what truncated: the "
            "endpoint cut the conversation without saying so), adaptations learned "
            "from a refusal (adapted: tool_choice, null_content, context_window) and tool calls "
            "read from text (text_tool_calls).", ["kind", "what"], registry=r,
        )
        self._model_values: dict[str, str] = {}
        self._quest_states: set[str] = set()
        self._delivery_counters: dict[tuple[str, Outcome], Counter] = {}

    def delivery(self, event: str, outcome: Outcome) -> None:
        # ``labels()`` validates and looks the child up under a lock on every call; the
        # children are kept here instead (the label values are bounded, see the module doc).
        key = (event, outcome)
        counter = self._delivery_counters.get(key)
        if counter is None:
            counter = self.deliveries.labels(event=event, outcome=outcome.value)
            self._delivery_counters[key] = counter
        counter.inc()

    def set_quest_counts(self, counts: Mapping[str, int]) -> None:
        """Set the quest gauge to ``counts`` (state → number); a state counted before and
        absent now drops to 0 rather than keeping its last value."""
        for state in self._quest_states - counts.keys():
            self.quests.labels(state=state).set(0)
        for state, count in counts.items():
            self.quests.labels(state=state).set(count)
        self._quest_states |= set(counts)

    def effect_delivered(self, effect: str, seconds: float, *, ok: bool = True) -> None:
        """Record one delivery attempt of an effect of type ``effect``."""
        self.effect_seconds.labels(effect=effect).observe(seconds)
        if not ok:
            self.effect_failures.labels(effect=effect).inc()

    def redis_hooks(self, process: str) -> tuple[Callable[[], None], Callable[[], None]]:
        """The ``on_error`` and ``on_reconnect`` of ``bot.journal.wire.connect`` for
        ``process`` (``web`` or ``worker``): one pair of series per process."""
        return (self.redis_errors.labels(process=process).inc,
                self.redis_reconnects.labels(process=process).inc)

    def model_used(self, repo: str, kind: str, tokens: int, cents: int) -> None:
        """Count one repository-level model run (already counted once in Redis)."""
        self.model_tokens.labels(repo=repo.lower(), kind=kind).inc(tokens)
        self.model_cost_cents.labels(repo=repo.lower(), kind=kind).inc(cents)

    def model_event(self, kind: str, what: str) -> None:
        """One retry, refusal, adaptation or text call of a model request (bounded labels)."""
        self.model_events.labels(kind=kind, what=what[:40]).inc()

    def model_chosen(self, settings: Mapping[str, str], context_window: int | None) -> None:
        """What questbot sends its endpoint now: one value per setting is 1, the others 0."""
        for setting, value in settings.items():
            was = self._model_values.get(setting)
            if was is not None and was != value:
                self.model_endpoint.labels(setting=setting, value=was).set(0)
            self._model_values[setting] = value
            self.model_endpoint.labels(setting=setting, value=value).set(1)
        self.model_context_window.set(context_window or 0)

    def set_rate_limit(self, remaining: int, installation: str | int = "app") -> None:
        self.rate_limit_remaining.labels(installation=str(installation)).set(remaining)

    def render(self) -> bytes:
        """The registry in the Prometheus text exposition format."""
        return generate_latest(self.registry)

    content_type: str = CONTENT_TYPE_LATEST
