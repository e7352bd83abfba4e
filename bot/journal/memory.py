"""What questbot remembers about its own writes on GitHub, in Redis, and the lease that makes
each create happen once.

GitHub is the record of what was written; this is the index into it. questbot keeps the
numbers and ids of what it created here, right after each create — the quest's pull request,
its status comment, its check run, each reply by effect key, and per repository the inbox issue
and the last good settings — so the usual write is one edit by a known id. Digests of rendered
content let ``sync`` skip writes that would change nothing.

Create once. Every object questbot creates on GitHub is created under a lease on its name
(``ForgeMemory.creating``), in four steps:

1. **reserve** — take the lease ``<hash>:creating:<name>`` (``SET NX PX``, renewed by a
   heartbeat while the holder lives), so two paths of one worker, or two workers, never create
   the same object at once; whoever waited reads the record the holder left;
2. **look** — with no record, look for the object on GitHub by its marker (the branch name, a
   hidden ``<!-- questbot:… -->`` line, the check run's ``external_id``) before creating it;
3. **create** it only if GitHub has none;
4. **record** its number or id here.

A worker that dies between 3 and 4 leaves an object and no record; its lease expires, and the
next holder finds the object in step 2. A lost record (a failover loses the last writes before
it) is the same case. So step 2 runs whenever the record is missing — a listing per object and
quest, once — rather than only after a crash this Redis remembers.

Keys follow ``bot.journal.keys``: a quest's hash carries the quest's hash tag (``q:{id}:gh``,
the same Redis Cluster slot as its journal), a repository's carries the repository's; each
lease key carries the tag of the hash it guards.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import secrets
import time
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager

import redis.asyncio
from redis.typing import EncodableT, FieldT

from bot.errors import RetryLater
from bot.journal.errors import JournalError
from bot.journal.keys import creating_key, quest_gh_key, repo_gh_key
from bot.journal.wire import RedisClient, atomic

log = logging.getLogger(__name__)


def digest(*parts: object) -> str:
    """The digest of rendered content a write would send, recorded with what was written so a
    sync that would change nothing sends nothing."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


LEASE_MS = 15_000
"""How long a creating lease lives without a heartbeat: a dead holder blocks others this long."""
WAIT_S = 60.0
"""How long a path waits for another's lease before giving up for a retry."""
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""



class CreationBusy(JournalError, RetryLater):
    """Another path has held the lease on creating an object for longer than this one waits."""


QUEST_FIELDS = (
    "pr", "check_run", "check_head", "check_done", "check_digest", "status_comment",
    "status_target", "status_digest", "source_issue", "revert_pr",
)
"""A few of the fields; effects add their own per key (``reply:<key>``, ``revert:<key>``,
``reviews:<key>``, ``rebased:<key>``, ``note:<key>``)."""


PAUSED_BY_CLOSE = "paused_by_close"
"""A quest's field: the pull request number whose closing paused the quest, until it is
reopened (``bot.pulls.intake``; ``restore_pull`` reads it too)."""

PARKED_BY_REPOSITORY = "parked_by_repository"
"""A quest's field: the repository change that parked it (``bot.words.repository.Change``'s
value), until the change that undoes it resumes it (``bot.repository.intake``)."""






def _text(value: bytes | str | None) -> str | None:
    if value is None:
        return None
    return value.decode() if isinstance(value, bytes) else value


class ForgeMemory:
    def __init__(self, client: RedisClient) -> None:
        self.client = client

    # -- one quest -------------------------------------------------------------------------

    async def quest(self, quest_id: str, name: str) -> str | None:
        return _text(await self.client.hget(quest_gh_key(quest_id), name))

    async def quest_fields(self, quest_id: str, *names: str) -> list[str | None]:
        """Several fields in one round trip."""
        return [_text(v) for v in await self.client.hmget(quest_gh_key(quest_id), list(names))]

    async def quest_int(self, quest_id: str, name: str) -> int | None:
        value = await self.quest(quest_id, name)
        return int(value) if value is not None else None

    async def set_quest(self, quest_id: str, **fields: str | int) -> None:
        mapping: dict[FieldT, EncodableT] = {name: str(value) for name, value in fields.items()}
        await self.client.hset(quest_gh_key(quest_id), mapping=mapping)

    async def record_quest(self, quest_id: str, *, clear: str, **fields: str | int) -> None:
        """Write ``fields`` and drop the reservation ``clear`` in one transaction: what a
        create that reserved its name before writing to GitHub records once it is done."""
        key = quest_gh_key(quest_id)
        pairs = [part for name, value in fields.items() for part in (name, str(value))]
        await atomic(self.client, [key], ("HSET", key, *pairs), ("HDEL", key, clear))

    async def remember_run_app(self, quest_id: str, run: str, app: str) -> None:
        """For triage: the App that made the check run ``run`` reported to the quest, as its
        webhook said — so whether questbot may re-run it needs no read of the run."""
        await self.set_quest_field(quest_id, f"app:{run}", app)

    async def run_app(self, quest_id: str, run: str) -> str | None:
        return await self.quest(quest_id, f"app:{run}")

    async def clear_quest_field(self, quest_id: str, name: str) -> None:
        await self.client.hdel(quest_gh_key(quest_id), name)

    async def set_quest_field(self, quest_id: str, name: str, value: str | int) -> None:
        await self.client.hset(quest_gh_key(quest_id), name, str(value))

    async def remember_source_issue(self, quest_id: str, number: int) -> None:
        """For the worker: the issue a quest came from, where it talks until it has a PR."""
        await self.set_quest_field(quest_id, "source_issue", number)

    # -- one repository --------------------------------------------------------------------

    async def repo(self, repo: str, name: str) -> str | None:
        return _text(await self.client.hget(repo_gh_key(repo), name))

    async def set_repo(self, repo: str, name: str, value: str | int) -> None:
        await self.client.hset(repo_gh_key(repo), name, str(value))

    async def remember_default_branch(self, repo: str, branch: str) -> None:
        """For the worker: ``repository.default_branch`` from any webhook payload, which is
        how questbot knows where to open PRs without a ``repos/get`` per quest."""
        await self.set_repo(repo, "default_branch", branch)

    async def record_pull(self, repo: str, quest_id: str, number: int, *, branch: str,
                          url: str, head: str, draft: bool, node: str, repo_node: str,
                          **more: str | int) -> None:
        """The quest's pull request, as GitHub described it: its fields on the quest, and the
        repository's record of which quest it is (``remember_pull``). Written by the path
        that opened it (``bot.views.projection``), or by ``bot.quests.quest_of`` when a person
        acted on it before that path heard GitHub's answer."""
        await self.set_quest(quest_id, pr=number, pr_url=url, pr_head=head, pr_branch=branch,
                             pr_draft=int(draft), pr_node=node, repo_node=repo_node, **more)
        await self.remember_pull(repo, number, quest_id)

    async def remember_pull(self, repo: str, number: int, quest_id: str) -> None:
        """For the worker: the quest a pull request is the quest PR of, so a comment on it
        finds its quest without asking GitHub for the pull request's branch."""
        await self.set_repo(repo, f"pr:{number}", quest_id)

    async def quest_of_pull(self, repo: str, number: int) -> str | None:
        """The quest ``repo#number`` was recorded for (``remember_pull``): its current pull
        request or an earlier one (a quest that started again has a fresh one)."""
        return await self.repo(repo, f"pr:{number}")

    async def quest_pull(self, quest_id: str, branch: str) -> int | None:
        """The pull request recorded for the quest's ``branch`` (``Quest.branch``, its current
        one): a quest that starts again after a rollback or a reopening works on a fresh
        branch, and the pull request of its old one, merged, is not its home any more."""
        number, recorded = await self.quest_fields(quest_id, "pr", "pr_branch")
        if number is None or (recorded or f"quest/{quest_id}") != branch:
            return None
        return int(number)

    async def default_branch(self, repo: str) -> str:
        return await self.repo(repo, "default_branch") or "main"

    # -- create once -----------------------------------------------------------------------

    def quest_creating(self, quest_id: str, name: str) -> AbstractAsyncContextManager[None]:
        """The lease on creating the quest's object ``name`` (``pr``, ``status``, ``check``…)."""
        return self.creating(quest_gh_key(quest_id), name)

    def repo_creating(self, repo: str, name: str) -> AbstractAsyncContextManager[None]:
        """The lease on creating the repository's object ``name`` (``inbox``)."""
        return self.creating(repo_gh_key(repo), name)

    @contextlib.asynccontextmanager
    async def creating(self, hash_key: str, name: str, *, lease_ms: int = LEASE_MS,
                       wait_s: float = WAIT_S) -> AsyncIterator[None]:
        """Hold the lease on creating ``name`` (recorded in ``hash_key``) for the block: wait
        for it while another holds it, renew it while the block runs, release it after.

        Raises ``CreationBusy`` (retry later) after ``wait_s``. The block should read the
        record again first: whoever held the lease may have written it."""
        lease = creating_key(hash_key, name)
        token = secrets.token_hex(8)
        deadline = time.monotonic() + wait_s
        pause = 0.01
        while not await self.client.set(lease, token, nx=True, px=lease_ms):
            if time.monotonic() > deadline:
                raise CreationBusy(f"another worker has been creating {name} of {hash_key} for "
                                   f"over {wait_s:.0f}s; trying again shortly")
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.25)
        done = asyncio.Event()
        heartbeat = asyncio.create_task(self._renew(lease, token, lease_ms, done))
        try:
            yield
        finally:
            # told twice, as the effect runner's lease is (``bot.runner.lease``): on Python 3.11
            # a cancel that lands as a Redis command's answer arrives can be lost inside
            # redis-py (CPython gh-86296); a heartbeat that lost it renewed the lease for ever
            # while this block waited for it to end, and every other path gave up after
            # ``wait_s`` (``CreationBusy``) or waited for good
            done.set()
            heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await heartbeat
            try:
                await self.client.eval(_RELEASE, 1, lease, token)
            except redis.RedisError:  # it expires by itself
                log.warning("could not release the lease %s; it expires in %d ms", lease,
                            lease_ms)

    async def _renew(self, lease: str, token: str, lease_ms: int, done: asyncio.Event) -> None:
        """Renew the lease every third of its life until ``done``, which ends it at once
        even when its cancel was lost."""
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(done.wait(), lease_ms / 3000)
            if done.is_set():
                return
            try:
                held = await self.client.eval(_RENEW, 1, lease, token, lease_ms)
            except redis.RedisError:
                log.warning("could not renew the lease %s; trying again", lease)
                continue
            if not held:
                log.warning("the lease %s ran out while its holder worked; another path may "
                            "create the same object", lease)
                return
