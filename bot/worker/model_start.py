"""The model endpoint as the worker starts with it: asked what it can do, adapted, and watched.

At start (``QUESTBOT_MODEL_PROBE``, on by default) the worker runs the probe of ``python -m bot
model check`` (``bot.agent.model.probe``) and sends the endpoint what it takes
(``Adaptation``): ``tool_choice`` ``auto`` where ``required`` is refused, ``""`` where null
content is, the output limit in the field it honours, its context window. The log says what
the endpoint did and what questbot chose, in words; ``/metrics`` says it as
``questbot_model_endpoint{setting,value}`` and ``questbot_model_context_window_tokens``, and
counts each retry, refusal and adaptation learned later (``questbot_model_requests_retried``).

An endpoint that cannot be asked at start (down, busy) does not stop the worker: questbot
starts from its defaults, and a running conversation learns from the endpoint's refusals.

The model agent's libraries (pydantic-ai and the providers' SDKs) are loaded at start too
(``load_model_libraries``), before any loop runs. Loaded when the first stage began, as they
were, their import held the worker's one event loop for seconds (about four on an idle
machine, far more on a busy one): nothing else ran meanwhile, so the quest's check run and
pull request reached GitHub only after it — the silence people saw after a red check.
"""

from __future__ import annotations

import importlib
import logging
import time

from bot.agent.model import ModelEndpoint
from bot.agent.model.probe import probe
from bot.observe.metrics import Metrics

log = logging.getLogger(__name__)

PROBE_SECONDS = 60.0
MODEL_LIBRARIES = ("bot.agent.model.conversation", "bot.agent.model.wire",
                   "pydantic_ai.providers.openai", "pydantic_ai.providers.anthropic",
                   "pydantic_ai.models.anthropic")
"""What a model agent's first stage imports (``bot.agent.runs`` loads the model agent only when
it is used, so that processes without one never pay for it)."""


def load_model_libraries() -> float:
    """Import the model agent's libraries now, while nothing waits on the event loop; the
    seconds it took. A worker with a model endpoint calls it before its loops start."""
    started = time.perf_counter()
    for name in MODEL_LIBRARIES:
        importlib.import_module(name)
    return time.perf_counter() - started


def chosen_settings(endpoint: ModelEndpoint) -> dict[str, str]:
    chosen = endpoint.chosen
    return {"tool_choice": "required" if chosen.tool_choice_required else "auto",
            "content": "null" if chosen.null_content else "empty",
            "output_limit": chosen.limit_field(endpoint.base_url)}


def watched(endpoint: ModelEndpoint, metrics: Metrics) -> ModelEndpoint:
    """``endpoint`` telling ``metrics`` of its retries and adaptations, and what it sends."""

    def observe(kind: str, what: str) -> None:
        metrics.model_event(kind, what)
        if kind == "adapted":
            metrics.model_chosen(chosen_settings(current), current.chosen.context_window)

    current = endpoint.model_copy(update={"observer": observe})
    metrics.model_chosen(chosen_settings(current), current.chosen.context_window)
    return current


async def probed(endpoint: ModelEndpoint) -> ModelEndpoint:
    """``endpoint`` adapted to what the probe found, with the log saying so."""
    facts = await probe(endpoint, timeout_seconds=PROBE_SECONDS)
    if not facts.reachable or facts.tool_calls_parsed is None:
        log.warning("could not ask the model endpoint at %s what it can do (%s); questbot "
                    "starts from its defaults and learns from what the endpoint refuses",
                    endpoint.base_url, "; ".join(facts.said) or "no answer")
        return endpoint
    adapted = endpoint.model_copy(update={"adaptation": facts.adaptation(endpoint)})
    if facts.said:
        log.info("the model endpoint at %s: %s", endpoint.base_url, "; ".join(facts.said))
    log.info("questbot's model agent %s", "; ".join(adapted.chosen.words(endpoint.base_url)))
    if not (facts.tool_calls_parsed or facts.tool_calls_as_text):
        log.warning("the model at %s gave no tool call in any form when asked for one: its "
                    "stages will likely end without an answer (python -m bot model check "
                    "says more)", endpoint.base_url)
    return adapted
