"""The ``command`` agent: any coding-agent CLI, run as a program with arguments, never a shell.

The configured argv (``agent.command`` in ``.github/questbot.yml``) runs with the quest's
fresh checkout as its working directory — a repository of its own, made for this run, so
nothing the program does reaches another run or the worker's files. The ``AgentTask`` goes in
as JSON on stdin; the ``AgentReply`` comes back as JSON on stdout, and stdout is only ever
parsed as JSON: it is never executed, evaluated or handed to a shell. A patch is either
returned as file contents or left as changes in the checkout.

Limits, each ending the run ``failed`` with a reason people can act on:

* **time**: ``agent.timeout_seconds``; then the whole process group is killed;
* **output**: stdout beyond ``output_cap`` bytes kills the group (a reply is a screenful of
  JSON; megabytes of it are a runaway); stderr keeps only its tail, for the reason;
* **stop**: ``stop_agent`` (a pause, a kill, a person pushing) kills every run of the quest
  through ``RunningAgents``; the run reports ``stopped`` and its outcome is dropped, because
  the quest has moved on on purpose;
* **malformed output**: not JSON, or JSON that is not an ``AgentReply``, says which.

The program runs in the sandbox (``bot.agent.sandbox``): the checkout and the agent's own
home are its only writable directories, the checkout's ``.git`` is read-only (a patch is left
in the working tree, never committed), and the network is reachable only when the repository
allows it (``agent.network``: a CLI agent calling its model's API needs it; a local program
does not). It sees the sandbox's minimal environment (``PATH``, ``LANG``, ``HOME``, ``TMPDIR``)
plus the worker's variables whose names start with ``AGENT_`` (an operator opts a model key in
by naming it so): repository code and agents must not inherit the App's private key.

**Presets** (``agent.preset``, ``bot.agent.presets``): a coding-agent CLI instead of a JSON
program. The task becomes the CLI's prompt (on its command line, stdin or in a file, as the
CLI documents), the CLI's output is read back as the reply by its preset, and the sandbox
gets only the CLI's own key: the worker's ``AGENT_<name>`` under the ``<name>`` the CLI reads
(``key_env``), not the other ``AGENT_*`` variables. The same limits hold.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from pydantic import ValidationError

from bot.agent import sandbox
from bot.agent.errors import AgentError
from bot.agent.presets import Preset, Ran, prompt
from bot.agent.task import MAX_REASON_CHARS, AgentReply, AgentTask, ReplyStatus
from bot.errors import Refused

DEFAULT_OUTPUT_CAP = 1024 * 1024
PRESET_OUTPUT_CAP = 32 * 1024 * 1024
STDERR_TAIL = 4_000
PASSTHROUGH_PREFIX = "AGENT_"


class RunningAgents:
    """The agent processes running per quest, so ``stop_agent`` can kill them."""

    def __init__(self) -> None:
        self._by_quest: dict[str, set[asyncio.subprocess.Process]] = {}
        self._stopped: set[int] = set()

    @contextlib.contextmanager
    def track(self, quest_id: str, process: asyncio.subprocess.Process) -> Iterator[None]:
        self._by_quest.setdefault(quest_id, set()).add(process)
        try:
            yield
        finally:
            running = self._by_quest.get(quest_id, set())
            running.discard(process)
            if not running:
                self._by_quest.pop(quest_id, None)
            self._stopped.discard(process.pid)

    def running(self, quest_id: str) -> int:
        return len(self._by_quest.get(quest_id, ()))

    def stop(self, quest_id: str) -> int:
        """Kill every run of ``quest_id`` (its process group); how many were running."""
        processes = list(self._by_quest.get(quest_id, ()))
        for process in processes:
            self._stopped.add(process.pid)
            kill_group(process.pid)
        return len(processes)

    def was_stopped(self, process: asyncio.subprocess.Process) -> bool:
        return process.pid in self._stopped


def kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def passthrough_env(source: Mapping[str, str] | None = None) -> dict[str, str]:
    """The worker's variables an operator named for agents (``AGENT_…``), and no others."""
    env = os.environ if source is None else source
    return {k: v for k, v in env.items() if k.startswith(PASSTHROUGH_PREFIX)}


REAP_SECONDS = 10.0
"""How long to wait for a killed agent's exit and its stderr's end before giving up on them."""


class Stopped(AgentError, Refused):
    """The run was killed by ``stop_agent``: the stop refuses its result, which is not reported."""


class _Capped(Exception):
    pass


async def _read_capped(stream: asyncio.StreamReader, cap: int) -> bytes:
    data = bytearray()
    while chunk := await stream.read(65536):
        data += chunk
        if len(data) > cap:
            raise _Capped
    return bytes(data)


async def _read_tail(stream: asyncio.StreamReader, keep: int) -> bytes:
    tail = bytearray()
    while chunk := await stream.read(65536):
        tail += chunk
        del tail[:-keep]
    return bytes(tail)


class CommandAgent:
    def __init__(self, argv: Sequence[str], *, timeout_seconds: float, quest_id: str,
                 registry: RunningAgents, output_cap: int = DEFAULT_OUTPUT_CAP,
                 home: Path | None = None, network: bool = False,
                 preset: Preset | None = None, model: str | None = None,
                 key_env: str | None = None) -> None:
        if not argv and preset is None:
            raise ValueError("the command agent needs an argv")
        self.argv = tuple(argv)
        self.timeout_seconds = timeout_seconds
        self.quest_id = quest_id
        self.registry = registry
        self.output_cap = output_cap
        self.home = home
        self.network = network
        self.preset = preset
        self.model = model
        self.key_env = key_env or (preset.key_env if preset else None)

    @property
    def _cap(self) -> int:
        """A CLI's event stream carries its commands' output too: it may run to megabytes."""
        return self.output_cap if self.preset is None else max(self.output_cap,
                                                                PRESET_OUTPUT_CAP)

    async def run(self, task: AgentTask, checkout: Path) -> AgentReply:
        """Run the program once; raises ``Stopped`` when ``stop_agent`` killed it."""
        home = self.home or checkout.parent / "agent-home"
        home.mkdir(parents=True, exist_ok=True)
        if self.preset is None:
            argv, env, stdin = self.argv, passthrough_env(), task.model_dump_json().encode()
        else:
            outdir = home / "questbot-cli"
            shutil.rmtree(outdir, ignore_errors=True)  # nothing of an earlier attempt is read
            outdir.mkdir()
            text = prompt(task, self.preset.finish)
            self.preset.prompt_file(outdir).write_text(text)
            argv = tuple(self.preset.argv(self.argv or (self.preset.program,), text, outdir,
                                          self.model))
            env = self.preset.env(self.model) | key_env(self.key_env)
            stdin = text.encode() if self.preset.prompt_on_stdin else b""
        with sandbox.launch(argv, cwd=checkout, home=home, network=self.network,
                            env=env) as ready:
            if ready.problem is not None:
                return AgentReply.failed(f"the agent command {argv[0]!r} could not be "
                                         f"started: {ready.problem}")
            try:
                process = await asyncio.create_subprocess_exec(
                    *ready.argv, cwd=checkout, env=dict(ready.env), start_new_session=True,
                    stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                )  # fmt: skip
            except OSError as exc:
                return AgentReply.failed(f"the agent command {argv[0]!r} could not be "
                                         f"started: {exc.strerror or exc}")
            with self.registry.track(self.quest_id, process):
                problem, out, err = await self._talk(process, stdin)
        if problem is not None:
            return AgentReply.failed(problem)
        if self.preset is None:
            if process.returncode != 0:
                return AgentReply.failed(f"the agent exited with status {process.returncode}"
                                         + (f": {err[-1000:]}" if err else ""))
            return parse_reply(out)
        code = process.returncode if process.returncode is not None else -1
        reply = self.preset.reply(Ran(exit_code=code,
                                      stdout=out.decode(errors="replace"), stderr=err,
                                      checkout=checkout, outdir=home / "questbot-cli"))
        if reply.status is ReplyStatus.FAILED:
            hints = [f"the worker passed no {self.key_env}: set "
                     f"{PASSTHROUGH_PREFIX}{self.key_env} in its environment"
                     ] if self.key_env and not env.get(self.key_env) else []
            if not self.network:
                hints.append("the sandbox has no network: `agent.network: true` in "
                             ".github/questbot.yml lets the CLI reach its model's API")
            if hints:
                reply = reply.model_copy(update={"reason": (
                    f"{reply.reason} ({'; '.join(hints)})")[:MAX_REASON_CHARS]})
        return reply

    async def _talk(self, process: asyncio.subprocess.Process,
                    stdin: bytes) -> tuple[str | None, bytes, str]:
        """Feed ``stdin``, read stdout (capped) and stderr's tail until the process ends;
        why it was killed (``None``: it ended on its own), stdout and stderr."""
        assert process.stdin and process.stdout and process.stderr
        stdout = asyncio.ensure_future(_read_capped(process.stdout, self._cap))
        stderr = asyncio.ensure_future(_read_tail(process.stderr, STDERR_TAIL))
        problem: str | None = None
        out = b""
        try:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                process.stdin.write(stdin)
                await process.stdin.drain()
                process.stdin.close()
            out = await asyncio.wait_for(asyncio.shield(stdout), self.timeout_seconds)
            await asyncio.wait_for(process.wait(), self.timeout_seconds)
        except TimeoutError:
            problem = f"the agent ran longer than {self.timeout_seconds:g} s and was killed"
        except _Capped:
            problem = (f"the agent printed more than {self._cap} bytes on stdout and was "
                       "killed; " + ("a reply is one JSON document" if self.preset is None
                                     else "questbot reads no more of a CLI's output"))
        finally:
            kill_group(process.pid)
            # bounded: a worker must never hang on an agent it has already killed (a pipe a
            # stray grandchild still holds, an exit the loop has not been told about yet)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.wait(), REAP_SECONDS)
            stdout.cancel()
            try:
                err = (await asyncio.wait_for(stderr, REAP_SECONDS)).decode(
                    errors="replace").strip()
            except TimeoutError:
                err = ""
        if self.registry.was_stopped(process):
            raise Stopped(f"the agent run of quest {self.quest_id} was stopped")
        return problem, out, err


def key_env(name: str | None, source: Mapping[str, str] | None = None) -> dict[str, str]:
    """The CLI's API key, under the name it reads, from the worker's ``AGENT_<name>`` (an
    operator opts a key in by naming it so); nothing else of the worker's environment."""
    if not name:
        return {}
    env = os.environ if source is None else source
    value = env.get(name if name.startswith(PASSTHROUGH_PREFIX) else PASSTHROUGH_PREFIX + name)
    return {name: value} if value else {}


def parse_reply(out: bytes) -> AgentReply:
    """The reply in ``out``, or a failed reply saying how the output was malformed."""
    text = out.decode(errors="replace").strip()
    if not text:
        return AgentReply.failed("the agent printed nothing; it must print one JSON reply")
    try:
        return AgentReply.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[:3]
        where = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'reply'}: {e['msg']}" for e in first
        )
        invalid = any(e["type"] == "json_invalid" for e in first)
        kind = "is not JSON" if invalid else "is not a reply"
        return AgentReply.failed(f"the agent's output {kind} ({where})")
