"""When each write to GitHub may go: one schedule per installation, in Redis when workers share it.

GitHub limits content-creating requests per installation to 80 a minute and 500 an hour, and
asks a client making many writes to make them one after another, at least a second apart
(BEHAVIOUR.md §15). An installation's writes therefore follow a schedule (``next_slot``): a
burst of ``Pace.burst`` may go at once, then one every ``Pace.spacing`` seconds; and at most
``Pace.hourly_burst`` may go before the hour's budget paces them to one every
``Pace.hourly_spacing``. Each limit is a GCRA ("generic cell rate algorithm") kept as one
number, its theoretical arrival time, and a write goes at the latest of the times the limits
allow — and both limits are advanced as if it went then, so a write one limit holds back
cannot leave the other to let a bunch through afterwards. In any window of 60 s the default
figures let 15 + 60 = 75 writes through, and 380 + 100 = 480 in an hour: under GitHub's 80 and
500 with a margin for clocks and latency. A secondary-limit answer ``block``s the
installation's writes until its retry time.

Several workers write through one installation, and a schedule per process would let each
take the whole budget. ``SharedSchedule`` keeps the schedule in Redis
(``gh:pace:<installation>``, a hash of the two arrival times and the block, one Lua script per
slot); ``LocalSchedule`` is the same arithmetic in memory, for one process and the tests. Time
is wall-clock epoch seconds handed in by the caller, the only clock workers share.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from bot.journal.wire import RedisClient

PACE_TTL_S = 7200
"""A schedule nobody wrote to for two hours holds nothing: every limit has refilled."""


@dataclass(frozen=True)
class Pace:
    """The figures of a schedule (see the module docs for what they allow)."""

    spacing: float = 1.0
    burst: int = 15
    hourly_spacing: float = 36.0
    hourly_burst: int = 380


State = tuple[float, float, float]
"""(the minute limit's arrival time, the hour's, blocked until)."""


def next_slot(state: State, now: float, pace: Pace) -> tuple[float, State]:
    """When a write asked for at ``now`` may go, and the schedule after it."""
    minute, hour, blocked = state
    send = max(now, blocked, minute - (pace.burst - 1) * pace.spacing,
               hour - (pace.hourly_burst - 1) * pace.hourly_spacing)
    return send, (max(minute, send) + pace.spacing, max(hour, send) + pace.hourly_spacing,
                  blocked)


class Schedule(Protocol):
    async def slot(self, installation_id: int, now: float, pace: Pace) -> float:
        """The time a write of this installation asked for at ``now`` may go."""
        ...

    async def block(self, installation_id: int, until: float) -> None:
        """No write of this installation goes before ``until`` (GitHub said to wait)."""
        ...


@dataclass
class LocalSchedule:
    """``next_slot`` per installation, in this process's memory."""

    states: dict[int, State] = field(default_factory=dict)

    async def slot(self, installation_id: int, now: float, pace: Pace) -> float:
        send, self.states[installation_id] = next_slot(
            self.states.get(installation_id, (0.0, 0.0, 0.0)), now, pace)
        return send

    async def block(self, installation_id: int, until: float) -> None:
        minute, hour, blocked = self.states.get(installation_id, (0.0, 0.0, 0.0))
        self.states[installation_id] = (minute, hour, max(blocked, until))


_SLOT = """
local minute = tonumber(redis.call('HGET', KEYS[1], 'm') or '0')
local hour = tonumber(redis.call('HGET', KEYS[1], 'h') or '0')
local blocked = tonumber(redis.call('HGET', KEYS[1], 'b') or '0')
local now, spacing, burst = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local hourly_spacing, hourly_burst = tonumber(ARGV[4]), tonumber(ARGV[5])
local send = math.max(now, blocked, minute - (burst - 1) * spacing,
                      hour - (hourly_burst - 1) * hourly_spacing)
redis.call('HSET', KEYS[1], 'm', string.format('%.6f', math.max(minute, send) + spacing),
           'h', string.format('%.6f', math.max(hour, send) + hourly_spacing))
redis.call('EXPIRE', KEYS[1], ARGV[6])
return string.format('%.6f', send)
"""

_BLOCK = """
local blocked = tonumber(redis.call('HGET', KEYS[1], 'b') or '0')
local untilv = tonumber(ARGV[1])
if untilv > blocked then
  redis.call('HSET', KEYS[1], 'b', string.format('%.6f', untilv))
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 1
"""


def pace_key(installation_id: int) -> str:
    return f"gh:pace:{int(installation_id)}"


class SharedSchedule:
    """``next_slot`` per installation in Redis, shared by every worker."""

    def __init__(self, client: RedisClient) -> None:
        self.client = client
        self._slot = client.register_script(_SLOT)
        self._block = client.register_script(_BLOCK)

    async def slot(self, installation_id: int, now: float, pace: Pace) -> float:
        raw = await self._slot(keys=[pace_key(installation_id)],
                               args=[f"{now:.6f}", pace.spacing, pace.burst, pace.hourly_spacing,
                                     pace.hourly_burst, PACE_TTL_S])
        return float(raw)

    async def block(self, installation_id: int, until: float) -> None:
        await self._block(keys=[pace_key(installation_id)], args=[f"{until:.6f}", PACE_TTL_S])
