"""``python -m bot model check``: what a model endpoint can do, and what questbot will do with
it — the probe the worker runs at start (``bot.agent.model.probe``), run by hand.

The endpoint is the worker's (``QUESTBOT_MODEL*`` from the environment over ``./.env``), or
what ``--url``, ``--model`` and ``--protocol`` say; the key is only ever read from the
environment. It prints, in plain words, what the endpoint accepted and refused (in its own
words) and what questbot will send it; ``--json`` prints the same as one JSON object (at least
``tool_calls_parsed``, ``tool_choice_required``, ``null_content``, ``context_window``, and
``questbot``: the adaptation chosen). Exit 0 when questbot can work with the endpoint, 1 when
it cannot (no tool call comes back in any form), 2 when it could not be asked at all.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from pydantic import ValidationError

from bot.agent.model.endpoint import ModelEndpoint, Wire, endpoint_from
from bot.agent.model.probe import Facts, probe
from bot.control_chars import one_line, say
from bot.settings.process.environment import settings_values
from bot.settings.process.model import MODEL_HINTS, MODEL_SECRETS, ModelConfig
from bot.settings.process.names import reads

MODEL_SETTINGS = sorted({*MODEL_HINTS, *MODEL_SECRETS})


def add_parser(sub: Any) -> None:
    model = sub.add_parser("model", help="the model endpoint questbot's agent uses")
    inner = model.add_subparsers(dest="model_command", required=True)
    check = inner.add_parser("check", epilog=reads(*MODEL_SETTINGS),
                             help="ask the endpoint what it can do and print what "
                             "questbot will do with it (exit 0 usable, 1 not, 2 unreachable)")
    check.add_argument("--url", help="the endpoint (default QUESTBOT_MODEL_URL)")
    check.add_argument("--model", help="the model's name (default QUESTBOT_MODEL)")
    check.add_argument("--protocol", choices=[w.value for w in Wire],
                       help="openai or anthropic (default QUESTBOT_MODEL_PROTOCOL)")
    check.add_argument("--json", action="store_true", help="one JSON object")
    check.set_defaults(func=run)


def endpoint_of(args: argparse.Namespace) -> ModelEndpoint:
    """The worker's endpoint, with what the arguments say laid over it."""
    values, _origins, _problems = settings_values()
    values = {**values, "QUESTBOT_MODEL": args.model or values.get("QUESTBOT_MODEL") or ""}
    if args.url:
        values["QUESTBOT_MODEL_URL"] = args.url
    if args.protocol:
        values["QUESTBOT_MODEL_PROTOCOL"] = args.protocol
    config = ModelConfig.model_validate({k: v for k, v in values.items() if v})
    endpoint = endpoint_from(config)
    if endpoint is None:
        raise ValueError("no model is named: set QUESTBOT_MODEL or pass --model")
    return endpoint


def _yes(value: bool | None, yes: str, no: str) -> str:
    return "not known (the endpoint did not say)" if value is None else yes if value else no


def check_text(endpoint: ModelEndpoint, facts: Facts) -> str:
    lines = [f"questbot model check: {facts.url}, model {facts.model} "
             f"({endpoint.wire.value} protocol)", ""]
    if not facts.reachable:
        lines += ["The endpoint could not be asked: " + "; ".join(facts.said), "",
                  "Check QUESTBOT_MODEL_URL (for openai it ends in /v1) and that the server "
                  "is running."]
        return "\n".join(lines)
    window = (f"{facts.context_window:,} tokens" if facts.context_window
              else "not said by the endpoint")
    calls = ("parsed into tool_calls" if facts.tool_calls_parsed else
             "written as text in the answer (questbot reads them)"
             if facts.tool_calls_as_text else "none came back")
    lines += ["What the endpoint does:",
              f"- tool_choice \"required\": "
              f"{_yes(facts.tool_choice_required, 'accepted', 'refused')}",
              f"- tool calls: {calls}",
              f"- content null beside tool calls: "
              f"{_yes(facts.null_content, 'accepted', 'refused')}",
              f"- output limit: {facts.output_limit_field or 'no field stopped a long answer'}"
              + (" is honoured" if facts.output_limit_field else ""),
              f"- context window: {window}",
              f"- streamed answers: "
              f"{_yes(facts.streaming, 'given when asked', 'not given: one JSON body')}"
              " (questbot asks for one JSON answer; a CLI pointed here may stream)"]
    if facts.said:
        lines += ["", "What it said:", *(f"- {one_line(s)}" for s in facts.said)]
    lines += ["", "What questbot will do:",
              *(f"- {w}" for w in facts.adaptation(endpoint).words(endpoint.base_url))]
    if not usable(facts):
        lines += ["", "questbot cannot work with this endpoint: no tool call came back in any "
                  "form. Try another chat template or tool-call format on the server (llama.cpp: "
                  "--jinja; vLLM: --enable-auto-tool-choice with a tool-call parser)."]
    return "\n".join(lines)


def usable(facts: Facts) -> bool:
    return facts.reachable and bool(facts.tool_calls_parsed or facts.tool_calls_as_text)


def run(args: argparse.Namespace) -> int:
    try:
        endpoint = endpoint_of(args)
    except (ValidationError, ValueError) as exc:
        say(f"questbot model check: {one_line(str(exc))}", err=True)
        return 2
    facts = asyncio.run(probe(endpoint))
    if args.json:
        say(json.dumps({**facts.as_json(),
                        "questbot": facts.adaptation(endpoint).model_dump(mode="json")},
                       indent=1))
    else:
        say(check_text(endpoint, facts))
    if not facts.reachable:
        return 2
    return 0 if usable(facts) else 1
