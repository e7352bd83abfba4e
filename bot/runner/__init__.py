"""The runner: what moves work along, apart from where it is kept (``bot.journal``).

* ``EffectRunner(journal, adapters, policy).run(stop)`` — deliver every effect in the outboxes
  once, through adapters by type, one quest at a time under a short lease kept by a heartbeat
  (``Leases``), woken by doorbells, through Redis outages (``Outage``);
* ``Timers(journal, policy).schedule(event, due)`` and ``.run(stop)`` — durable timers;
* ``Inbound`` — the inbound stream of webhook deliveries, from the web process to the workers.
"""

from bot.runner.lease import Leases
from bot.runner.outage import REDIS_AWAY, Outage
from bot.runner.outbox import (
    Adapter,
    Adapters,
    Backoff,
    EffectRunner,
    Failure,
    RunStats,
    delivered,
    failures,
)
from bot.runner.timers import Timers, timer_event_id

__all__ = [
    "REDIS_AWAY", "Adapter", "Adapters", "Backoff", "EffectRunner", "Failure", "Leases",
    "Outage", "RunStats", "Timers", "delivered", "failures", "timer_event_id",
]
