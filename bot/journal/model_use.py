"""What model runs outside any quest cost a repository: the ledger of its reflection writer's
and reviewer's runs (``bot.reflection.runs``).

A quest's runs are receipts on the quest (``usage_recorded``), shown on its status comment; a
reflection belongs to the repository's wave and has no quest to carry them. So each run is
counted here, in one hash under the repository's hash tag (one slot, one script):

* ``repo:{<repo>}:model_use`` — ``tokens:<kind>``, ``cents:<kind>`` and ``runs:<kind>``, the
  totals per kind of run (``reflection_writer``, ``reflection_reviewer``); and
  ``run:<kind>:<effect key>``, one mark per run counted. The effect's key names the run: a
  redelivery after a restart, or another worker delivering the same effect, finds the mark
  and counts nothing again. The marks grow by at most two a reflection attempt.

Counting is best effort after the model answered: what a run that crashed before its count
used is not on record, as with any receipt.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from bot.journal.keys import model_use_key
from bot.journal.wire import RedisClient


class Kind(StrEnum):
    REFLECTION_WRITER = "reflection_writer"
    REFLECTION_REVIEWER = "reflection_reviewer"


REFLECTIONS = (Kind.REFLECTION_WRITER, Kind.REFLECTION_REVIEWER)


_COUNT = """
if redis.call('HSETNX', KEYS[1], 'run:' .. ARGV[1] .. ':' .. ARGV[2], 1) == 0 then
  return 0
end
redis.call('HINCRBY', KEYS[1], 'tokens:' .. ARGV[1], ARGV[3])
redis.call('HINCRBY', KEYS[1], 'cents:' .. ARGV[1], ARGV[4])
redis.call('HINCRBY', KEYS[1], 'runs:' .. ARGV[1], 1)
return 1
"""


@dataclass(frozen=True, slots=True)
class Spent:
    tokens: int = 0
    cents: int = 0
    runs: int = 0

    def __add__(self, other: Spent) -> Spent:
        return Spent(self.tokens + other.tokens, self.cents + other.cents,
                     self.runs + other.runs)


class ModelUse:
    def __init__(self, client: RedisClient) -> None:
        self.client = client
        self._count = client.register_script(_COUNT)

    async def count(self, repo: str, kind: Kind, run: str, tokens: int, cents: int) -> bool:
        """Count one run (``run``: its effect's key) once; ``False`` when it was counted."""
        return bool(await self._count(keys=[model_use_key(repo)],
                                      args=[kind.value, run, max(0, tokens), max(0, cents)]))

    async def spent(self, repo: str, kinds: tuple[Kind, ...] = REFLECTIONS) -> Spent:
        """What the runs of ``kinds`` used so far, together."""
        fields = [f"{what}:{kind.value}" for kind in kinds for what in ("tokens", "cents", "runs")]
        raw: Any = await self.client.hmget(model_use_key(repo), fields)
        values = [int(v or 0) for v in raw]
        total = Spent()
        for n in range(len(kinds)):
            total += Spent(*values[3 * n:3 * n + 3])
        return total
