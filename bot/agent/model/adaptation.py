"""What questbot sends a model endpoint, chosen for what that endpoint can do.

Why. "OpenAI-compatible" servers differ where it hurts (issue 25, recorded against
llama-cpp-python): one answers ``tool_choice: "required"`` with HTTP 500, one refuses an
assistant message whose ``content`` is ``null`` (valid OpenAI), one reads ``max_tokens`` and
not ``max_completion_tokens`` (so nothing capped the output), one counts the output limit into
its context window (vLLM). An ``Adaptation`` is questbot's answer for one endpoint:

* ``tool_choice_required`` — send ``required``; when refused, ``auto``, and the stage's answer
  is still a tool (``answer``/``halt``: the final-answer tools), which the model is told to call;
* ``null_content`` — send ``content: null`` beside tool calls; when refused, ``""``;
* ``output_limit_field`` — the field the output limit goes in (``max_tokens`` or
  ``max_completion_tokens``);
* ``context_window`` — tokens of prompt plus output the endpoint takes, when known: the output
  limit is lowered to fit and old tool results are cut (``bot.agent.model.steady``);
* tool calls written as text are always read back (``bot.agent.model.textual``).

Where it comes from (``source``): the defaults below, the operator's settings, the probe the
worker runs at start (``bot.agent.model.probe``, the same as ``python -m bot model check``),
and what a running conversation learns when the endpoint refuses (``learned``): a refusal of
``required`` or of null content is met once, then never sent again to that endpoint by this
process (``LEARNED``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

OutputLimitField = Literal["max_tokens", "max_completion_tokens"]
OPENAI_HOSTS = ("api.openai.com",)
"""Where ``max_completion_tokens`` is the field: OpenAI's own API (its reasoning models refuse
``max_tokens``). Every compatible server questbot names reads ``max_tokens``."""


class Adaptation(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    tool_choice_required: bool = True
    null_content: bool = True
    output_limit_field: OutputLimitField | None = None
    """``None``: by the endpoint's address (``limit_field``)."""
    context_window: int | None = Field(default=None, ge=256)
    source: str = "defaults"

    def limit_field(self, base_url: str) -> OutputLimitField:
        """The output limit's field for an endpoint at ``base_url``."""
        if self.output_limit_field is not None:
            return self.output_limit_field
        return "max_completion_tokens" if any(h in base_url for h in OPENAI_HOSTS) \
            else "max_tokens"

    def words(self, base_url: str) -> list[str]:
        """What questbot does with the endpoint, a line each, as people read it."""
        return [
            "asks for a tool call with tool_choice \"required\"" if self.tool_choice_required
            else "sends tool_choice \"auto\" (the endpoint refuses \"required\") and takes the "
                 "stage's answer from its final-answer tool",
            "sends content null beside tool calls" if self.null_content
            else "sends content \"\" beside tool calls (the endpoint refuses null)",
            f"puts the output limit in {self.limit_field(base_url)}",
            (f"keeps each request within a context window of {self.context_window:,} tokens"
             if self.context_window else
             "knows no context window (set QUESTBOT_MODEL_CONTEXT_WINDOW to keep long "
             "conversations within it)"),
            "reads tool calls the model writes as text",
        ]


LEARNED: dict[str, Adaptation] = {}
"""What conversations learned of each endpoint (by its address), for this process: the next
conversation starts from it."""


def current(base_url: str, chosen: Adaptation) -> Adaptation:
    """``chosen``, with what this process learned of the endpoint since laid over it."""
    learned = LEARNED.get(base_url)
    if learned is None:
        return chosen
    return chosen.model_copy(update={
        "tool_choice_required": chosen.tool_choice_required and learned.tool_choice_required,
        "null_content": chosen.null_content and learned.null_content,
        "context_window": min(filter(None, (chosen.context_window, learned.context_window)),
                              default=None),
        "source": f"{chosen.source}, then learned"})


def learn(base_url: str, **changes: object) -> None:
    """Remember what a refusal taught about the endpoint at ``base_url``."""
    was = LEARNED.get(base_url, Adaptation(source="learned"))
    LEARNED[base_url] = was.model_copy(update=changes)
