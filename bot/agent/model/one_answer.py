"""One tool-less conversation to one typed answer, the shape of every model run questbot makes
outside an agent stage — a gate's review, a reflection and its review, a lesson and its review.

They differ in what they ask and how they judge the answer; they share how a run ends, and
that must not drift between them: an endpoint that stayed down, overloaded or rate-limiting
through its budget of retries (``bot.agent.model.steady``) raises ``ModelUnavailable`` (a
``RetryLater``: the same run goes again later, nothing is recorded), while a run that ends
without a usable answer — the endpoint refused the request, out of time, out of requests, a
malformed or refused answer — is an answer of ``None`` with the reason and what it spent,
which decides nothing.

Imported only where such a run happens: pydantic-ai and its SDKs take seconds to import.
"""

from __future__ import annotations

import asyncio
from typing import TypeVar

from pydantic_ai import Agent as Conversation
from pydantic_ai import capture_run_messages
from pydantic_ai.exceptions import ModelAPIError, UnexpectedModelBehavior, UsageLimitExceeded
from pydantic_ai.usage import UsageLimits

from bot.agent.model.conversation import spent
from bot.agent.model.endpoint import ModelEndpoint
from bot.agent.model.errors import EndpointRefused, ModelUnavailable
from bot.agent.task import Usage

D = TypeVar("D")
A = TypeVar("A")


async def one_answer(endpoint: ModelEndpoint, conversation: Conversation[D, A], message: str,
                     deps: D, *, model: str | None = None, timeout_seconds: float,
                     request_limit: int) -> tuple[A | None, str, Usage]:
    """Run ``conversation`` on ``message`` to its answer: ``(answer, "", usage)``, or
    ``(None, why, usage)`` when it gave none. Raises ``ModelUnavailable`` when the endpoint
    is down."""
    chat = endpoint.chat_model(model)
    with capture_run_messages() as messages:
        try:
            async with chat:
                result = await asyncio.wait_for(conversation.run(
                    message, deps=deps, model=chat,
                    usage_limits=UsageLimits(request_limit=request_limit)), timeout_seconds)
        except ModelUnavailable:
            raise
        except EndpointRefused as exc:
            return None, exc.reason, spent(list(messages), endpoint.prices)
        except (TimeoutError, UsageLimitExceeded, ModelAPIError,
                UnexpectedModelBehavior) as exc:
            return None, str(exc) or type(exc).__name__, spent(list(messages), endpoint.prices)
    return result.output, "", spent(result.new_messages(), endpoint.prices)
