"""The ``model`` agent: a model at the worker's endpoint works each stage as a conversation.

``conversation`` holds the agent (``ModelAgent``) and the theory of one run; ``endpoint``
where the model is and how it is priced; ``workbench`` the tools over the checkout;
``answers`` the typed answers that end a stage; ``prompts`` what the model is told;
``untrusted`` how outside text is cleaned and fenced. The conversation, tool calls,
structured output and usage accounting are pydantic-ai's (``docs/decisions.md`` says why).
"""

from bot.agent.model.conversation import ModelAgent, ModelRuns, ModelUnavailable
from bot.agent.model.endpoint import ModelEndpoint, Prices, Wire

__all__ = ["ModelAgent", "ModelEndpoint", "ModelRuns", "ModelUnavailable", "Prices", "Wire"]
