"""The ``run_proof`` adapter: the repository's own checks at the patch head, sealed for the core.

The effect names GitHub's base and head. ``workspace.proof_repository`` brings both into one
local repository (the base with the reproduction's files laid over it, so the reproduction
fails there for the bug and not for want of its own test file), ``proof_runner.run_proof``
runs the configured commands at the head and the reproduction at base and head, and the
bundle is rebound to GitHub's SHAs with its digest recomputed, so the core can match it to
the quest.

``proof_completed`` is returned only when the bundle says every check passed and the
reproduction was confirmed (failed on the base, passed at the head); anything else is
``proof_failed`` naming what failed, with its exit code and the tail of its output — which
the core hands to the next patch run as its repair context. A patch that edits the
reproduction's own files fails the proof before anything runs: a test rewritten to pass
proves nothing.

Whichever way it went, ``prove`` records what the proof established in the evidence store
(``ProofFacts``): a proof is reported ``completed`` there exactly when ``proof_completed`` is
returned, so a failed proof never reads as verified on GitHub.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.adapters import AdapterContext, GitHost, outcome_id
from bot.agent.evidence import CommandOutput
from bot.agent.evidence_store import EvidenceStore, Piece, StageRecord, proof_result
from bot.agent.proof_runner import CheckCommand, CommandLog, run_proof
from bot.agent.workspace import git, local_repository, proof_repository, rebind, tree_files
from bot.core import Effect, Event, ProofBundle, Quest, Risk
from bot.core.events.agent_work import ProofCompleted, ProofFailed, Reproduced
from bot.core.events.landing import BaseMoved
from bot.core.events.signals import SignalSensed
from bot.core.proof import CheckRecord, Reproduction
from bot.journal import PermanentError
from bot.settings.repository.schema import Settings

REASON_TAIL = 1_500


@dataclass(frozen=True, slots=True)
class ReproductionRecord:
    """The commit that added the reproduction, and the files it added or changed."""

    commit: str
    files: Mapping[str, str]


def check_commands(settings: Settings) -> list[CheckCommand]:
    return [CheckCommand(name=" ".join(argv), argv=argv) for argv in settings.proof.commands]


async def reproduction_record(ctx: AdapterContext, host: GitHost, quest: Quest,
                              repo: Path) -> ReproductionRecord | None:
    """The latest ``reproduced`` commit of the quest, diffed against the base it was made on.

    The quest keeps only the reproduction's name and command; its files are read back from
    the commit the reproduce stage pushed (recorded on the ``reproduced`` event), fetched with
    that base into the local repository ``repo`` — the one the run goes on working in, so the
    checkout that follows fetches only what differs."""
    base_then: str | None = None
    found: tuple[str, str] | None = None
    for event in await ctx.journal.events(quest.id):
        if isinstance(event, SignalSensed | BaseMoved):
            base_then = event.base
        elif isinstance(event, Reproduced) and event.commit and base_then:
            found = (event.commit, base_then)
    if found is None:
        return None
    commit, base = found
    await local_repository(repo)
    await host.fetch(repo, [commit, base])
    made, before = await tree_files(repo, commit), await tree_files(repo, base)
    return ReproductionRecord(commit, {p: s for p, s in made.items() if before.get(p) != s})


def _tail(logs: Sequence[CommandLog], name: str, at: str) -> str:
    for log in logs:
        if log.name == name and log.at == at:
            return log.result.output_tail[-REASON_TAIL:].strip()
    return ""


def failure_reason(bundle: ProofBundle, logs: Sequence[CommandLog]) -> str:
    """Which check failed where, with exit codes and the first failure's output tail."""
    problems: list[str] = []
    tail = ""
    for check in bundle.checks:
        if not check.passed:
            problems.append(f"check {check.name!r} failed at the head (exit {check.exit_code})")
            tail = tail or _tail(logs, check.name, "head")
    repro = bundle.reproduction
    if repro is None:
        problems.append("no reproduction was run")
    else:
        if repro.base_exit_code == 0:
            problems.append(f"reproduction {repro.name!r} passes on the base, so it does not "
                            "show the bug")
        if repro.head_exit_code != 0:
            problems.append(f"reproduction {repro.name!r} still fails at the head "
                            f"(exit {repro.head_exit_code})")
            tail = tail or _tail(logs, repro.name, "head")
    reason = "; ".join(problems) or "the proof did not pass"
    return f"{reason}\n\n{tail}" if tail else reason


async def prove(ctx: AdapterContext, effect: Effect, *,
                evidence: EvidenceStore | None = None) -> Sequence[Event]:
    """Perform one ``run_proof`` effect; returns ``proof_completed`` or ``proof_failed``.

    With ``evidence``, what the proof established is recorded there first (see
    ``ProofFacts``), whichever way it went."""
    payload = effect.payload
    head, base = payload.get("head"), payload.get("base")
    if not head or not base:
        raise PermanentError(f"run_proof for quest {effect.quest_id} names no head or base")
    quest = await ctx.quest(effect.quest_id)
    facts = ProofFacts(quest_id=quest.id, revision=int(payload.get("revision") or effect.revision),
                       risk=Risk(payload.get("risk") or quest.risk),
                       attempts=int(payload.get("attempt") or 0), base=base, head=head)
    events = await _prove(ctx, effect, quest, facts)
    if evidence is not None:
        await evidence.record(quest.id, facts.record(completed=any(
            isinstance(event, ProofCompleted) for event in events)))
    return events


@dataclass
class ProofFacts:
    """What one proof established, filled in as it runs, for the evidence store: the checks
    (the configured commands and the reproduction at the head, as it ran there), the
    reproduction at base and head, the files the head changes, the digest, why it failed, and
    the tail of what each command printed."""

    quest_id: str
    revision: int
    risk: Risk
    attempts: int
    base: str
    head: str
    checks: tuple[CheckRecord, ...] = ()
    reproduction: Reproduction | None = None
    files: tuple[str, ...] = ()
    digest: str | None = None
    reason: str | None = None
    outputs: tuple[CommandOutput, ...] = ()
    lines: tuple[int, int] | None = None
    """Lines the head adds and removes against the base (text files only)."""

    def record(self, *, completed: bool) -> StageRecord:
        result = proof_result(quest_id=self.quest_id, revision=self.revision,
                              completed=completed, reason=self.reason, attempts=self.attempts,
                              risk=self.risk, base=self.base, head=self.head, files=self.files,
                              checks=self.checks)
        return StageRecord(piece=Piece.PROOF, revision=self.revision, result=result,
                           reproduction=self.reproduction, risk=self.risk, base=self.base,
                           head=self.head, proof_digest=self.digest, outputs=self.outputs,
                           lines=self.lines)


def diff_stat(numstat: str) -> tuple[tuple[str, ...], tuple[int, int]]:
    """The files of ``git diff --numstat`` and the lines added and removed in all of them (a
    binary file, ``-`` there, counts as changed with no lines)."""
    files: list[str] = []
    added = removed = 0
    for row in numstat.splitlines():
        parts = row.split("\t", 2)
        if len(parts) != 3 or not parts[2].strip():
            continue
        files.append(parts[2])
        added += int(parts[0]) if parts[0].isdigit() else 0
        removed += int(parts[1]) if parts[1].isdigit() else 0
    return tuple(files), (added, removed)


def _head_check(bundle: ProofBundle, logs: Sequence[CommandLog]) -> tuple[CheckRecord, ...]:
    """The reproduction's run at the head as a check, with the digest of what it printed."""
    repro = bundle.reproduction
    if repro is None:
        return ()
    for log in logs:
        if log.name == repro.name and log.at == "head":
            return (CheckRecord(name=repro.name, command=repro.command,
                                exit_code=log.result.exit_code,
                                output_sha256=log.result.output_sha256),)
    return ()


async def _prove(ctx: AdapterContext, effect: Effect, quest: Quest,
                 facts: ProofFacts) -> list[Event]:
    payload, head, base = effect.payload, facts.head, facts.base
    settings = await ctx.settings.settings(quest.repo)
    host = await ctx.hosts(quest.repo)

    def failed(reason: str, digest: str | None = None) -> list[Event]:
        facts.reason = reason
        return [ProofFailed(id=outcome_id(effect, "proof_failed"), quest_id=quest.id,
                            at=ctx.clock(), head=head, reason=reason, digest=digest)]

    command = tuple(payload.get("reproduction_command") or ())
    if not command:
        return failed("the quest has no reproduction command; a proof must show the bug fixed")
    reproduction = CheckCommand(name=payload.get("reproduction") or "reproduction", argv=command)
    with tempfile.TemporaryDirectory(prefix="questbot-proof-repo-") as tmp:
        record = await reproduction_record(ctx, host, quest, Path(tmp) / "repo")
        local = await proof_repository(
            host, base=base, head=head, dest=Path(tmp) / "repo",
            overlay=record.files if record else None, overlay_ref=record.commit if record else None)
        facts.files, facts.lines = diff_stat(await git(
            local.path, "diff", "--numstat", local.local_base, local.local_head))
        changed = sorted(p for p, s in (record.files if record else {}).items()
                         if local.head_files.get(p) != s)
        if changed:
            return failed(f"the head changes the reproduction's files {changed}; a rewritten "
                          "test proves nothing")
        run = await asyncio.to_thread(
            run_proof, local.path, quest_id=quest.id, revision=int(payload["revision"]),
            risk=Risk(payload["risk"]), base=local.local_base, head=local.local_head,
            checks=check_commands(settings), reproduction=reproduction)
    bundle = rebind(run.bundle, base=base, head=head)
    digest = bundle.digest()
    facts.checks = bundle.checks + _head_check(bundle, run.logs)
    facts.outputs = tuple(
        CommandOutput.of(name=log.name, at=log.at, command=log.argv,
                         exit_code=log.result.exit_code, output=log.result.output_tail,
                         truncated=log.result.truncated) for log in run.logs)
    facts.reproduction, facts.digest = bundle.reproduction, digest
    confirmed = bundle.reproduction is not None and bundle.reproduction.confirmed
    if bundle.all_passed and confirmed:
        return [ProofCompleted(id=outcome_id(effect, "proof_completed"), quest_id=quest.id,
                               at=ctx.clock(), bundle=bundle, digest=digest)]
    return failed(failure_reason(bundle, run.logs), digest)
