"""Repository settings: every field, its default, and the message for each way it can be wrong."""

from __future__ import annotations

import pytest

from bot.core.policy import Checkpoint, Policy
from bot.settings.repository.schema import (
    SETTINGS_PATH,
    AgentKind,
    MergeMethod,
    Mode,
    Route,
    Settings,
    SettingsError,
    parse_settings,
    render_settings_problem,
)


def problems(text: str) -> list[str]:
    with pytest.raises(SettingsError) as caught:
        parse_settings(text)
    return [str(problem) for problem in caught.value.problems]


def only_problem(text: str) -> str:
    [problem] = problems(text)
    return problem


# --- defaults ---------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "\n", "# nothing yet\n", "---\n", "~\n"])
def test_empty_file_is_the_defaults(text: str) -> None:
    assert parse_settings(text) == Settings()


def test_defaults() -> None:
    settings = Settings()
    assert settings.label == "questbot"
    assert (settings.routes.check_failure, settings.routes.issue, settings.routes.comment) == (
        Route.AUTO_FIX,
        Route.HUMAN,
        Route.IGNORE,
    )
    assert (settings.checkpoints.A, settings.checkpoints.B, settings.checkpoints.C) == (
        Mode.BLOCKING,
    ) * 3
    assert settings.shadow is False
    assert settings.max_attempts == 3
    assert settings.mute_hours == 24
    assert settings.max_live_quests == 7
    assert (settings.reflection.after_bad_endings, settings.reflection.window_hours) == (5, 24)
    assert settings.reviewers == ()
    assert settings.watch_window_minutes == 60
    assert settings.proof.commands == ()
    assert settings.agent.kind is AgentKind.MODEL
    assert settings.agent.command is None
    assert settings.agent.model is None  # the worker's default model
    assert settings.agent.max_attempts == 3
    assert settings.agent.timeout_seconds == 1800


def test_the_merge_method_is_the_repositorys_unless_chosen() -> None:
    assert Settings().merge_method is None
    assert parse_settings("merge_method: squash").merge_method is MergeMethod.SQUASH
    assert parse_settings("merge_method:").merge_method is None


def test_default_policy_is_the_core_default() -> None:
    # but for the budget: the core's default is none (what a policy recorded before budgets
    # existed means), the settings always give one
    assert Settings().to_policy() == Policy(budget_cents=500, budget_tokens=2_000_000)


def test_a_key_without_a_value_means_its_default() -> None:
    assert parse_settings("proof:\n#  commands: [make test]\nroutes:\nlabel:\n") == Settings()


# --- every field --------------------------------------------------------------------------------

FULL = """
label: needs-quest
routes:
  check_failure: research_only
  issue: auto_fix
  comment: human
checkpoints: {A: advisory, B: blocking, C: advisory}
shadow: true
max_attempts: 5
mute_hours: 48
max_live_quests: 2
reviewers: ["@Octocat", hubot, octocat]
watch_window_minutes: 15
proof:
  commands:
    - pytest -q "tests/a b"
    - [ruff, check, .]
agent:
  kind: command
  command: ./scripts/agent --fast
  timeout_seconds: 600
"""


def test_every_field_is_read() -> None:
    settings = parse_settings(FULL)
    assert settings.label == "needs-quest"
    assert settings.routes.check_failure is Route.RESEARCH_ONLY
    assert settings.routes.issue is Route.AUTO_FIX
    assert settings.routes.comment is Route.HUMAN
    assert settings.checkpoints.A is Mode.ADVISORY
    assert settings.checkpoints.B is Mode.BLOCKING
    assert settings.shadow is True
    assert settings.max_attempts == 5
    assert settings.mute_hours == 48
    assert settings.max_live_quests == 2
    assert settings.reviewers == ("Octocat", "hubot")  # "@" dropped, case-insensitive dedupe
    assert settings.watch_window_minutes == 15
    assert settings.proof.commands == (("pytest", "-q", "tests/a b"), ("ruff", "check", "."))
    assert settings.agent.kind is AgentKind.COMMAND
    assert settings.agent.command == ("./scripts/agent", "--fast")
    assert settings.agent.timeout_seconds == 600


def test_to_policy_carries_what_the_core_needs() -> None:
    policy = parse_settings(FULL).to_policy()
    assert policy.blocking(Checkpoint.A) is False
    assert policy.blocking(Checkpoint.B) is True
    assert policy.blocking(Checkpoint.C) is False
    assert policy.shadow is True
    assert (policy.max_attempts, policy.mute_hours) == (5, 48)
    assert (policy.max_live_quests, policy.watch_window_minutes) == (2, 15)


def test_the_repository_may_pick_the_model_and_its_attempts() -> None:
    settings = parse_settings("agent: {kind: model, model: claude-sonnet-4-5, max_attempts: 5}")
    assert settings.agent.kind is AgentKind.MODEL
    assert (settings.agent.model, settings.agent.max_attempts) == ("claude-sonnet-4-5", 5)


def test_scripted_agent_may_keep_a_command() -> None:
    settings = parse_settings("agent: {kind: scripted, command: [run]}")
    assert settings.agent.command == ("run",)


def test_settings_are_frozen() -> None:
    with pytest.raises(ValueError, match="frozen"):
        Settings().label = "x"  # type: ignore[misc]


# --- error messages -----------------------------------------------------------------------------


def test_the_example_message() -> None:
    assert only_problem("checkpoints:\n  B: maybe\n") == (
        f"`{SETTINGS_PATH}` line 2: `checkpoints.B` must be one of blocking, advisory (got 'maybe')"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("label: ''", "`label` must not be empty"),
        ("label: ' x'", "`label` must not start or end with spaces"),
        ("label: [a]", "`label` must be text (got ['a'])"),
        ("label: " + "x" * 51, "`label` must be at most 50 characters long"),
        (
            "routes: {issue: fix}",
            "`routes.issue` must be one of auto_fix, research_only, human, ignore (got 'fix')",
        ),
        ("routes: auto_fix", "`routes` must be a mapping of settings (got text)"),
        ("checkpoints: {C: true}", "`checkpoints.C` must be one of blocking, advisory (got True)"),
        ("shadow: maybe", "`shadow` must be true or false (got 'maybe')"),
        ("shadow: 1", "`shadow` must be true or false (got 1)"),
        ("max_attempts: 0", "`max_attempts` must be at least 1 (got 0)"),
        ("max_attempts: 101", "`max_attempts` must be at most 100 (got 101)"),
        ("max_attempts: '3'", "`max_attempts` must be a whole number (got '3')"),
        ("max_attempts: 2.5", "`max_attempts` must be a whole number (got 2.5)"),
        ("max_attempts: true", "`max_attempts` must be a whole number (got True)"),
        ("mute_hours: 0", "`mute_hours` must be at least 1 (got 0)"),
        ("max_live_quests: -1", "`max_live_quests` must be at least 1 (got -1)"),
        ("reflection: {after_bad_endings: -1}",
         "`reflection.after_bad_endings` must be at least 0 (got -1)"),
        ("reflection: {window_hours: 0}", "`reflection.window_hours` must be at least 1 (got 0)"),
        ("reflection: {after_bad: 3}", "`reflection.after_bad` is not a setting; did you mean "
         "`reflection.after_bad_endings`?"),
        ("watch_window_minutes: 0", "`watch_window_minutes` must be at least 1 (got 0)"),
        ("reviewers: alice", "`reviewers` must be a list (got text)"),
        (
            "reviewers: [alice, 'bob smith']",
            "`reviewers.1` must be a GitHub login such as octocat (got 'bob smith')",
        ),
        ("reviewers: [-bad]", "`reviewers.0` must be a GitHub login such as octocat (got '-bad')"),
        ("proof: {commands: make test}", "`proof.commands` must be a list (got text)"),
        ("proof: {commands: [[]]}", "`proof.commands.0` must not be empty"),
        ("proof: {commands: ['']}", "`proof.commands.0` must not be empty"),
        ("proof: {commands: [[make, '']]}", "`proof.commands.0.1` must not be empty"),
        (
            "proof: {commands: ['pytest \"x']}",
            "`proof.commands.0` could not be split into words (No closing quotation); "
            "check its quotes",
        ),
        ("agent: {kind: docker}",
         "`agent.kind` must be one of model, command, scripted (got 'docker')"),
        ("agent: {max_attempts: 0}", "`agent.max_attempts` must be at least 1 (got 0)"),
        ("agent: {model: ''}", "`agent.model` must not be empty"),
        (
            "merge_method: fast-forward",
            "`merge_method` must be one of merge, squash, rebase (got 'fast-forward')",
        ),
        ("agent: {kind: command}",
         "`agent.command` or `agent.preset` is required when `agent.kind` is command"),
        ("agent: {kind: command, preset: cursor}",
         "`agent.preset` must be one of claude-code, codex, aider, mini-swe-agent, openhands "
         "(got 'cursor')"),
        ("agent: {kind: command, preset: codex, api_key_env: github-token}",
         "`agent.api_key_env` must be an environment variable name such as ANTHROPIC_API_KEY "
         "(got 'github-token')"),
        ("agent: {timeout_seconds: 0}", "`agent.timeout_seconds` must be at least 1 (got 0)"),
        (
            "agent: {timeout_seconds: 100000}",
            "`agent.timeout_seconds` must be at most 86400 (got 100000)",
        ),
    ],
)
def test_each_field_says_what_is_wrong(text: str, expected: str) -> None:
    assert only_problem(text).endswith(f": {expected}")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("labl: x", "`labl` is not a setting; did you mean `label`?"),
        ("max_live_quest: 3", "`max_live_quest` is not a setting; did you mean `max_live_quests`?"),
        (
            "checkpoints: {b: advisory}",
            "`checkpoints.b` is not a setting; did you mean `checkpoints.B`?",
        ),
        (
            "routes: {pull_request: human}",
            "`routes.pull_request` is not a setting; the settings here are check_failure, "
            "issue, comment",
        ),
        (
            "proof: {command: [make]}",
            "`proof.command` is not a setting; did you mean `proof.commands`?",
        ),
    ],
)
def test_unknown_keys_are_named_with_the_closest_setting(text: str, expected: str) -> None:
    assert only_problem(text).endswith(f": {expected}")


def test_every_problem_is_listed_in_file_order_with_lines() -> None:
    text = "label: ok\nshadow: maybe\nbogus: 1\nroutes:\n  issue: nope\nmax_attempts: 0\n"
    assert problems(text) == [
        f"`{SETTINGS_PATH}` line 2: `shadow` must be true or false (got 'maybe')",
        f"`{SETTINGS_PATH}` line 3: `bogus` is not a setting; the settings here are label, "
        "routes, triage, checkpoints, shadow, max_attempts, mute_hours, max_live_quests, "
        "reflection, reviewers, "
        "watch_window_minutes, merge_method, proof, agent, budget",
        f"`{SETTINGS_PATH}` line 5: `routes.issue` must be one of auto_fix, research_only, "
        "human, ignore (got 'nope')",
        f"`{SETTINGS_PATH}` line 6: `max_attempts` must be at least 1 (got 0)",
    ]


def test_error_message_is_all_problems() -> None:
    with pytest.raises(SettingsError) as caught:
        parse_settings("shadow: x\nmax_attempts: 0")
    assert str(caught.value).splitlines() == [str(p) for p in caught.value.problems]


def test_yaml_syntax_error_has_a_line() -> None:
    message = only_problem("label: ok\nroutes: {issue: human\nshadow: true\n")
    assert message.startswith(f"`{SETTINGS_PATH}` line ")
    assert "is not valid YAML" in message


def test_yaml_syntax_error_line_is_where_the_problem_is() -> None:
    message = only_problem("label: ok\nshadow: true\n  bad: indent\n")
    assert message.startswith(f"`{SETTINGS_PATH}` line 3: is not valid YAML: ")
    assert "(column" in message


def test_tabs_are_a_yaml_error() -> None:
    assert "is not valid YAML" in only_problem("routes:\n\tissue: human\n")


def test_duplicate_keys_are_an_error() -> None:
    assert only_problem("label: a\nshadow: true\nlabel: b\n") == (
        f"`{SETTINGS_PATH}` line 3: is not valid YAML: the key 'label' appears twice (column 1)"
    )


@pytest.mark.parametrize(
    ("text", "kind"), [("- a\n- b", "a list"), ("just text", "text"), ("42", "a number")]
)
def test_top_level_must_be_a_mapping(text: str, kind: str) -> None:
    assert only_problem(text) == (
        f"`{SETTINGS_PATH}` line 1: must be a mapping of settings such as `label: questbot` at "
        f"the top level (got {kind})"
    )


def test_unsafe_yaml_tags_are_refused() -> None:
    assert "is not valid YAML" in only_problem("label: !!python/object/apply:os.system [ls]")


def test_huge_files_are_refused() -> None:
    assert "larger than 64 KiB" in only_problem("# " + "x" * 70_000)


# --- telling the maintainer -----------------------------------------------------------------


def error_for(text: str) -> SettingsError:
    with pytest.raises(SettingsError) as caught:
        parse_settings(text)
    return caught.value


def test_render_says_the_last_good_settings_stay_and_how_to_fix() -> None:
    markdown = render_settings_problem(error_for("checkpoints: {B: maybe}"))
    assert markdown.startswith(f"### questbot cannot use `{SETTINGS_PATH}`")
    assert "has a problem" in markdown
    assert "keeps using the last settings questbot read successfully" in markdown
    assert "`checkpoints.B` must be one of blocking, advisory (got 'maybe')" in markdown
    assert "**To fix it**" in markdown
    assert "on the default branch and push" in markdown


def test_render_names_the_settings_in_force() -> None:
    markdown = render_settings_problem(
        error_for("shadow: x\nlabel: ''"), in_force="the settings from commit `abc1234`"
    )
    assert "has 2 problems" in markdown
    assert "keeps using the settings from commit `abc1234`." in markdown


def test_render_keeps_values_out_of_markdown() -> None:
    markdown = render_settings_problem(error_for("reviewers: ['@org/team ```']"))
    # The problem list is one fenced block longer than any backtick run in it: a value cannot
    # close it, so an @mention in a value does not notify anyone.
    fence = markdown.split("\n\n")[2].splitlines()[0]
    assert fence == "````text"
    assert markdown.count("````") == 2


def test_render_cuts_a_long_list() -> None:
    text = "\n".join(f"unknown_{n}: 1" for n in range(30))
    markdown = render_settings_problem(error_for(text))
    assert "has 30 problems" in markdown
    assert "… and 10 more" in markdown


def test_the_budget_defaults_and_reaches_the_policy() -> None:
    default = Settings().to_policy()
    assert (default.budget_cents, default.budget_tokens) == (500, 2_000_000)
    policy = parse_settings("budget: {usd: 2.5, tokens: 40000}").to_policy()
    assert (policy.budget_cents, policy.budget_tokens) == (250, 40_000)
    assert parse_settings("budget: {usd: 3}").to_policy().budget_cents == 300


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("budget: {usd: 0}", "`budget.usd` must be at least 0.01 (got 0)"),
        ("budget: {usd: lots}", "`budget.usd`: input should be a valid number"),
        ("budget: {tokens: 0}", "`budget.tokens` must be at least 1 (got 0)"),
    ],
)
def test_a_budget_that_cannot_be_used_is_named(text: str, message: str) -> None:
    with pytest.raises(SettingsError) as caught:
        parse_settings(text)
    assert [p.message for p in caught.value.problems] == [message]
