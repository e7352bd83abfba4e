"""The conversations a model has with the real coding-agent CLIs, one per CLI and stage.

Each CLI wraps questbot's prompt in its own: Claude Code puts it after a ``<system-reminder>``
in its first user message and offers ``Bash``, ``Read`` …; Codex sends it as the last of its
user messages on the Responses API and offers ``exec_command``; aider sends worked examples
(user and assistant messages) before it and offers no tools, reading edits from the reply's
text; mini-swe-agent offers one ``bash`` tool and takes what a command prints after the line
``COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`` as its submission. These were learnt by pointing
each CLI at the recorded model server and reading its refusals; the conversations below are
the sample repository's research (and aider's patch) as a careful model would answer in
each CLI's protocol, ending — as questbot's prompt asks — in the JSON answer.

Every conversation matches on words of questbot's own prompt (``Stage: research`` and the
quest's title), so a CLI that lost the prompt on the way finds none. A turn that follows a
tool call expects the tool's output (``last_contains``): the command really ran, in the
checkout, in questbot's sandbox.

``python -m questbot_testing.modelserver.make_recorded`` writes them with the rest
(``recorded/<protocol>/cli-*.json``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from questbot_testing.modelserver.make_recorded import (
    ANTHROPIC_MODEL,
    CLAIMS,
    FIXED_PAGER,
    HYPOTHESIS,
    OPENAI_MODEL,
    _id,
)
from questbot_testing.sample import sample_files

TITLE = "tests fail on main"
"""The quest's title in the agent tests (``tests/agent/conftest.py``)."""
RESEARCH = ["Stage: research", TITLE]
PATCH = ["Stage: patch", TITLE]
SEEN = "return total // per_page"
"""A line of ``pager.py``: a tool's output holds it when the tool really read the file."""
ANSWER = {"hypothesis": HYPOTHESIS, "claims": CLAIMS[:1]}
FINAL = ("page_count divides with //, so the partial last page is dropped.\n\n```json\n"
         + json.dumps(ANSWER) + "\n```")
USAGE = {1: (3100, 80), 2: (3400, 260)}
"""Prompt and output tokens of the n-th answer of each conversation."""

_CODEX_MODEL = "gpt-5.1-codex"


def _anthropic(name: str, n: int, content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    prompt, output = USAGE[n]
    return {"id": f"msg_01{_id('anthropic', name, n)}", "type": "message", "role": "assistant",
            "model": ANTHROPIC_MODEL, "content": content, "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": prompt, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 0, "output_tokens": output,
                      "service_tier": "standard"}}


def claude_code_research() -> dict[str, Any]:
    name = "cli-claude-code-research"
    call = {"type": "tool_use", "id": f"toolu_01{_id(name, 1)}", "name": "Bash",
            "input": {"command": "cat pager.py", "description": "Show the pager module"}}
    return {"name": name, "protocol": "anthropic", "match": RESEARCH, "turns": [
        {"expect": {"tools": ["Bash"]},
         "response": _anthropic(name, 1, [call], "tool_use")},
        {"expect": {"last_contains": [SEEN]},
         "response": _anthropic(name, 2, [{"type": "text", "text": FINAL}], "end_turn")}]}


def _responses(name: str, n: int, item: dict[str, Any]) -> dict[str, Any]:
    prompt, output = USAGE[n]
    return {"id": f"resp_{_id('responses', name, n, size=32)}", "object": "response",
            "created_at": 1764000000 + n, "status": "completed", "model": _CODEX_MODEL,
            "output": [item], "parallel_tool_calls": True, "tool_choice": "auto",
            "usage": {"input_tokens": prompt, "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens": output,
                      "output_tokens_details": {"reasoning_tokens": 0},
                      "total_tokens": prompt + output}}


def codex_research() -> dict[str, Any]:
    name = "cli-codex-research"
    call = {"type": "function_call", "id": f"fc_{_id(name, 1)}", "status": "completed",
            "call_id": f"call_{_id(name, 1, 'call')}", "name": "exec_command",
            "arguments": json.dumps({"cmd": "cat pager.py"})}
    message = {"type": "message", "id": f"msg_{_id(name, 2)}", "status": "completed",
               "role": "assistant",
               "content": [{"type": "output_text", "text": FINAL, "annotations": []}]}
    return {"name": name, "protocol": "responses", "match": RESEARCH, "turns": [
        {"expect": {"tools": ["exec_command"]}, "response": _responses(name, 1, call)},
        {"expect": {"last_contains": [SEEN]}, "response": _responses(name, 2, message)}]}


def _openai(name: str, n: int, content: str | None,
            calls: Sequence[tuple[str, dict[str, Any]]] = ()) -> dict[str, Any]:
    prompt, output = USAGE[n]
    tool_calls = [{"id": f"call_{_id(name, n, i)}", "type": "function",
                   "function": {"name": tool, "arguments": json.dumps(args)}}
                  for i, (tool, args) in enumerate(calls)]
    return {"id": f"chatcmpl-{_id('openai', name, n, size=29)}", "object": "chat.completion",
            "created": 1764000000 + n, "model": OPENAI_MODEL,
            "choices": [{"index": 0, "message": {
                "role": "assistant", "content": content,
                **({"tool_calls": tool_calls} if tool_calls else {}), "refusal": None,
                "annotations": []}, "logprobs": None,
                "finish_reason": "tool_calls" if tool_calls else "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": output,
                      "total_tokens": prompt + output}}


def aider_research() -> dict[str, Any]:
    """aider shows the model no file until it is named: a reply that names one makes aider
    add it to the chat and ask again (``I added these files to the chat``), with its text."""
    name = "cli-aider-research"
    ask = "The failing test exercises the pager; I need to see pager.py."
    return {"name": name, "protocol": "openai", "match": RESEARCH, "preamble": True,
            "turns": [{"expect": {}, "response": _openai(name, 1, ask)},
                      {"expect": {"last_contains": [
                          "I added these files to the chat: pager.py"]},
                       "response": _openai(name, 2, FINAL)}]}


def aider_patch() -> dict[str, Any]:
    """aider's edit format for this model (``diff``): a SEARCH/REPLACE block naming the file,
    which aider applies to the working tree; then the answer."""
    name = "cli-aider-patch"
    before = sample_files()["pager.py"]
    assert SEEN in before and "-(-total // per_page)" in FIXED_PAGER
    text = ("Round the page count up.\n\npager.py\n```python\n<<<<<<< SEARCH\n"
            f"    {SEEN}\n=======\n    return -(-total // per_page)\n>>>>>>> REPLACE\n```\n\n"
            "```json\n" + json.dumps({"message": "Count a partial last page"}) + "\n```")
    return {"name": name, "protocol": "openai", "match": PATCH, "preamble": True,
            "turns": [{"expect": {}, "response": _openai(name, 1, text)}]}


def mini_swe_agent_research() -> dict[str, Any]:
    name = "cli-mini-swe-agent-research"
    submit = ("cat <<'QUESTBOT'\nCOMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n" + FINAL
              + "\nQUESTBOT")
    return {"name": name, "protocol": "openai", "match": RESEARCH, "turns": [
        {"expect": {"tools": ["bash"]},
         "response": _openai(name, 1, "THOUGHT: read the pager first.",
                             [("bash", {"command": "cat pager.py"})])},
        {"expect": {"last_contains": [SEEN]},
         "response": _openai(name, 2, "THOUGHT: found it; submitting.",
                             [("bash", {"command": submit})])}]}


def cli_conversations() -> list[dict[str, Any]]:
    return [claude_code_research(), codex_research(), aider_research(), aider_patch(),
            mini_swe_agent_research()]
