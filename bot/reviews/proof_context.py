"""What the proof established, as context for the experiment reviewer at C: each command the
proof ran (where, its exit code, the end of what it printed) and the files the change touched,
read from the agent's evidence store (``bot.agent.evidence_store``).

Context, not a pinned artifact: the proof's digest is in the pinned snapshot already, so a new
proof makes the review stale whatever these words say.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from bot.agent.evidence_store import EvidenceStore
from bot.core import Quest
from bot.core.states import State
from bot.journal.wire import RedisClient

TAIL = 1500
"""Characters of each command's output the reviewer sees: the end, where the verdict is."""

ContextOf = Callable[[Quest], Awaitable[dict[str, str]]]


def proof_context(client: RedisClient) -> ContextOf:
    store = EvidenceStore(client)

    async def context(quest: Quest) -> dict[str, str]:
        if quest.checkpoint_state is not State.READY:
            return {}
        bundle = await store.lookup(quest)
        if bundle is None:
            return {}
        out: dict[str, str] = {}
        runs = [f"{o.name} at the {o.at}: exit {o.exit_code}\n{o.tail[-TAIL:]}".rstrip()
                for o in bundle.outputs]
        if runs:
            out["proof run"] = "\n\n".join(runs)
        change = bundle.result.change
        if change is not None:
            out["changed files"] = "\n".join(change.files)
        return out

    return context
