"""The five coding-agent CLIs, each a thin adapter to its documented non-interactive mode.

Each preset says how its CLI is started for one stage (``argv``: the prompt, the flags that
make it run unattended, where it writes files), which variable holds its API key
(``key_env``), and how its output becomes the stage's reply (``reply``). The documents each
follows are cited in ``docs/decisions.md``; in short:

* **Claude Code** — ``claude -p PROMPT --output-format json``: one JSON result object on stdout
  with ``result`` (the final message), ``is_error``, ``subtype``, ``total_cost_usd`` and
  ``usage`` (``input_tokens``, ``output_tokens``, ``cache_*_input_tokens``).
* **Codex** — ``codex exec --json -`` (the prompt on stdin): JSONL events on stdout;
  ``item.completed`` with an ``agent_message`` item carries the final message,
  ``turn.completed`` the ``usage`` (``input_tokens``, of which ``cached_input_tokens``, and
  ``output_tokens``), ``turn.failed`` and ``error`` the failures (``Reconnecting…`` errors
  are transient). Codex reports no cost.
* **aider** — ``aider --message-file FILE --yes-always --no-auto-commits``: the model's reply on
  stdout, the edits left in the working tree (read as the checkout's diff by the stage), and
  ``Tokens: … sent, … received. Cost: $… message, $… session.`` lines.
* **mini-swe-agent** — ``mini -t TASK --yolo --exit-immediately -o FILE``: the trajectory file,
  whose ``info`` has ``exit_status`` (``Submitted`` when the agent finished), ``submission``
  (the final output) and ``model_stats.instance_cost``; its ``messages`` keep each model
  response's ``usage``, and an exception it stopped on is its last message.
* **OpenHands** — ``openhands --headless --json -f FILE``: JSONL events; the ``finish`` action's
  message is the final one, and ``llm_metrics`` (where the event carries it) the spend.

A CLI that exits non-zero, reports an error, or prints what cannot be read ends the run
``failed`` with a reason naming the CLI; only a JSON answer at the end of its final message
(``bot.agent.presets.replies``) is a reply.
"""

from __future__ import annotations

import json
import math
import re
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.agent.presets.prompt import FINISH
from bot.agent.presets.replies import reply_in, usage
from bot.agent.task import AgentReply, ReplyStatus

SHOWN = 1000
"""Characters of a CLI's error output quoted in the reason."""


@dataclass(frozen=True, slots=True)
class Ran:
    """How one CLI run ended: its exit status, stdout, the tail of stderr, and where it ran."""

    exit_code: int
    stdout: str
    stderr: str
    checkout: Path
    outdir: Path
    """A directory in the agent's home (writable inside the sandbox) for the CLI's files."""


class Preset:
    """One CLI. Subclasses fill in the three parts; ``failed_exit`` is the common refusal."""

    name: str = ""
    title: str = ""
    program: str = ""
    key_env: str = ""
    finish: str = FINISH
    prompt_on_stdin: bool = False
    """Whether the prompt goes to the CLI's stdin; otherwise it is in ``argv``, or in the file
    ``prompt_file(outdir)`` the argv names, which the agent writes before it starts."""

    def argv(self, program: Sequence[str], prompt: str, outdir: Path,
             model: str | None) -> list[str]:
        raise NotImplementedError

    def env(self, model: str | None) -> dict[str, str]:
        """Variables besides the key the CLI reads (none of them secret)."""
        return {}

    @staticmethod
    def prompt_file(outdir: Path) -> Path:
        return outdir / "prompt.md"

    def reply(self, ran: Ran) -> AgentReply:
        raise NotImplementedError

    def failed_exit(self, ran: Ran) -> AgentReply:
        said = (ran.stderr or ran.stdout).strip()[-SHOWN:]
        return AgentReply.failed(f"{self.title} exited with status {ran.exit_code}"
                                 + (f": {said}" if said else ""))


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _cost(value: object) -> float | None:
    """A reported cost in dollars: a finite number, not negative; anything else is unknown."""
    if isinstance(value, int | float) and not isinstance(value, bool) and (
            math.isfinite(value) and value >= 0):
        return float(value)
    return None


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _events(stdout: str) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSONL stream; lines that are not one are skipped."""
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            yield event


class ClaudeCode(Preset):
    name, title, program, key_env = "claude-code", "Claude Code", "claude", "ANTHROPIC_API_KEY"

    def argv(self, program: Sequence[str], prompt: str, outdir: Path,
             model: str | None) -> list[str]:
        # the sandbox is the confinement: Claude Code's own prompts would wait for a person
        return [*program, "-p", prompt, "--output-format", "json",
                "--dangerously-skip-permissions", *(["--model", model] if model else [])]

    def reply(self, ran: Ran) -> AgentReply:
        try:
            result = json.loads(ran.stdout)
        except ValueError:
            result = None
        if not isinstance(result, dict) or result.get("type") != "result":
            if ran.exit_code != 0:
                return self.failed_exit(ran)
            return AgentReply.failed("Claude Code printed no JSON result object; questbot runs "
                                     "it with --output-format json")
        counts = _dict(result.get("usage"))
        spent = usage(sum(_int(counts.get(k)) for k in (
            "input_tokens", "output_tokens", "cache_creation_input_tokens",
            "cache_read_input_tokens")), _cost(result.get("total_cost_usd")))
        text = result.get("result")
        if result.get("is_error") is True or result.get("subtype", "success") != "success":
            why = text if isinstance(text, str) and text.strip() else result.get("subtype")
            return AgentReply.failed(f"Claude Code reported an error: {why}", usage=spent)
        if not isinstance(text, str):
            return AgentReply.failed("Claude Code's result has no final message", usage=spent)
        return reply_in(text, self.title, spent=spent)


class Codex(Preset):
    name, title, program, key_env = "codex", "Codex", "codex", "OPENAI_API_KEY"
    prompt_on_stdin = True

    def argv(self, program: Sequence[str], prompt: str, outdir: Path,
             model: str | None) -> list[str]:
        # questbot's sandbox confines it; Codex's own would nest a second one inside.
        # The prompt is read from stdin ("-"), so no command line limit applies to it.
        return [*program, "exec", "--json", "--sandbox", "danger-full-access",
                "--output-last-message", str(outdir / "last-message.txt"),
                *(["--model", model] if model else []), "-"]

    def reply(self, ran: Ran) -> AgentReply:
        tokens, final, failure, seen = 0, None, None, False
        for event in _events(ran.stdout):
            kind = event.get("type")
            seen = seen or isinstance(kind, str)
            item = _dict(event.get("item"))
            if kind == "turn.completed":
                counts = _dict(event.get("usage"))
                tokens += _int(counts.get("input_tokens")) + _int(counts.get("output_tokens"))
            elif kind == "item.completed" and item.get("type", item.get("item_type")) in (
                    "agent_message", "assistant_message") and isinstance(item.get("text"), str):
                final = item["text"]
            elif kind == "turn.failed":
                error = _dict(event.get("error"))
                failure = str(error.get("message") or "the turn failed")
            elif kind == "error" and not str(event.get("message", "")).startswith("Reconnecting"):
                failure = str(event.get("message") or "an error")
        spent = usage(tokens)
        if failure is not None:
            return AgentReply.failed(f"Codex reported an error: {failure}", usage=spent)
        if ran.exit_code != 0:
            return self.failed_exit(ran)
        if final is None:
            last = ran.outdir / "last-message.txt"
            final = last.read_text(errors="replace") if last.is_file() else None
        if final is None:
            what = "no final message" if seen else "no JSON events"
            return AgentReply.failed(f"Codex printed {what}; questbot runs it with "
                                     "`codex exec --json`", usage=spent)
        return reply_in(final, self.title, spent=spent)


_AIDER_USAGE = re.compile(r"Tokens: ([\d.]+)(k?) sent, ([\d.]+)(k?) received\."
                          r"(?: Cost: \$([\d.]+) message, \$([\d.]+) session\.)?")


_AIDER_ERROR = re.compile(r"^(litellm\.\w+(?:Error|Exception)\b.*)$", re.MULTILINE)
"""The line aider prints when its model call fails (LiteLLM's exception and message)."""


def _count(number: str, kilo: str) -> int:
    return round(float(number) * (1000 if kilo else 1))


class Aider(Preset):
    name, title, program, key_env = "aider", "aider", "aider", "OPENAI_API_KEY"

    def argv(self, program: Sequence[str], prompt: str, outdir: Path,
             model: str | None) -> list[str]:
        # its history files go to the home, not the checkout, so they never join the patch
        return [*program, "--message-file", str(self.prompt_file(outdir)), "--yes-always",
                "--no-auto-commits",
                "--no-dirty-commits", "--no-gitignore", "--no-stream", "--no-pretty",
                "--no-check-update", "--analytics-disable",
                "--chat-history-file", str(outdir / "chat.md"),
                "--input-history-file", str(outdir / "input.txt"),
                *(["--model", model] if model else [])]

    def env(self, model: str | None) -> dict[str, str]:
        # Without a git identity aider writes one into .git/config, which the sandbox shows
        # read-only, and dies; git reads this one from the environment (git 2.31+). aider
        # commits nothing here (--no-auto-commits), so the name is never used.
        # Its console wraps what it prints at 80 columns when stdout is no terminal, newlines
        # landing inside the JSON answer's strings; it reads the width from COLUMNS.
        return {"GIT_CONFIG_COUNT": "2", "GIT_CONFIG_KEY_0": "user.name",
                "GIT_CONFIG_VALUE_0": "questbot agent", "GIT_CONFIG_KEY_1": "user.email",
                "GIT_CONFIG_VALUE_1": "agent@questbot.invalid", "COLUMNS": str(1 << 20)}

    def reply(self, ran: Ran) -> AgentReply:
        for cache in ran.checkout.glob(".aider.tags.cache*"):  # its repo-map cache
            shutil.rmtree(cache, ignore_errors=True)
        matches = list(_AIDER_USAGE.finditer(ran.stdout))
        tokens = sum(_count(m[1], m[2]) + _count(m[3], m[4]) for m in matches)
        costs = [float(m[6]) for m in matches if m[6]]
        spent = usage(tokens, costs[-1] if costs else None)
        if ran.exit_code != 0:
            return self.failed_exit(ran).model_copy(update={"usage": spent})
        reply = reply_in(ran.stdout, self.title, spent=spent)
        errors = _AIDER_ERROR.findall(ran.stdout)
        if reply.status is ReplyStatus.FAILED and errors:
            # aider prints its model's error and exits 0: that error is why there is no answer
            return AgentReply.failed(f"aider reported an error: {errors[-1][:SHOWN]}",
                                     usage=spent)
        return reply


class MiniSweAgent(Preset):
    name, title, program, key_env = "mini-swe-agent", "mini-swe-agent", "mini", "OPENAI_API_KEY"
    finish = ("as the output of your final command, the one that submits (mini-swe-agent "
              "takes what it prints as your submission)")

    def argv(self, program: Sequence[str], prompt: str, outdir: Path,
             model: str | None) -> list[str]:
        return [*program, "-t", prompt, "--yolo", "--exit-immediately",
                "-o", str(outdir / "run.traj.json"), *(["--model", model] if model else [])]

    def env(self, model: str | None) -> dict[str, str]:
        # A home without mini-swe-agent's global config starts its set-up wizard, which asks
        # at the terminal and, with none, aborts; this says it is configured.
        return {"MSWEA_CONFIGURED": "true"}

    def reply(self, ran: Ran) -> AgentReply:
        path = ran.outdir / "run.traj.json"
        try:
            data = json.loads(path.read_text(errors="replace"))
        except (OSError, ValueError):
            data = None
        info = data.get("info") if isinstance(data, dict) else None
        if not isinstance(info, dict):
            if ran.exit_code != 0:
                return self.failed_exit(ran)
            return AgentReply.failed("mini-swe-agent wrote no readable trajectory file")
        stats = _dict(info.get("model_stats"))
        messages = [m for m in data.get("messages") or () if isinstance(m, dict)]
        # each model answer keeps the API's response, and with it the tokens it took
        tokens = sum(_int(_dict(_dict(_dict(m.get("extra")).get("response")).get("usage"))
                          .get("total_tokens")) for m in messages)
        spent = usage(tokens, _cost(stats.get("instance_cost")))
        status, submission = info.get("exit_status"), info.get("submission")
        if status != "Submitted":
            # an exception it stopped on is in its last message ("exit"), with its words
            last = _dict(messages[-1]) if messages else {}
            why = submission or _dict(last.get("extra")).get("exception_str") or (
                last.get("content") if last.get("role") == "exit" else None)
            said = f": {str(why)[-SHOWN:]}" if why else ""
            return AgentReply.failed(f"mini-swe-agent stopped with {status}{said}", usage=spent)
        if not isinstance(submission, str):
            return AgentReply.failed("mini-swe-agent submitted nothing", usage=spent)
        return reply_in(submission, self.title, spent=spent)


class OpenHands(Preset):
    name, title, program, key_env = "openhands", "OpenHands", "openhands", "LLM_API_KEY"

    def argv(self, program: Sequence[str], prompt: str, outdir: Path,
             model: str | None) -> list[str]:
        return [*program, "--headless", "--json", "--override-with-envs",
                "-f", str(self.prompt_file(outdir))]

    def env(self, model: str | None) -> dict[str, str]:
        return {"LLM_MODEL": model} if model else {}

    def reply(self, ran: Ran) -> AgentReply:
        final = failure = None
        metrics: dict[str, Any] = {}
        seen = False
        for event in _events(ran.stdout):
            seen = True
            if isinstance(event.get("llm_metrics"), dict):
                metrics = _dict(event.get("llm_metrics"))
            args = _dict(event.get("args"))
            if event.get("action") == "finish":
                text = event.get("message") or args.get("final_thought") or args.get("message")
                final = str(text) if text else final
            elif event.get("type") == "error" or event.get("observation") == "error":
                failure = str(event.get("message") or event.get("content") or "an error")
        counts = _dict(metrics.get("accumulated_token_usage"))
        spent = usage(_int(counts.get("prompt_tokens")) + _int(counts.get("completion_tokens")),
                      _cost(metrics.get("accumulated_cost")))
        if failure is not None and final is None:
            return AgentReply.failed(f"OpenHands reported an error: {failure}", usage=spent)
        if ran.exit_code != 0:
            return self.failed_exit(ran).model_copy(update={"usage": spent})
        if final is None:
            what = "no finish event" if seen else "no JSON events"
            return AgentReply.failed(f"OpenHands printed {what}; questbot runs it with "
                                     "`--headless --json`", usage=spent)
        return reply_in(final, self.title, spent=spent)


PRESETS: dict[str, Preset] = {p.name: p for p in (ClaudeCode(), Codex(), Aider(),
                                                   MiniSweAgent(), OpenHands())}
