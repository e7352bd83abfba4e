"""Reflection waves, the worker's part (``bot.core.limits`` decides when one is due): a
reflection — what went wrong and what changes — is reviewed, and once one passes, the quests
the wave held are triaged again.

Two ways in. A maintainer's ``/reflect <text>`` (anywhere in the repository, usually the
inbox) is both the reflection and its review: it passes at once. Any other author — an agent,
a contributor through an operator tool — submits one with ``submit``, which keeps it pending
for the ``reviewer`` hook: a ``reflection_reviewer`` model run (issue 14, item 5, not built
here) returns a verdict, and a pass counts like a maintainer's. Without a reviewer the
reflection waits, pending and shown in the inbox, for a maintainer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta

from bot.adapters import AdapterContext
from bot.core.limits import reflection_due
from bot.journal.limits import ReflectionRecord, RepoLimits


@dataclass(frozen=True)
class ReflectionVerdict:
    passed: bool
    synopsis: str = ""


ReflectionReviewer = Callable[[str, ReflectionRecord], Awaitable[ReflectionVerdict]]
"""Given the repository and a pending reflection, an adversarial review's verdict."""
Release = Callable[[str], Awaitable[int]]
"""Triage a repository's held quests again (``Coordination.release``); how many started."""


class Reflections:
    def __init__(self, ctx: AdapterContext, limits: RepoLimits, release: Release, *,
                 reviewer: ReflectionReviewer | None = None) -> None:
        self.ctx = ctx
        self.limits = limits
        self.release = release
        self.reviewer = reviewer

    async def due(self, repo: str) -> bool:
        settings = await self.ctx.settings.settings(repo)
        passed = await self.limits.passed(repo)
        return reflection_due(await self.limits.bad_endings(repo),
                              passed.at if passed is not None else None,
                              settings.reflection.after_bad_endings,
                              timedelta(hours=settings.reflection.window_hours))

    async def reflect(self, repo: str, maintainer: str, text: str) -> str:
        """A maintainer's ``/reflect``: it passes; the reply, in their words."""
        was_due = await self.due(repo)
        record = ReflectionRecord(text=text[:4000], by=maintainer, at=self.ctx.clock(),
                                  reviewer=maintainer)
        await self.limits.pass_reflection(repo, record)
        started = await self.release(repo)
        if not was_due:
            return (f"@{maintainer} thank you: the reflection is recorded, and the bad endings "
                    "before it no longer count towards the next wave. No quest was waiting "
                    "for one.")
        waiting = (f"{started} waiting quest{'s' if started != 1 else ''} start"
                   f"{'s' if started == 1 else ''} now" if started
                   else "no quest was waiting for it")
        return (f"@{maintainer} the reflection passed: new quests start again, and {waiting}. "
                "The inbox shows what still waits.")

    async def submit(self, repo: str, record: ReflectionRecord) -> ReflectionVerdict | None:
        """A reflection from anyone else: kept pending, and reviewed by ``reviewer`` if there
        is one (``None``: it waits for a maintainer's ``/reflect``)."""
        await self.limits.propose(repo, record)
        if self.reviewer is None:
            return None
        verdict = await self.reviewer(repo, record)
        if verdict.passed:
            await self.limits.pass_reflection(repo, record.model_copy(update={
                "reviewer": "reflection reviewer", "synopsis": verdict.synopsis}))
            await self.release(repo)
        return verdict
