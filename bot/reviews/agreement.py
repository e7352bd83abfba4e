"""How often questbot's automatic reviews agree with people's decisions, per repository.

When questbot's reviewer reaches a verdict at a checkpoint (advisory or in shadow mode), the
verdict is noted on the quest (``auto:<checkpoint>`` in ``q:{<id>}:reviews``, with the
revision). The next decision a person makes at that checkpoint in that revision takes the note
(read and deleted in one script, so one automatic verdict is compared once) and counts
agree or disagree in ``repo:{<owner/name>}:reviews`` — what the inbox shows — and in the
``questbot_review_agreement`` counter on ``/metrics``.

At an advisory checkpoint the automatic verdict usually passes the gate before anyone
decides, so the comparison is what shadow mode is for: the reviewer is recorded and people
decide, and the count says whether it could be trusted to.
"""

from __future__ import annotations

import logging

import orjson
import redis.asyncio
import redis.exceptions

from bot.core import Event, Quest
from bot.core.events.decisions import CheckpointDecided, Verdict
from bot.core.policy import Checkpoint
from bot.journal.keys import repo_reviews_key, reviews_key
from bot.journal.wire import RedisClient
from bot.observe.metrics import Metrics

log = logging.getLogger(__name__)



_TAKE = """
local note = redis.call('HGET', KEYS[1], ARGV[1])
if note then redis.call('HDEL', KEYS[1], ARGV[1]) end
return note
"""


class Agreement:
    def __init__(self, client: RedisClient, metrics: Metrics | None = None) -> None:
        self.client = client
        self.metrics = metrics
        self._take = client.register_script(_TAKE)

    async def automatic(self, quest: Quest, checkpoint: Checkpoint, verdict: Verdict) -> None:
        """Note questbot's verdict, for the next person's decision to be compared with."""
        note = orjson.dumps({"verdict": verdict.value, "revision": quest.revision})
        await self.client.hset(reviews_key(quest.id), f"auto:{checkpoint.value}", note)

    async def on_applied(self, event: Event, quest: Quest) -> None:
        """After every applied event: a person's decision takes the automatic note, if any.
        The event is journaled already; a count Redis could not take is logged, not raised,
        so it never makes an applied event look refused."""
        if not isinstance(event, CheckpointDecided) or event.automatic:
            return
        try:
            await self._compare(event, quest)
        except (redis.exceptions.RedisError, OSError) as exc:
            log.warning("could not count the agreement of quest %s's review: %s", quest.id, exc)

    async def _compare(self, event: CheckpointDecided, quest: Quest) -> None:
        raw = await self._take(keys=[reviews_key(quest.id)],
                               args=[f"auto:{event.checkpoint.value}"])
        if raw is None:
            return
        note = orjson.loads(raw)
        if note.get("revision") != quest.revision:
            return
        agreed = note.get("verdict") == event.verdict.value
        await self.client.hincrby(repo_reviews_key(quest.repo),
                                  "agree" if agreed else "disagree", 1)
        if self.metrics is not None:
            self.metrics.review_agreement.labels(repo=quest.repo.lower(),
                                                 agreed=str(agreed).lower()).inc()

    async def counts(self, repo: str) -> tuple[int, int]:
        """``(agreed, compared)`` for ``repo``."""
        agree, disagree = await self.client.hmget(repo_reviews_key(repo), ["agree", "disagree"])
        a, d = int(agree or 0), int(disagree or 0)
        return a, a + d
