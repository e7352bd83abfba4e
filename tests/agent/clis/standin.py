"""A stand-in for the coding-agent CLIs questbot drives, speaking each one's documented
non-interactive interface (``bot.agent.presets.clis`` cites the documents).

Installed by the tests as ``claude``, ``codex``, ``aider``, ``mini`` and ``openhands`` in a
``bin`` directory the sandbox shows read-only, with the test interpreter in its ``#!`` line;
which CLI it is comes from its name. What it answers comes from ``scenario.json`` beside
``bin``: ``mode`` (``ok``, ``error``, ``garbage`` or ``silent``), ``answer`` (the JSON answer
the model would give), ``edit`` (files to write in the checkout, as the agent's change) and
``key`` (the API key variable it must find). It checks what the real CLI needs — the flags
that make it run unattended, the prompt, its key — and that nothing else of the worker's
environment came in; a broken expectation exits 3 with the reason on stderr, as a CLI's usage
error would.
"""

import json
import os
import pathlib
import sys

NAME = pathlib.Path(sys.argv[0]).name
ARGS = sys.argv[1:]
SCENARIO = json.loads((pathlib.Path(sys.argv[0]).parent.parent / "scenario.json").read_text())
MODE = SCENARIO.get("mode", "ok")


PRESET_ENV = {
    "aider": ("GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0", "GIT_CONFIG_KEY_1",
              "GIT_CONFIG_VALUE_1", "COLUMNS"),
    "mini": ("MSWEA_CONFIGURED",),
}
"""What each preset sets besides the key (a git identity, the console's width, a configured
mini-swe-agent): none of it the worker's."""


def die(why: str) -> None:
    print(f"{NAME}: {why}", file=sys.stderr)
    sys.exit(3)


def value(flag: str) -> str:
    if flag not in ARGS or ARGS.index(flag) + 1 >= len(ARGS):
        die(f"{flag} needs a value")
    return ARGS[ARGS.index(flag) + 1]


def require(*flags: str) -> None:
    for flag in flags:
        if flag not in ARGS:
            die(f"run unattended it needs {flag} (got {ARGS[:12]})")


def check_environment() -> None:
    key = SCENARIO["key"]
    if os.environ.get(key) != "sk-for-the-cli":
        die(f"{key} is not set to the operator's key")
    leaked = sorted(k for k in os.environ if k.startswith(("AGENT_", "QUESTBOT_", "GITHUB_")))
    if leaked:
        die(f"the worker's environment leaked in: {leaked}")
    allowed = {"PATH", "LANG", "HOME", "TMPDIR", "GIT_TERMINAL_PROMPT", "GIT_CONFIG_NOSYSTEM",
               key, *SCENARIO.get("env", {}), *PRESET_ENV.get(NAME, ())}
    extra = sorted(set(os.environ) - allowed - {"PWD", "SHLVL", "_", "LC_CTYPE"})
    if extra:
        die(f"unexpected variables: {extra}")
    for name, wanted in SCENARIO.get("env", {}).items():
        if os.environ.get(name) != wanted:
            die(f"{name} is {os.environ.get(name)!r}, not {wanted!r}")


def check_prompt(prompt: str) -> None:
    if "<untrusted-data" not in prompt or "```json" not in prompt:
        die("the prompt has no fenced facts or no answer format")
    for needle in SCENARIO.get("prompt_has", []):
        if needle not in prompt:
            die(f"the prompt lacks {needle!r}")


def work() -> str:
    """Make the agent's edits; the final message, ending in the JSON answer."""
    for path, content in SCENARIO.get("edit", {}).items():
        pathlib.Path(path).write_text(content)
    return ("I read the code and found it.\n\n```json\n" + json.dumps(SCENARIO["answer"])
            + "\n```\n")


def claude() -> None:
    prompt = value("-p")
    if value("--output-format") != "json":
        die("--output-format json expected")
    require("--dangerously-skip-permissions")
    check_prompt(prompt)
    if MODE == "garbage":
        print("\x1b[31mWelcome to Claude Code!\x1b[0m  ▌ thinking…")
        return
    usage = {"input_tokens": 1200, "output_tokens": 300, "cache_creation_input_tokens": 100,
             "cache_read_input_tokens": 400}
    result = {"type": "result", "subtype": "success", "is_error": False, "duration_ms": 4200,
              "num_turns": 3, "session_id": "5e0b9c1e", "total_cost_usd": 0.0421,
              "usage": usage, "result": work()}
    if MODE == "error":
        result |= {"subtype": "error_max_turns", "is_error": True,
                   "result": "Reached the maximum number of turns"}
    print(json.dumps(result))
    sys.exit(1 if MODE == "error" else 0)


def codex() -> None:
    if ARGS[:1] != ["exec"]:
        die("expected the exec subcommand")
    require("--json")
    if value("--sandbox") != "danger-full-access":
        die("--sandbox danger-full-access expected inside questbot's sandbox")
    if ARGS[-1] != "-":
        die("expected the prompt on stdin (-)")
    check_prompt(sys.stdin.read())
    if MODE == "garbage":
        print("Error: stdin is not a terminal\nthread 'main' panicked")
        return
    events: list[dict[str, object]] = [{"type": "thread.started", "thread_id": "0199a213"},
                                       {"type": "turn.started"},
                                       {"type": "error", "message": "Reconnecting... 1/5"}]
    if MODE == "error":
        events.append({"type": "turn.failed",
                       "error": {"message": "model response stream ended unexpectedly"}})
    else:
        events += [{"type": "item.completed", "item": {"id": "item_0", "type": "reasoning",
                                                       "text": "**Reading pager.py**"}},
                   {"type": "item.completed", "item": {"id": "item_1", "type": "agent_message",
                                                       "text": work()}},
                   {"type": "turn.completed", "usage": {"input_tokens": 24763,
                                                        "cached_input_tokens": 24448,
                                                        "output_tokens": 122}}]
    for event in events:
        print(json.dumps(event))
    sys.exit(1 if MODE == "error" else 0)


def aider() -> None:
    require("--yes-always", "--no-auto-commits", "--no-gitignore")
    check_prompt(pathlib.Path(value("--message-file")).read_text())
    pathlib.Path(".aider.tags.cache.v4").mkdir(exist_ok=True)  # as aider's repo map does
    pathlib.Path(value("--chat-history-file")).write_text("# aider chat started\n")
    if MODE == "error":
        print("litellm.AuthenticationError: invalid x-api-key", file=sys.stderr)
        sys.exit(1)
    if MODE == "garbage":
        print("Aider v0.86.1\nModel: gpt-4o with diff edit format\nRepo-map: using 1024 tokens")
        return
    print("Aider v0.86.1\n" + work() + "Tokens: 2.5k sent, 310 received. "
          "Cost: $0.0094 message, $0.0094 session.")


def mini() -> None:
    require("--yolo", "--exit-immediately")
    check_prompt(value("-t"))
    out = pathlib.Path(value("-o"))
    if MODE == "garbage":
        out.write_text("<<< not json >>>")
        return
    info = {"model_stats": {"instance_cost": 0.031, "api_calls": 7}, "mini_version": "2.0.0",
            "exit_status": "Submitted", "submission": work()}
    if MODE == "error":
        info |= {"exit_status": "LimitsExceeded", "submission": ""}
    out.write_text(json.dumps({"info": info, "messages": [],
                               "trajectory_format": "mini-swe-agent-1.1"}))


def openhands() -> None:
    require("--headless", "--json")
    check_prompt(pathlib.Path(value("-f")).read_text())
    if MODE == "garbage":
        print("Traceback (most recent call last):\n  ...\nKeyError: 'llm'")
        return
    events: list[dict[str, object]] = [
        {"type": "action", "action": "run", "command": "ls", "id": 1},
        {"type": "observation", "observation": "run", "content": "pager.py", "id": 2}]
    metrics = {"accumulated_cost": 0.12,
               "accumulated_token_usage": {"prompt_tokens": 9000, "completion_tokens": 700}}
    if MODE == "error":
        events.append({"type": "error", "message": "LLM authentication failed",
                       "llm_metrics": metrics})
    else:
        events.append({"type": "action", "action": "finish", "id": 3, "llm_metrics": metrics,
                       "args": {"final_thought": work()}})
    for event in events:
        print(json.dumps(event))
    sys.exit(1 if MODE == "error" else 0)


check_environment()
if MODE == "silent":  # ends at once, printing and writing nothing
    sys.exit(0)
{"claude": claude, "codex": codex, "aider": aider, "mini": mini, "openhands": openhands}[NAME]()
