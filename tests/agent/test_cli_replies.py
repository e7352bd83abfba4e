"""Reading a CLI's final message back as a reply: the JSON answer at its end, or a refusal."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.agent.presets import PRESETS, Ran, reply_in, usage
from bot.agent.task import AgentReply, ReplyStatus
from bot.settings.repository.schema import Settings

ANSWER = {"hypothesis": "rounds down", "claims": [
    {"statement": "floor division", "confidence": 0.8,
     "evidence": [{"path": "pager.py", "line": 3, "quote": "total // per_page"}]}]}
prose = st.text().filter(lambda t: "```json" not in t.lower())


@given(prose, prose)
def test_the_fenced_answer_is_the_reply_whatever_prose_surrounds_it(
        before: str, after: str) -> None:
    text = f"{before}\n```json\n{json.dumps(ANSWER)}\n```\n{after}"
    assert reply_in(text, "cli") == AgentReply.model_validate(ANSWER)


@given(st.text())
def test_any_text_is_a_reply_or_a_failure_that_names_the_cli(text: str) -> None:
    reply = reply_in(text, "The CLI")
    if "{" not in text:
        assert reply.status is ReplyStatus.FAILED
    if reply.status is ReplyStatus.FAILED:
        assert reply.reason is not None and reply.reason.startswith("The CLI")


def test_the_last_answer_wins_and_an_edit_block_is_not_one() -> None:
    text = ("first try:\n```json\n{\"status\": \"failed\", \"reason\": \"x\"}\n```\n"
            "```python\nprint({'a': 1})\n```\nnow:\n```json\n" + json.dumps(ANSWER) + "\n```")
    assert reply_in(text, "cli").hypothesis == "rounds down"


def test_a_bare_object_at_the_end_counts_and_the_model_s_own_usage_does_not() -> None:
    spent = usage(10, 0.02)
    reply = reply_in("Done: " + json.dumps(ANSWER | {"usage": {"tokens": 99999}}), "cli",
                     spent=spent)
    assert reply.hypothesis == "rounds down" and reply.usage == spent


def test_what_is_not_an_answer_says_why() -> None:
    assert "holds no JSON answer" in (reply_in("All done!", "aider").reason or "")
    assert "is not a JSON object" in (reply_in("```json\n[1]\n```", "aider").reason or "")
    assert "is not JSON" in (reply_in("```json\n{nope\n```", "aider").reason or "")
    halted = reply_in('```json\n{"status": "needs_human", "reason": "touches auth"}\n```', "x")
    assert (halted.status, halted.reason) == (ReplyStatus.NEEDS_HUMAN, "touches auth")


def test_spend_is_whole_cents_rounded_up() -> None:
    assert usage() is None
    assert usage(0, float("nan")) is None and usage(0, float("inf")) is None
    tokens_only = usage(120)
    assert tokens_only is not None and (tokens_only.cost_cents, tokens_only.cost_usd) == (0, None)
    found = usage(0, 0.0421)
    assert found is not None and (found.cost_cents, found.cost_usd) == (5, 0.0421)
    exact = usage(0, 0.07)
    assert exact is not None and exact.cost_cents == 7


def test_the_network_is_asked_for_never_assumed() -> None:
    def agent(**fields: object) -> Settings:
        return Settings.model_validate({"agent": {"kind": "command", **fields}})

    assert not agent(preset="codex").agent.network
    assert agent(preset="codex", network=True).agent.network


huge = st.text(max_size=40_000) | st.just("<untrusted-data" * 9000) | st.just("é" * 60_000)


@settings(max_examples=30, suppress_health_check=[HealthCheck.too_slow,
                                                 HealthCheck.data_too_large])
@given(huge, huge, huge, huge)
def test_a_prompt_fits_one_command_line_argument_whatever_comes_in(
        title: str, signal: str, log: str, repair: str) -> None:
    from bot.agent.presets.prompt import MAX_PROMPT_BYTES, prompt
    from bot.agent.task import AgentTask, QuestBrief, Stage
    from bot.core.proof import Risk

    quest = QuestBrief(id="q", repo="o/r", title=title, kind="check_failure", severity="high",
                       revision=1, base="a" * 40, head=None, hypothesis=signal,
                       reproduction=title, reproduction_command=("python", repair),
                       plan=log, risk=Risk.LOW, attempts=0)
    task = AgentTask(stage=Stage.PATCH, quest=quest, signal=signal, log=log, repair=repair,
                     revise=title)
    text = prompt(task)
    assert len(text.encode()) <= MAX_PROMPT_BYTES
    fences = text.count("</untrusted-data>")
    assert text.count("<untrusted-data ") == fences >= 1  # outside text never closes one early


@settings(max_examples=60)
@given(st.sampled_from(sorted(PRESETS)),
       st.text(max_size=2000) | st.lists(st.dictionaries(
           st.sampled_from(["type", "item", "usage", "result", "is_error", "action", "message",
                            "error", "llm_metrics", "total_cost_usd", "subtype"]),
           st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
           | st.just("result") | st.just("turn.completed") | st.just("finish")
           | st.dictionaries(st.text(max_size=8), st.integers() | st.text(max_size=8),
                             max_size=3)), max_size=6).map(
           lambda events: "\n".join(json.dumps(e) for e in events)),
       st.integers(min_value=-9, max_value=255))
def test_no_output_of_a_cli_crashes_its_preset_or_passes_without_an_answer(
        name: str, stdout: str, code: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        reply = PRESETS[name].reply(Ran(exit_code=code, stdout=stdout, stderr="",
                                        checkout=Path(tmp), outdir=Path(tmp)))
    if reply.status is ReplyStatus.FAILED:
        assert reply.reason and reply.reason.startswith(PRESETS[name].title)
    else:  # an answer needs JSON, and mini-swe-agent's is in a file nobody wrote here
        assert "{" in stdout and name != "mini-swe-agent"


def test_a_cost_that_is_not_a_number_is_unknown_not_a_crash(tmp_path: Path) -> None:
    out = json.dumps({"type": "result", "subtype": "success", "is_error": False,
                      "total_cost_usd": float("inf"), "usage": {"input_tokens": 5},
                      "result": "```json\n" + json.dumps(ANSWER) + "\n```"})
    reply = PRESETS["claude-code"].reply(Ran(exit_code=0, stdout=out, stderr="",
                                             checkout=tmp_path, outdir=tmp_path))
    assert reply.status is ReplyStatus.OK and reply.usage is not None
    assert (reply.usage.tokens, reply.usage.cost_cents, reply.usage.cost_usd) == (5, 0, None)
