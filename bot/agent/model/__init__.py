"""The ``model`` agent: a model at the worker's endpoint works each stage as a conversation.

``conversation`` holds the agent (``ModelAgent``) and the theory of one run; ``endpoint``
where the model is and how it is priced; ``workbench`` the tools over the checkout;
``answers`` the typed answers that end a stage; ``prompts`` what the model is told;
``untrusted`` how outside text is cleaned and fenced; ``registry`` the running conversations.
Between the conversation and the endpoint (issue 25): ``steady`` makes every request — one
budget of retries, refusals told apart (``faults``, ``errors``), the request fitted to the
context window, tool calls written as text read back (``textual``); ``adaptation`` is what is
sent to the endpoint, found by ``probe`` (``python -m bot model check``) and spoken by
``wire``.
The conversation, tool calls, structured output and usage accounting are pydantic-ai's
(``docs/decisions.md`` says why). Only ``conversation`` imports pydantic-ai, and nothing
imports it at start-up: it and the SDKs take seconds to import, and a worker whose
repositories use no model should not pay for them.
"""

from bot.agent.model.endpoint import ModelEndpoint, Prices, Wire
from bot.agent.model.registry import ModelRuns

__all__ = ["ModelEndpoint", "ModelRuns", "Prices", "Wire"]
