"""The model conversations running per quest, so ``stop_agent`` can cancel them.

Kept apart from the conversation so the worker can hold one without importing pydantic-ai and
the SDKs, which take seconds to import (``docs/decisions.md``)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator

from bot.agent.task import AgentReply


class ModelRuns:
    """The conversations running per quest, so ``stop_agent`` can cancel them."""

    def __init__(self) -> None:
        self._by_quest: dict[str, set[asyncio.Task[AgentReply]]] = {}
        self._stopped: set[asyncio.Task[AgentReply]] = set()

    @contextlib.contextmanager
    def track(self, quest_id: str, task: asyncio.Task[AgentReply]) -> Iterator[None]:
        self._by_quest.setdefault(quest_id, set()).add(task)
        try:
            yield
        finally:
            self._by_quest.get(quest_id, set()).discard(task)
            if not self._by_quest.get(quest_id):
                self._by_quest.pop(quest_id, None)

    def stop(self, quest_id: str) -> int:
        running = list(self._by_quest.get(quest_id, ()))
        for task in running:
            self._stopped.add(task)
            task.cancel()
        return len(running)

    def was_stopped(self, task: asyncio.Task[AgentReply]) -> bool:
        if task in self._stopped:
            self._stopped.discard(task)
            return True
        return False
