"""Reflection waves, the worker's part (``bot.core.limits`` decides when one is due): a
reflection — what went wrong and what changes — is reviewed, and once one passes, the quests
the wave held are triaged again.

Three ways in. A maintainer's ``/reflect <text>`` (anywhere in the repository, usually the
inbox) is both the reflection and its review: it passes at once. With a model configured,
questbot writes one itself when a wave is due and its ``reflection_reviewer`` reviews it
(``bot.reflection.runs``); and a ``/reflect`` by someone without write access is
``submit``-ted to that same reviewer, whose pass counts like a maintainer's. Without a model
the wave waits for a maintainer, and other people's ``/reflect`` is refused as before.
"""

from __future__ import annotations

from bot.adapters import AdapterContext
from bot.journal.limits import ReflectionRecord, RepoLimits
from bot.reflection.runs import ReflectionRuns, Release, wave_due


class Reflections:
    def __init__(self, ctx: AdapterContext, limits: RepoLimits, release: Release, *,
                 runs: ReflectionRuns | None = None) -> None:
        self.ctx = ctx
        self.limits = limits
        self.release = release
        self.runs = runs

    async def due(self, repo: str) -> bool:
        return await wave_due(self.ctx, self.limits, repo)

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

    async def submit(self, repo: str, login: str, text: str, cause: str) -> str | None:
        """A ``/reflect`` by someone without write access: put up for the reflection
        reviewer; the reply. ``None`` without a reviewer (no model): refused as before."""
        if self.runs is None:
            return None
        return await self.runs.submit(repo, login, text, cause)
