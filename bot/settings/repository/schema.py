"""Per-repository settings, read from ``.github/questbot.yml`` on the default branch.

The file is optional and every setting has a default, so an empty or absent file means "the
defaults". A file that cannot be used is never half-applied: ``parse_settings`` either returns
complete ``Settings`` or raises one ``SettingsError`` listing every problem, each with its field
path and, where the YAML says, its line. The caller keeps the last good settings in force and
posts ``render_settings_problem`` where the maintainer will see it (the check run on the push
that changed the file, or the inbox issue).

Unknown keys are errors, not silently ignored: a misspelt ``max_live_quest`` that quietly did
nothing would be worse than a message naming it and the setting it was probably meant to be.
Duplicate keys are errors for the same reason (plain YAML keeps the last one). How any text,
however odd, is read as YAML without crashing or hanging is
``bot.settings.repository.yamlfile``'s job.

Example::

    label: questbot
    routes: {check_failure: auto_fix, issue: human, comment: ignore}
    triage: {rerun_failed: true}
    checkpoints: {A: blocking, B: blocking, C: advisory}
    shadow: false
    max_attempts: 3
    max_live_quests: 7
    reflection: {after_bad_endings: 5, window_hours: 24}
    reviewers: [octocat]
    watch_window_minutes: 60
    merge_method: squash
    proof:
      commands:
        - pytest -q
        - [ruff, check, .]
    agent: {kind: model, model: gpt-4.1-mini, max_attempts: 3, timeout_seconds: 1800}
    # or: agent: {kind: command, command: ./scripts/agent}
    # or: agent: {kind: command, preset: claude-code, model: sonnet}
    budget: {usd: 5, tokens: 2000000}
"""

from __future__ import annotations

import re
import shlex
from enum import StrEnum
from typing import Annotated, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    ValidationError,
    field_validator,
    model_validator,
)

from bot.core.policy import Checkpoint, CheckpointMode, Policy
from bot.settings.repository.problems import (
    SETTINGS_PATH,
    SettingsError,
    SettingsProblem,
    describe,
    key_lines,
    kind_of,
    render_settings_problem,
)
from bot.settings.repository.yamlfile import MAX_SETTINGS_BYTES, load_yaml

__all__ = [
    "MAX_SETTINGS_BYTES",
    "SETTINGS_PATH",
    "Agent",
    "AgentKind",
    "Checkpoints",
    "MergeMethod",
    "Mode",
    "Preset",
    "Proof",
    "Route",
    "Routes",
    "Settings",
    "SettingsError",
    "SettingsProblem",
    "parse_settings",
    "render_settings_problem",
]

class Route(StrEnum):
    """What triage does with a new signal of one kind."""

    AUTO_FIX = "auto_fix"
    RESEARCH_ONLY = "research_only"
    HUMAN = "human"
    IGNORE = "ignore"


class Mode(StrEnum):
    BLOCKING = "blocking"
    ADVISORY = "advisory"


class MergeMethod(StrEnum):
    """How a quest's pull request lands (GitHub's ``merge_method``)."""

    MERGE = "merge"
    SQUASH = "squash"
    REBASE = "rebase"


class AgentKind(StrEnum):
    MODEL = "model"
    """A model behind the worker's endpoint (OpenAI chat completions or Anthropic Messages),
    in a tool-using conversation over the quest's checkout (``bot.agent.model``)."""
    COMMAND = "command"
    """An external program, run in the quest's worktree."""
    SCRIPTED = "scripted"
    """The built-in scripted agent: a test tool, answering only where the worker was given a
    script for the repository."""


def _argv(value: object) -> object:
    """A command as an argv list; a string is split as a POSIX shell would (no shell runs it)."""
    if isinstance(value, str):
        try:
            return shlex.split(value)
        except ValueError as exc:
            raise ValueError(f"could not be split into words ({exc}); check its quotes") from exc
    return value


_Word = Annotated[str, Field(min_length=1)]
Argv = Annotated[
    tuple[_Word, ...],
    # a string is split as a shell would split it: what an editor should accept
    BeforeValidator(_argv, json_schema_input_type=Annotated[str, Field(pattern=r"\S")]
                    | Annotated[list[_Word], Field(min_length=1)]),
    Field(min_length=1),
]

_LOGIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}")


def _login(value: str) -> str:
    login = value.removeprefix("@")
    if not _LOGIN.fullmatch(login):
        raise ValueError(f"must be a GitHub login such as octocat (got {value!r})")
    return login


Login = Annotated[str, AfterValidator(_login)]


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    @model_validator(mode="before")
    @classmethod
    def _empty_means_default(cls, data: object) -> object:
        """``key:`` with no value (often everything below it commented out) means the default."""
        if isinstance(data, dict):
            return {key: value for key, value in data.items() if value is not None}
        return data


class Routes(_Section):
    """Where each kind of signal goes. Issues and comments wait for a person by default:
    anyone can comment on a public repository, and nobody should spend agent time by doing so."""

    check_failure: Route = Route.AUTO_FIX
    issue: Route = Route.HUMAN
    comment: Route = Route.IGNORE


class Triage(_Section):
    rerun_failed: StrictBool = True
    """Re-run a failed check on its commit before an agent researches it: a pass ends the
    quest as flaky, with no agent run. Off, every failure routed to the agent is researched."""


class Reflection(_Section):
    """Reflection waves (``bot.core.limits``): after ``after_bad_endings`` quests ended badly
    (abandoned after work began, parked by a failure, rolled back) within ``window_hours``,
    new quests wait until a reflection passes a review (``/reflect <text>``)."""

    after_bad_endings: StrictInt = Field(default=5, ge=0, le=100)
    """0: never."""
    window_hours: StrictInt = Field(default=24, ge=1, le=24 * 90)


class Checkpoints(_Section):
    A: Mode = Mode.BLOCKING
    B: Mode = Mode.BLOCKING
    C: Mode = Mode.BLOCKING


class Proof(_Section):
    commands: tuple[Argv, ...] = ()
    """The repository's own checks, each run as a program with arguments, in order."""


class Preset(StrEnum):
    """A coding-agent CLI the ``command`` agent knows how to drive (``bot.agent.presets``)."""

    CLAUDE_CODE = "claude-code"
    CODEX = "codex"
    AIDER = "aider"
    MINI_SWE_AGENT = "mini-swe-agent"
    OPENHANDS = "openhands"


_ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]{0,63}")


def _env_name(value: str) -> str:
    if not _ENV_NAME.fullmatch(value):
        raise ValueError(f"must be an environment variable name such as ANTHROPIC_API_KEY "
                         f"(got {value!r})")
    return value


class Agent(_Section):
    kind: AgentKind = AgentKind.MODEL
    command: Argv | None = None
    """The program (``kind: command``); with a ``preset``, the CLI's own program and leading
    arguments when it is not on the sandbox's ``PATH`` under its usual name."""
    preset: Preset | None = None
    """A coding-agent CLI run in its documented non-interactive mode (``kind: command``)."""
    api_key_env: Annotated[str, AfterValidator(_env_name)] | None = None
    """The variable the preset's CLI reads its key from (default: the one it documents). Its
    value is the worker's ``AGENT_<name>``: nothing else of the worker's environment goes in."""
    model: str | None = Field(default=None, min_length=1, max_length=200)
    """The model's name at the worker's endpoint; unset, the worker's default
    (``QUESTBOT_MODEL``). The endpoint and its key are the worker's, never the repository's."""
    max_attempts: StrictInt = Field(default=3, ge=1, le=20)
    """Answers a stage may hand in: rejected evidence, a reproduction that passes and failing
    checks go back to the agent until this many were tried."""
    timeout_seconds: StrictInt = Field(default=1800, ge=1, le=24 * 3600)
    network: StrictBool = False
    """Whether the agent's sandbox reaches the network (a CLI agent calling its model's API
    needs it). It is the host's network, loopback included, so it is asked for, never
    assumed. Proofs and checks never get it."""

    @model_validator(mode="after")
    def _command_for_kind(self) -> Self:
        if self.kind is AgentKind.COMMAND and self.command is None and self.preset is None:
            raise ValueError("`agent.command` or `agent.preset` is required when `agent.kind` "
                             "is command")
        return self


class Budget(_Section):
    """What one quest may spend on its model before a person is asked for more: US dollars
    (``QUESTBOT_MODEL_PRICES`` or the known price tables turn tokens into money) and tokens
    (what a local model with no price still counts). Reaching either parks the quest with a
    spend request; each ``/approve spend`` pays for as much again."""

    usd: StrictFloat = Field(default=5.0, ge=0.01, le=10_000)
    tokens: StrictInt = Field(default=2_000_000, ge=1, le=10_000_000_000)

    @property
    def cents(self) -> int:
        return max(1, round(self.usd * 100))


class Settings(_Section):
    """Everything a repository may set; ``Settings()`` is the defaults."""

    label: str = Field(default="questbot", min_length=1, max_length=50)
    """The label that turns an issue into a signal (GitHub caps label names at 50)."""
    routes: Routes = Routes()
    triage: Triage = Triage()
    checkpoints: Checkpoints = Checkpoints()
    shadow: StrictBool = False
    max_attempts: StrictInt = Field(default=3, ge=1, le=100)
    mute_hours: StrictInt = Field(default=24, ge=1)
    max_live_quests: StrictInt = Field(default=7, ge=1)
    """Quests worked on at once; the next waits in the inbox until one ends."""
    reflection: Reflection = Reflection()
    reviewers: tuple[Login, ...] = ()
    """Logins asked to review at blocking checkpoints; they may also act without write access."""
    watch_window_minutes: StrictInt = Field(default=60, ge=1)
    merge_method: MergeMethod | None = None
    """How quest pull requests land; unset, the first the repository allows of merge, squash
    and rebase. A method the repository forbids is reported on the quest, not forced."""
    proof: Proof = Proof()
    agent: Agent = Agent()
    budget: Budget = Budget()

    @field_validator("label")
    @classmethod
    def _label_is_trimmed(cls, value: str) -> str:
        if value != value.strip():
            raise ValueError("must not start or end with spaces")
        return value

    @field_validator("reviewers")
    @classmethod
    def _once_each(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        """Logins are case-insensitive on GitHub; keep the first spelling of each."""
        seen: dict[str, str] = {}
        for login in value:
            seen.setdefault(login.lower(), login)
        return tuple(seen.values())

    def to_policy(self) -> Policy:
        """The core's view of these settings: what it needs to step a quest, and no more."""
        modes = {"A": self.checkpoints.A, "B": self.checkpoints.B, "C": self.checkpoints.C}
        return Policy(
            checkpoints={
                checkpoint: CheckpointMode(blocking=modes[checkpoint.value] is Mode.BLOCKING)
                for checkpoint in Checkpoint
            },
            shadow=self.shadow,
            max_attempts=self.max_attempts,
            mute_hours=self.mute_hours,
            max_live_quests=self.max_live_quests,
            watch_window_minutes=self.watch_window_minutes,
            budget_cents=self.budget.cents,
            budget_tokens=self.budget.tokens,
        )


# --- parsing ----------------------------------------------------------------------------------


def parse_settings(text: str) -> Settings:
    """The settings ``text`` (the file's content) sets; raises ``SettingsError`` if unusable."""
    data = load_yaml(text)
    if data is None:
        return Settings()
    if not isinstance(data, dict):
        raise SettingsError(
            [
                SettingsProblem(
                    path="",
                    message="must be a mapping of settings such as `label: questbot` at the "
                    f"top level (got {kind_of(data)})",
                    line=1,
                )
            ]
        )
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        lines = key_lines(text)
        problems = [describe(error, lines, Settings) for error in exc.errors(include_url=False)]
        problems.sort(key=lambda problem: problem.line or 0)  # stable: file order, then pydantic's
        raise SettingsError(problems) from exc
