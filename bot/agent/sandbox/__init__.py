"""The one place repository code and agents' commands are run: under bubblewrap, or not at all.

Everything questbot runs that a repository or an agent chose — proofs, reproductions, the
checks a patch run verifies with, an agent's tool commands, a CLI agent itself — goes through
``run`` (to its end, with its output hashed and its tail kept) or ``launch`` (the confined
command line and environment, for a caller that talks to the process, like the ``command``
agent). ``policy`` says what the sandbox binds and why; ``running`` the time and output
contract; ``processes`` what bounds how many processes a command may have; ``probe`` how the
worker finds out whether this machine can confine at all.

One policy holds for the whole process: the worker installs the one its configuration
describes (``install``, from ``QUESTBOT_SANDBOX*`` in ``bot.settings.process``) and says at
start what it found (``probe.announce``). Without ``install`` the default holds: bubblewrap,
required.
When bubblewrap cannot run here, ``run`` and ``launch`` raise ``SandboxUnavailable`` rather
than run anything unconfined; only ``QUESTBOT_SANDBOX=unsafe-off`` runs commands without it.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.agent.errors import AgentError
from bot.agent.sandbox.policy import (
    Request,
    SandboxMode,
    SandboxPolicy,
    as_paths,
    bwrap_argv,
    find_program,
    python,
    sandbox_env,
)
from bot.agent.sandbox.probe import SandboxStatus, announce
from bot.agent.sandbox.probe import status as probe_status
from bot.agent.sandbox.processes import join_argv, pids_cgroup
from bot.agent.sandbox.running import (
    DEFAULT_OUTPUT_CAP,
    DEFAULT_TIMEOUT_SECONDS,
    EXIT_NOT_STARTED,
    EXIT_TIMED_OUT,
    CommandResult,
    kill_group,
    not_started,
    run_process,
)
from bot.errors import PermanentError

__all__ = [
    "DEFAULT_OUTPUT_CAP", "DEFAULT_TIMEOUT_SECONDS", "EXIT_NOT_STARTED", "EXIT_TIMED_OUT",
    "CommandResult", "Launch", "SandboxMode", "SandboxPolicy", "SandboxStatus",
    "SandboxUnavailable", "announce", "current", "install", "kill_group", "launch", "python", "run",
    "status", "using",
]  # fmt: skip


class SandboxUnavailable(AgentError, PermanentError):
    """Repository code was to run, and this machine cannot confine it: it did not run.

    Permanent for the effect that asked (retrying on the same machine finds the same); the
    message says what an operator installs, or sets, to change that."""


_installed: list[SandboxPolicy] = [SandboxPolicy()]


def install(policy: SandboxPolicy) -> SandboxPolicy:
    """Make ``policy`` the process's (the worker does it once, from its configuration)."""
    _installed[0] = policy
    return policy


def current() -> SandboxPolicy:
    return _installed[0]


@contextlib.contextmanager
def using(policy: SandboxPolicy) -> Iterator[SandboxPolicy]:
    """``policy`` for the duration of a block (tests, ``python -m bot proof``)."""
    before = _installed[0]
    _installed[0] = policy
    try:
        yield policy
    finally:
        _installed[0] = before


def status(policy: SandboxPolicy | None = None) -> SandboxStatus:
    return probe_status(policy or current())


@dataclass(frozen=True, slots=True)
class Launch:
    """A command ready to start: the argv and environment to exec (bubblewrap's, confined).

    ``problem`` is set when the program cannot be found where it would run: do not start it,
    report it as not started (exit 127)."""

    argv: tuple[str, ...]
    env: Mapping[str, str]
    sandboxed: bool
    problem: str | None = None


@contextlib.contextmanager
def launch(argv: Sequence[str], *, cwd: Path, writable: Sequence[Path] = (),
           readonly: Sequence[Path] = (), home: Path | None = None, network: bool = False,
           env: Mapping[str, str] | None = None,
           policy: SandboxPolicy | None = None) -> Iterator[Launch]:
    """The confined form of ``argv`` run in ``cwd``: ``cwd``, ``writable`` and ``home`` are
    writable, ``readonly`` visible, the network reachable only with ``network``; ``env`` is
    added to the sandbox's allow-list. Raises ``SandboxUnavailable`` where nothing may run."""
    if not argv:
        raise ValueError("a sandboxed command needs an argv")
    policy = policy or current()
    found = probe_status(policy)
    if not found.usable:
        raise SandboxUnavailable(f"questbot will not run {argv[0]!r} unconfined: {found.detail}"
                                 "; or set QUESTBOT_SANDBOX=unsafe-off, knowing it is unsafe")
    with contextlib.ExitStack() as stack:
        if home is None and not found.confined:
            home = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="questbot-home-")))
        cwd = as_paths([cwd])[0]
        request = Request(argv=tuple(argv), cwd=cwd, writable=as_paths([cwd, *writable]),
                          readonly=as_paths(readonly), home=as_paths([home])[0] if home else None,
                          network=network, env=dict(env or {}))
        environ = sandbox_env(policy, request)
        if not found.confined:
            yield Launch(argv=request.argv, env=environ, sandboxed=False)
            return
        features = found.features
        assert features is not None
        argv = bwrap_argv(policy, features, request)
        if features.pids_cgroup is not None:
            cgroup = stack.enter_context(pids_cgroup(features.pids_cgroup, policy.processes))
            argv = join_argv(cgroup, argv)
        yield Launch(argv=tuple(argv), env=environ, sandboxed=True,
                     problem=find_program(policy, request, environ))


def run(argv: Sequence[str], *, cwd: Path, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
        output_cap: int = DEFAULT_OUTPUT_CAP, network: bool = False,
        env: Mapping[str, str] | None = None, home: Path | None = None,
        writable: Sequence[Path] = (), readonly: Sequence[Path] = (),
        policy: SandboxPolicy | None = None) -> CommandResult:
    """Run ``argv`` confined in ``cwd`` to its end (``running`` has the contract): what an
    agent's "run a command" tool calls. Blocking: call it in a thread from async code."""
    with launch(argv, cwd=cwd, writable=writable, readonly=readonly, home=home,
                network=network, env=env, policy=policy) as ready:
        if ready.problem is not None:
            return not_started(argv[0], ready.problem, sandboxed=ready.sandboxed)
        return run_process(ready.argv, cwd, env=ready.env, timeout_seconds=timeout_seconds,
                           output_cap=output_cap, sandboxed=ready.sandboxed, shown=argv[0])
