"""How a model endpoint fails a stage, in the one tree of ``bot.errors``.

Two ways, and they are handled apart (issue 25): a *refusal* — the endpoint answered the same
request with the same refusal again, or refused it outright (4xx) — will not go away by asking
again, so the stage ends at once with the server's own words; *unavailability* — a refused
connection, a timeout, a 429, an overload — may, so it is retried with back-off within one
budget (``QUESTBOT_MODEL_RETRIES``, ``bot.agent.model.steady``) and only then given up. Neither
is retried again by the effect runner for an agent stage: the stage parks the quest with the
reason (``agent_halted``, outcome ``endpoint``). The runs outside a stage (reviews,
reflections, lessons) keep ``ModelUnavailable`` a ``RetryLater``: they are asked again later.

Imports nothing of pydantic-ai: ``bot.agent.runs`` catches these at start-up cost zero.
"""

from __future__ import annotations

from bot.agent.errors import AgentError
from bot.agent.task import Usage
from bot.errors import PermanentError, RetryLater


class EndpointFailed(AgentError):
    """The model endpoint failed the request; ``reason`` says how, in people's words, and
    ``usage`` what the stage had spent by then (set by the conversation that saw it)."""

    def __init__(self, reason: str, usage: Usage | None = None) -> None:
        self.reason = reason
        self.usage = usage or Usage()
        super().__init__(reason)

    def spent(self, usage: Usage) -> EndpointFailed:
        """The same failure, carrying what the run spent."""
        return type(self)(self.reason, usage)


class EndpointRefused(EndpointFailed, PermanentError):
    """The endpoint refused the request, and would again: fix the endpoint or the settings."""


class ModelUnavailable(EndpointFailed, RetryLater):
    """The endpoint did not answer, or was busy, through every try of the budget."""
