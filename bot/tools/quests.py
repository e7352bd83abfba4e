"""``python -m bot status --repo OWNER/NAME``: every live quest of a repository, one line each
(its state and the next action, from ``status_and_next`` under the policy the quest's latest
journal entry was decided under) — where the inbox sends an operator when its list of quests
waiting for a person is longer than it shows. Nothing is written."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from bot.core import Policy
from bot.core.gates import ROLE_WORDS, StatusAndNext, status_and_next
from bot.journal import Indexes, Journal
from bot.journal.wire import RedisClient, connect


class Listed(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    repo: str
    quests: tuple[StatusAndNext, ...]


async def live_quests(client: RedisClient, repo: str, default: Policy) -> Listed:
    """The repository's live quests, by id, each read under its own latest recorded policy
    (``default`` for a quest that recorded none)."""
    journal = Journal(client)
    out: list[StatusAndNext] = []
    for quest_id in sorted(await Indexes(client).live_quests(repo)):
        _version, quest = await journal.snapshot(quest_id)
        if quest is None:
            continue  # indexed, and its snapshot gone: nothing to say of it here
        out.append(status_and_next(quest, await journal.recorded_policy(quest_id, default)))
    return Listed(repo=repo, quests=tuple(out))


def listed_text(listed: Listed) -> str:
    if not listed.quests:
        return f"{listed.repo}: no live quest"
    lines = [f"{listed.repo}: {len(listed.quests)} live quest"
             + ("s" if len(listed.quests) != 1 else "")]
    for s in listed.quests:
        who = ROLE_WORDS[s.next_action.role] if s.next_action.role else "nobody"
        lines.append(f"  {s.quest_id}  {s.state.value}, revision {s.revision}, attempt "
                     f"{s.attempt_number} — next: {who}: {s.next_action.says}")
        if s.park_note:
            lines.append(f"      why it is parked: {s.park_note}")
    return "\n".join(lines)


async def listed_at(url: str, repo: str, default: Policy) -> Listed:
    client = connect(url, socket_timeout=10)
    try:
        return await live_quests(client, repo, default)
    finally:
        await client.aclose()
