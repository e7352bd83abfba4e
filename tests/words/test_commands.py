"""The slash-command parser: what counts as a command, what does not, and fuzzed invariants."""

from __future__ import annotations

import re

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from pydantic import ValidationError

from bot.core.policy import Checkpoint
from bot.words.commands import (
    NEEDS_REASON,
    USAGE,
    Command,
    CommandName,
    CommandProblem,
    QuestMode,
    parse_commands,
    render,
)


def commands(body: str) -> list[Command]:
    found = parse_commands(body)
    assert all(isinstance(item, Command) for item in found), found
    return [item for item in found if isinstance(item, Command)]


def problems(body: str) -> list[CommandProblem]:
    found = parse_commands(body)
    assert all(isinstance(item, CommandProblem) for item in found), found
    return [item for item in found if isinstance(item, CommandProblem)]


# --- each command ---------------------------------------------------------------------------


def test_approve_without_checkpoint() -> None:
    assert commands("/approve") == [Command(name=CommandName.APPROVE, line=1)]


@pytest.mark.parametrize(("written", "checkpoint"), [("A", "A"), ("b", "B"), (" C ", "C")])
def test_approve_with_checkpoint(written: str, checkpoint: str) -> None:
    assert commands(f"/approve {written}") == [
        Command(name=CommandName.APPROVE, checkpoint=Checkpoint(checkpoint), line=1)
    ]


@pytest.mark.parametrize("argument", ["D", "looks good", "AB", "[A]"])
def test_approve_with_anything_else_is_a_problem(argument: str) -> None:
    [problem] = problems(f"/approve {argument}")
    assert "takes an optional checkpoint A, B or C, or spend" in problem.message
    assert "usage: `/approve [A|B|C|spend]`" in problem.message
    assert problem.suggestion == "/approve [A|B|C|spend]"


@pytest.mark.parametrize("name", ["approve", "deny"])
@pytest.mark.parametrize("written", ["spend", "SPEND", " Spend "])
def test_approve_and_deny_spend(name: str, written: str) -> None:
    assert commands(f"/{name} {written}") == [
        Command(name=CommandName(name), spend=True, line=1)
    ]


@pytest.mark.parametrize("argument", ["", "A", "money", "spend now"])
def test_deny_is_only_deny_spend(argument: str) -> None:
    [problem] = problems(f"/deny {argument}")
    assert "`/deny` needs spend" in problem.message
    assert problem.suggestion == "/deny spend"


@pytest.mark.parametrize(
    "fields",
    [{"name": "deny"}, {"name": "claim", "spend": True},
     {"name": "approve", "spend": True, "checkpoint": "A"}],
)
def test_spend_shape_is_checked(fields: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        Command.model_validate({"line": 1, **fields})


@pytest.mark.parametrize("name", ["revise", "reject", "pause", "kill"])
def test_reason_commands_keep_the_rest_of_the_line(name: str) -> None:
    assert commands(f"/{name}   the test is `flaky`, see #12  ") == [
        Command(name=CommandName(name), reason="the test is `flaky`, see #12", line=1)
    ]


@pytest.mark.parametrize("name", ["revise", "reject", "pause", "kill"])
def test_reason_commands_without_a_reason_are_problems(name: str) -> None:
    [problem] = problems(f"/{name}   ")
    assert problem.message == f"`/{name}` needs a reason; usage: `/{name} <why>`"
    assert problem.suggestion == f"/{name} <why>"


@pytest.mark.parametrize("name", ["claim", "release", "resume", "status"])
def test_commands_without_arguments(name: str) -> None:
    assert commands(f"/{name}") == [Command(name=CommandName(name), line=1)]


@pytest.mark.parametrize("name", ["claim", "release", "resume", "status"])
def test_commands_without_arguments_refuse_arguments(name: str) -> None:
    [problem] = problems(f"/{name} please")
    assert problem.message == f"`/{name}` takes no arguments, not `please`; usage: `/{name}`"


@pytest.mark.parametrize(("written", "mode"), [("fix", "fix"), ("RESEARCH", "research")])
def test_quest(written: str, mode: str) -> None:
    assert commands(f"/quest {written}") == [
        Command(name=CommandName.QUEST, mode=QuestMode(mode), line=1)
    ]


def test_quest_needs_a_mode() -> None:
    [problem] = problems("/quest")
    assert problem.message == "`/quest` needs fix or research; usage: `/quest fix|research`"
    [problem] = problems("/quest everything")
    assert "needs fix or research, not `everything`" in problem.message


def test_names_are_case_insensitive() -> None:
    assert commands("/APPROVE\n/Claim") == [
        Command(name=CommandName.APPROVE, line=1),
        Command(name=CommandName.CLAIM, line=2),
    ]


def test_usage_covers_every_command() -> None:
    assert set(USAGE) == set(CommandName)


# --- where commands count ---------------------------------------------------------------------


def test_several_commands_are_returned_in_order_with_line_numbers() -> None:
    body = "Thanks!\n\n/revise use the fixture\n/aprove\n\n   /status\r\n/claim"
    found = parse_commands(body)
    assert [(type(item).__name__, item.line) for item in found] == [
        ("Command", 3),
        ("CommandProblem", 4),
        ("Command", 6),
        ("Command", 7),
    ]


def test_up_to_three_spaces_of_indentation() -> None:
    assert len(commands("   /status")) == 1
    assert commands("    /status") == []
    assert commands("\t/status") == []


def test_only_at_the_start_of_a_line() -> None:
    assert commands("please /approve this\n- /approve\n`/approve`\n\\/approve") == []


def test_word_must_end_at_a_space() -> None:
    assert commands("/approve, I think\n/status.") == []


@pytest.mark.parametrize(
    "body",
    [
        "```\n/approve\n```",
        "~~~\n/approve\n~~~",
        "````python title=x\n/approve\n```\n/approve\n````",
        "   ```\n/approve\n   ```",
        "```\n/approve",
        "~~~~\n/approve\n~~~\n/approve",
        "text\n```\n/approve\n```",
    ],
)
def test_fenced_code_is_ignored(body: str) -> None:
    assert parse_commands(body) == []


def test_text_after_a_closed_fence_counts() -> None:
    assert [c.line for c in commands("```sh\n/approve\n```\n/status")] == [4]


def test_backtick_info_string_with_a_backtick_is_not_a_fence() -> None:
    # CommonMark: ``` followed by text with a backtick is inline code, not a fence.
    assert [c.line for c in commands("``` a`b\n/status")] == [2]


def test_indented_code_is_ignored() -> None:
    assert parse_commands("Run:\n\n    /approve\n\n        /kill now") == []


@pytest.mark.parametrize(
    "body",
    [
        "> /approve",
        ">/approve",
        "> > /kill because",
        "   > /approve",
        "> you wrote:\n/approve",  # lazy continuation: GitHub renders it inside the quote
    ],
)
def test_quotes_are_ignored(body: str) -> None:
    assert parse_commands(body) == []


def test_a_heading_ends_a_quote() -> None:
    assert [c.line for c in commands("> /approve\n# Later\n/status")] == [3]


def test_a_blank_line_ends_a_quote() -> None:
    assert [c.line for c in commands("> /approve\n\n/approve")] == [3]
    assert [c.line for c in commands(">\n/approve")] == [2]


def test_inline_code_is_ignored_even_over_lines() -> None:
    assert commands("see `this\n/approve` here") == []
    assert commands("see ``a ` b\n/approve`` here") == []


def test_unmatched_backticks_do_not_hide_commands() -> None:
    assert [c.line for c in commands("it's `odd\n/status")] == [2]
    assert [c.line for c in commands("escaped \\`x\n/status\n`")] == [2]


def test_code_spans_end_with_the_paragraph() -> None:
    assert [c.line for c in commands("open `x\n\n/status\n`")] == [3]


def test_html_comments_are_ignored() -> None:
    template = "<!-- Commands:\n/approve\n/kill reason\n-->\n/status <!-- trailing -->"
    assert commands(template) == [Command(name=CommandName.STATUS, line=5)]


def test_an_unclosed_html_comment_hides_the_rest() -> None:
    assert commands("/status\n<!-- note\n/approve") == [Command(name=CommandName.STATUS, line=1)]


def test_reason_stops_at_an_html_comment() -> None:
    assert commands("/pause deploy freeze <!-- until monday -->") == [
        Command(name=CommandName.PAUSE, reason="deploy freeze", line=1)
    ]


# --- unknown commands -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "meant"),
    [("aprove", "approve"), ("stauts", "status"), ("Claimm", "claim"), ("relase", "release")],
)
def test_near_misses_name_the_closest_command(typed: str, meant: str) -> None:
    [problem] = problems(f"/{typed} B")
    assert problem.message == f"unknown command `/{typed}`; did you mean `/{meant}`?"
    assert problem.suggestion == f"/{meant}"


@pytest.mark.parametrize("text", ["/lgtm", "/retest", "/cc @alice", "/tmp is full", "/assign"])
def test_other_bots_commands_and_paths_are_left_alone(text: str) -> None:
    assert parse_commands(text) == []


def test_typed_values_are_shown_in_code_spans() -> None:
    [problem] = problems("/approve @maintainers `now`")
    assert "`` @maintainers `now` ``" in problem.message


def test_long_arguments_are_cut_in_messages() -> None:
    [problem] = problems("/status " + "x" * 500)
    assert len(problem.message) < 200


# --- the Command model --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fields",
    [
        {"name": "revise"},
        {"name": "status", "reason": "why"},
        {"name": "claim", "checkpoint": "A"},
        {"name": "quest"},
        {"name": "approve", "mode": "fix"},
        {"name": "kill", "reason": " padded "},
        {"name": "kill", "reason": "two\nlines"},
        {"name": "kill", "reason": ""},
    ],
)
def test_command_shape_is_checked(fields: dict[str, str]) -> None:
    with pytest.raises(ValidationError):
        Command.model_validate({**fields, "line": 1})


def test_command_round_trips_through_json() -> None:
    command = Command(name=CommandName.APPROVE, checkpoint=Checkpoint.B, line=3)
    assert Command.model_validate_json(command.model_dump_json()) == command


# --- properties ---------------------------------------------------------------------------------

TOKENS = [*"/`~> \t\n\r#-<!\\abcACklmoprstuvx", "<!--", "-->", "```", "/approve", "/kill x"]
MARKDOWNISH = st.lists(st.sampled_from(TOKENS), max_size=80).map("".join)
ANY_TEXT = st.one_of(st.text(max_size=300), MARKDOWNISH)

reasons = (
    st.text(max_size=40)
    .map(str.strip)
    .filter(lambda r: r and "\n" not in r and "\r" not in r and "<!--" not in r)
)


@st.composite
def any_command(draw: st.DrawFn) -> Command:
    name = draw(st.sampled_from(CommandName))
    fields: dict[str, object] = {"name": name, "line": 1}
    if name is CommandName.APPROVE:
        if draw(st.booleans()):
            fields["spend"] = True
        else:
            fields["checkpoint"] = draw(st.none() | st.sampled_from(Checkpoint))
    elif name is CommandName.DENY:
        fields["spend"] = True
    elif name is CommandName.QUEST:
        fields["mode"] = draw(st.sampled_from(QuestMode))
    elif name in NEEDS_REASON:
        fields["reason"] = draw(reasons)
    return Command.model_validate(fields)


@given(ANY_TEXT)
def test_never_raises(body: str) -> None:
    for item in parse_commands(body):
        assert item.line >= 1
        assert item.line <= len(re.split(r"\r\n|\r|\n", body))


@given(any_command())
def test_render_parses_back(command: Command) -> None:
    assert parse_commands(render(command)) == [command]


@given(any_command(), ANY_TEXT, ANY_TEXT, st.sampled_from("`~"))
def test_nothing_inside_a_fence_is_returned(
    command: Command, before: str, after: str, char: str
) -> None:
    inner = f"{before}\n{render(command)}\n{after}"
    longest = max((len(run) for run in re.findall(re.escape(char) + "+", inner)), default=0)
    fence = char * max(3, longest + 1)
    assert parse_commands(f"{fence}\n{inner}\n{fence}") == []


@given(any_command(), ANY_TEXT, ANY_TEXT, ANY_TEXT)
def test_nothing_inside_a_quote_is_returned(
    command: Command, prefix: str, before: str, after: str
) -> None:
    inner = re.split(r"\r\n|\r|\n", f"{before}\n{render(command)}\n{after}")
    quoted = "\n".join("> " + line for line in inner)
    prefix_lines = len(re.split(r"\r\n|\r|\n", prefix))
    body = f"{prefix}\n\n{quoted}"
    assert all(item.line <= prefix_lines for item in parse_commands(body))


@given(any_command(), ANY_TEXT)
def test_a_command_after_a_blank_line_is_found(command: Command, before: str) -> None:
    # Whatever came before, once it is closed off (no open fence, comment or quote), it counts.
    assume("```" not in before and "~~~" not in before and "<!--" not in before)
    body = f"{before}\n\n{render(command)}"
    found = parse_commands(body)
    last_line = len(re.split(r"\r\n|\r|\n", body))
    assert found[-1] == command.model_copy(update={"line": last_line})


@pytest.mark.parametrize(
    "body", ["<!-- x -->/approve", "<!-- x\n-->/approve", "<!-- a --> /status"]
)
def test_text_after_a_comment_does_not_start_a_line(body: str) -> None:
    assert parse_commands(body) == []


def test_a_long_comment_parses_in_linear_time() -> None:
    """A comment built to make a backtracking parser slow (unclosed code spans) costs about
    four times as much CPU at four times the length, not sixteen: measured in this process's
    CPU time, as a ratio, so a busy machine does not decide it."""
    import time

    def cost(size: int) -> float:
        body = ("`a` ``b`` ```c `d\n/status\n" * 3000)[:size]
        started = time.process_time()
        for _ in range(3):
            parse_commands(body)
        return time.process_time() - started

    cost(4096)  # warm up
    small, large = min(cost(16384) for _ in range(3)), min(cost(65536) for _ in range(3))
    assert large < 10 * max(small, 1e-4)
