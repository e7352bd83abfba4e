"""The failing CI job's log for a stage's task: fetched, trimmed to the failing step, bounded.

``AgentRuns`` asks for it before the research and reproduce stages of a quest sensed from a
failing check (``Quest.source_run``; after a re-run that failed too, the re-run's job when the
first one's log is gone). The log is untrusted text — whatever the repository's tests printed
— and stays data: the model agent reads it fenced (``bot.agent.model.workbench``), a CLI
preset gets it fenced in its prompt (``bot.agent.presets.prompt``), a command agent gets it as
a JSON string in the task; nothing runs it.

Trimming: the runner's timestamp at the head of every line goes (it is noise to a reader and
costs tokens); then ``failing_step`` keeps the step that failed — from its ``##[group]Run``
to its ``##[error]`` lines — and only its last ``LOG_LIMIT`` characters, where a test runner
prints the failure and its summary.

Read once per quest: the trimmed log (or that there is none) is kept a day in the quest's
``ci_log`` hash, so the reproduce stage — and a stage run again after a worker died — does
not download it again (one API request and the log's bytes each).
"""

from __future__ import annotations

import logging
import re

from bot.adapters import AdapterContext
from bot.agent.model.untrusted import LOG_LIMIT, failing_step
from bot.agent.task import Stage
from bot.core import Quest
from bot.journal import PermanentError
from bot.journal.keys import ci_log_key
from bot.journal.memory import ForgeMemory

log = logging.getLogger(__name__)

STAGES_WITH_LOG = frozenset({Stage.RESEARCH, Stage.REPRODUCE})
KEPT_S = 86_400
_STAMP = re.compile(r"^\ufeff?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ?", re.MULTILINE)


def trim(raw: str, limit: int = LOG_LIMIT) -> str:
    """The failing step of a job's log, without timestamps, at most ``limit`` characters."""
    return failing_step(_STAMP.sub("", raw), limit)


async def failing_log(ctx: AdapterContext, quest: Quest, stage: Stage) -> str | None:
    """The trimmed log for ``stage`` of ``quest``, or ``None`` when there is none to read.

    A failure whose re-run on the same commit failed too (triage's flaky check, issue 12
    item 7) goes to research with both logs, each labelled and each given half the room: two
    runs that fail differently say more than either. The same text twice is shown once."""
    if ctx.logs is None or stage not in STAGES_WITH_LOG:
        return None
    first, second = quest.source_run, quest.rerun.second if quest.rerun else None
    found = [(run, text) for run in dict.fromkeys(r for r in (first, second) if r)
             if (text := await _read(ctx, quest, run))]
    if len(found) == 2 and found[0][1] != found[1][1]:
        (run1, log1), (run2, log2) = found
        half = LOG_LIMIT // 2
        return (f"The failed run ({run1}):\n{log1[-half:]}\n\n"
                f"Its re-run on the same commit ({run2}), which failed too:\n{log2[-half:]}")
    return found[0][1] if found else None


async def _read(ctx: AdapterContext, quest: Quest, run: str) -> str:
    """``run``'s trimmed log, read once per quest (``""``: none to read)."""
    assert ctx.logs is not None
    client, key = ctx.journal.client, ci_log_key(quest.id)
    kept = await client.hget(key, run)
    if kept is not None:
        return kept.decode() if isinstance(kept, bytes) else str(kept)
    try:
        raw = await ctx.logs(quest.repo, run, await ForgeMemory(client).run_app(quest.id, run))
    except PermanentError as exc:
        log.info("quest %s: the log of %s could not be read: %s", quest.id, run, exc)
        raw = None
    text = trim(raw) if raw else ""
    await client.hset(key, run, text)
    await client.expire(key, KEPT_S)
    return text
