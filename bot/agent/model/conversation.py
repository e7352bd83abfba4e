"""The ``model`` agent: one stage as a tool-using conversation, ended by a typed answer.

How one ``run`` goes:

1. The conversation opens with the stage's instructions and the task (``prompts``); a patch
   run that is asked again after failing checks goes on in the same conversation with the
   failing output (``prompts.repair_message``), so the model sees what it tried.
2. The model calls tools (``workbench``) as often as it needs, within ``MAX_REQUESTS``.
3. It ends with ``answer`` (the stage's type in ``answers``) or ``halt``. Before an answer is
   accepted it is judged as the stage will judge it: claims against the checkout with the
   same validation (``bot.agent.validation``), a reproduction by running it on the base.
   What is wrong goes back to the model as the retry of its answer, until it has handed in
   ``max_attempts`` answers; the last is handed on as it is, and the stage's own validation
   has the last word.
4. Every response's usage is summed into the reply's ``Usage`` (tokens, and the cost when
   the price is known), also when the conversation ended in an error.

Every ending — an answer, a halt, a failure, the deadline, the endpoint giving up — keeps the
conversation so far as the stage's transcript (``recorder``, ``bot.agent.transcript``), so a
person can read what the model was asked and what it said (``python -m bot transcript``).

Errors of the model's own (a malformed answer after its retries, too many requests, the
stage's deadline) end the run as a failed reply with the reason. The endpoint's failures —
a refusal, or no answer through the whole budget of retries (``bot.agent.model.steady``) —
raise ``EndpointFailed`` carrying what the stage spent, which ``bot.agent.runs`` turns into
``agent_halted`` (outcome ``endpoint``): the quest parks with the endpoint's words, and nothing
tries the stage again behind the person's back. ``stop_agent`` cancels a running conversation
(``ModelRuns``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, Decimal
from pathlib import Path

from pydantic_ai import Agent as Conversation
from pydantic_ai import ModelRetry, RunContext, ToolOutput, capture_run_messages
from pydantic_ai.exceptions import ModelAPIError, UnexpectedModelBehavior, UsageLimitExceeded
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import UsageLimits

from bot.agent.command import Stopped
from bot.agent.model.answers import ANSWERS, Answer, Halt, ReproduceAnswer, to_reply
from bot.agent.model.endpoint import ModelEndpoint, Prices
from bot.agent.model.errors import EndpointFailed, ModelUnavailable
from bot.agent.model.prompts import instructions, repair_message, task_message
from bot.agent.model.registry import ModelRuns
from bot.agent.model.transcribe import turns_of
from bot.agent.model.untrusted import fence
from bot.agent.model.workbench import ToolRefused, Workbench
from bot.agent.proof_runner import EXIT_NOT_STARTED, EXIT_TIMED_OUT
from bot.agent.scope import reproduction_problem
from bot.agent.task import AgentReply, AgentTask, Stage, Usage
from bot.agent.transcript import Ending, Recorder
from bot.agent.validation import CheckoutView, Verdict, lexical_path_problem, validate_claims
from bot.agent.workspace import changed_paths

MAX_REQUESTS = 60
"""Model requests one answer may take: tool calls and retries included."""
WRITES = frozenset({Stage.REPRODUCE, Stage.PATCH})


__all__ = ["EndpointFailed", "ModelAgent", "ModelUnavailable", "spent"]


@dataclass
class Turn:
    """What one answer's judging needs, and what it saw."""

    stage: Stage
    bench: Workbench
    max_attempts: int
    answers: int = 0


@dataclass
class ModelAgent:
    """An ``Agent`` (``bot.agent.task``) backed by a model at ``endpoint``."""

    endpoint: ModelEndpoint
    quest_id: str
    runs: ModelRuns
    model: str | None = None
    max_attempts: int = 3
    timeout_seconds: float = 1800.0
    history: list[ModelMessage] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    recorder: Recorder | None = None
    """Where each ending keeps the stage's conversation (``None``: nowhere)."""

    async def run(self, task: AgentTask, checkout: Path) -> AgentReply:
        """One answer for ``task``; raises ``Stopped`` when ``stop_agent`` cancelled it."""
        running = asyncio.ensure_future(self._converse(task, checkout))
        with self.runs.track(self.quest_id, running):
            try:
                return await running
            except asyncio.CancelledError:
                if self.runs.was_stopped(running):
                    raise Stopped(f"the model run of quest {self.quest_id} was "
                                  "stopped") from None
                raise

    async def _converse(self, task: AgentTask, checkout: Path) -> AgentReply:
        bench = Workbench(checkout=checkout, home=checkout.parent / "agent-home", log=task.log,
                          writable=task.stage in WRITES)
        turn = Turn(stage=task.stage, bench=bench, max_attempts=self.max_attempts)
        if self.history:
            prompt = repair_message(task.repair or "the checks failed", task.attempt)
        else:
            prompt = task_message(task)
        model = self.endpoint.chat_model(self.model)
        conversation = _conversation(task.stage, model_settings=self.endpoint.settings(),
                                     retries=self.max_attempts)
        deadline = min(self.timeout_seconds, self.endpoint.stage_seconds)
        stage = task.stage
        with capture_run_messages() as messages:
            try:
                async with model:
                    result = await asyncio.wait_for(conversation.run(
                        prompt, deps=turn, model=model, message_history=self.history or None,
                        usage_limits=UsageLimits(request_limit=MAX_REQUESTS)), deadline)
            except TimeoutError:
                return await self._failed(stage, messages, f"the stage's conversation ran "
                                          f"past its deadline of {deadline:g} s without an "
                                          "answer", Ending.TIMED_OUT)
            except UsageLimitExceeded as exc:
                return await self._failed(stage, messages, f"the conversation ran out of "
                                          f"requests without an answer ({exc.message})")
            except EndpointFailed as exc:
                self._count(self._fresh(messages))
                await self._keep(stage, messages, Ending.ENDPOINT, exc.reason)
                raise exc.spent(self.usage) from exc
            except ModelAPIError as exc:
                return await self._failed(stage, messages, f"the model endpoint refused the "
                                          f"request: {exc}", Ending.ENDPOINT)
            except UnexpectedModelBehavior as exc:
                return await self._failed(stage, messages, f"the model did not give a usable "
                                          f"answer: {exc.message}{_last_words(messages)}")
        self.history = list(result.all_messages())
        output = result.output
        await self._keep(stage, self.history,
                         Ending.HALTED if isinstance(output, Halt) else Ending.ANSWERED,
                         output.reason if isinstance(output, Halt) else "")
        return to_reply(output, self._count(result.new_messages()))

    async def _failed(self, stage: Stage, messages: list[ModelMessage], reason: str,
                      ended: Ending = Ending.FAILED) -> AgentReply:
        await self._keep(stage, messages, ended, reason)
        return AgentReply.failed(reason, usage=self._count(self._fresh(messages)))

    async def _keep(self, stage: Stage, messages: list[ModelMessage], ended: Ending,
                    reason: str = "") -> None:
        """Keep the conversation as it stands — the history it was given included — as the
        stage's transcript."""
        if self.recorder is not None:
            await self.recorder.keep(stage=stage.value, ended=ended, turns=turns_of(messages),
                                     reason=reason,
                                     model=self.model or self.endpoint.model)

    def _fresh(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        """``messages`` a failed run captured, without the history it was given."""
        known = len(self.history)
        return messages[known:] if messages[:known] == self.history else messages

    def _count(self, messages: list[ModelMessage]) -> Usage:
        """The usage of ``messages``' responses (this answer's own), added to the run's."""
        usage = spent(messages, self.endpoint.prices)
        self.usage = self.usage + usage
        return usage


def _last_words(messages: list[ModelMessage]) -> str:
    """What the model last wrote instead of a call, when it wrote prose: a maintainer can tell
    a model that answered in words from one that answered nothing (issue 25). Outside text:
    on one line, cut short; GitHub's renderer makes it inert where it is shown."""
    for message in reversed(messages):
        if isinstance(message, ModelResponse):
            text = " ".join(" ".join(p.content for p in message.parts
                                     if isinstance(p, TextPart)).split())
            if text:
                cut = text[:200] + ("…" if len(text) > 200 else "")
                return f". It answered in words, with no tool call: \"{cut}\""
            return ""
    return ""


def spent(messages: list[ModelMessage], prices: Prices | None) -> Usage:
    """Tokens and cost of the responses in ``messages``; the cost is unknown (``None``) when
    one response has no price. Cents are rounded up: a budget must not under-count."""
    tokens, cost = 0, Decimal(0)
    known = True
    for message in messages:
        if not isinstance(message, ModelResponse):
            continue
        usage = message.usage
        tokens += usage.input_tokens + usage.output_tokens
        if prices is not None:
            cost += prices.cost(usage.input_tokens, usage.output_tokens)
        elif usage.cost is not None:
            cost += usage.cost
        else:
            known = False
    if not known:
        return Usage(tokens=tokens)
    cents = int((cost * 100).to_integral_value(rounding=ROUND_CEILING))
    return Usage(tokens=tokens, cost_cents=cents, cost_usd=float(cost))


def _conversation(stage: Stage, *, model_settings: ModelSettings,
                  retries: int) -> Conversation[Turn, Answer | Halt]:
    answer = ANSWERS[stage]
    conversation: Conversation[Turn, Answer | Halt] = Conversation(
        output_type=[ToolOutput(answer, name="answer", description=answer.__doc__),
                     ToolOutput(Halt, name="halt", description=Halt.__doc__)],
        deps_type=Turn, instructions=instructions(stage), model_settings=model_settings,
        retries={"output": retries, "tools": 3}, defer_model_check=True, name="questbot")

    @conversation.tool
    def list_files(ctx: RunContext[Turn], directory: str = ".", pattern: str = "*") -> str:
        """List the checkout's files under `directory` whose names match the glob `pattern`."""
        return _tool(lambda: ctx.deps.bench.list_files(directory, pattern))

    @conversation.tool
    def read_file(ctx: RunContext[Turn], path: str, start_line: int = 1,
                  end_line: int | None = None) -> str:
        """Read a file of the checkout, with line numbers (not part of the file)."""
        return _tool(lambda: ctx.deps.bench.read_file(path, start_line, end_line))

    @conversation.tool
    def search(ctx: RunContext[Turn], pattern: str, directory: str = ".") -> str:
        """Search the checkout's files for lines matching the regular expression `pattern`."""
        return _tool(lambda: ctx.deps.bench.search(pattern, directory))

    @conversation.tool
    def read_log(ctx: RunContext[Turn]) -> str:
        """Read the failing CI job's log, from the step that failed."""
        return ctx.deps.bench.read_log()

    @conversation.tool(sequential=True)  # alone: no file tool runs while it can change files
    async def run_command(ctx: RunContext[Turn], argv: list[str]) -> str:
        """Run a command (an argv list, no shell) in the checkout's root, without network."""
        try:
            return await ctx.deps.bench.run(argv)
        except ToolRefused as exc:
            return f"refused: {exc}"

    if stage in WRITES:
        @conversation.tool
        def write_file(ctx: RunContext[Turn], path: str, content: str) -> str:
            """Write `content` as the whole of the file at `path` in the checkout."""
            return _tool(lambda: ctx.deps.bench.write_file(path, content))

    @conversation.output_validator
    async def judge(ctx: RunContext[Turn], output: Answer | Halt) -> Answer | Halt:
        turn = ctx.deps
        if isinstance(output, Halt):
            return output
        turn.answers += 1
        problem = await _problem(turn, output)
        if problem is not None and turn.answers < turn.max_attempts:
            raise ModelRetry(f"{problem}\nThis was answer {turn.answers} of "
                             f"{turn.max_attempts}. Answer again, or halt.")
        return output

    return conversation


def _tool(call: Callable[[], str]) -> str:
    try:
        return call()
    except ToolRefused as exc:
        return f"refused: {exc}"


async def _problem(turn: Turn, output: Answer) -> str | None:
    """What the stage would reject in ``output``, in words for the model; ``None`` if none."""
    claims = getattr(output, "claims", ())
    if claims:
        verdicts = validate_claims(claims, CheckoutView(turn.bench.checkout))
        rejected = [v for v in verdicts if v.verdict is Verdict.REJECTED]
        if rejected:
            lines = [f"- {v.claim.statement[:200]!r}: "
                     + "; ".join(r.message for r in v.reasons) for v in rejected]
            return ("Your answer was checked against the checkout and these claims were "
                    "rejected:\n" + "\n".join(lines))
    if isinstance(output, ReproduceAnswer):
        return await _reproduction_problem(turn.bench, output)
    return None


async def _reproduction_problem(bench: Workbench, output: ReproduceAnswer) -> str | None:
    repro = output.reproduction
    for path, content in repro.files.items():
        if (why := lexical_path_problem(path)) is not None:
            return f"the reproduction's file {path!r} cannot be written: {why}"
        try:
            bench.write_file(path, content)
        except ToolRefused as exc:
            return f"the reproduction's file {path!r} cannot be written: {exc}"
    beyond = reproduction_problem(await changed_paths(bench.checkout), repro.files)
    if beyond is not None:
        return (f"The reproduction cannot be pushed: {beyond}. Its `files` are all it may "
                "change: write back any other file you changed as it was, or halt.")
    result = await bench.execute(repro.command)
    if result.exit_code == 0:
        return (f"{repro.name} passes on the base, so it does not reproduce the failure:\n"
                + fence("reproduction output", result.output_tail[-4000:]))
    if result.exit_code in (EXIT_TIMED_OUT, EXIT_NOT_STARTED):
        what = "timed out" if result.exit_code == EXIT_TIMED_OUT else "could not be started"
        return (f"{repro.name} {what}; that is not a reproduction:\n"
                + fence("reproduction output", result.output_tail[-4000:]))
    return None
