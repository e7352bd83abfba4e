"""Write ``recorded/<protocol>/<name>.json``: each conversation below in the shape each real
API answers with.

``python -m questbot_testing.modelserver.make_recorded`` rewrites the files; they are committed, and
``questbot_testing/modelserver/test_recorded.py`` fails when they drift from this script. The
conversations are the sample repository's (``examples/sample-repo``) as a careful model
would work it, written once here so the OpenAI and the Anthropic recordings say the same; a
hostile model's (``hostile``), which questbot must refuse or contain; and a careful model's on
each bug of the bug set (``make_bugs``).

Shapes, as the APIs document and send them:

* OpenAI chat completions: ``chat.completion`` objects, an assistant ``message`` whose
  ``tool_calls`` carry ``function.arguments`` as a JSON *string*, ``finish_reason``
  ``tool_calls``, and ``usage`` with ``prompt_tokens``, ``completion_tokens``,
  ``total_tokens`` and their details.
* Anthropic Messages: ``message`` objects whose ``content`` holds ``text`` and ``tool_use``
  blocks (``input`` an object), ``stop_reason`` ``tool_use``, and ``usage`` with
  ``input_tokens``, ``output_tokens`` and the cache fields.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from questbot_testing.sample import REPRODUCTION_PATH, REPRODUCTION_TEST, sample_files

HERE = Path(__file__).parent / "recorded"
OPENAI_MODEL = "gpt-4.1-mini-2025-04-14"
ANTHROPIC_MODEL = "claude-sonnet-4-5-20250929"
REPRO_ARGV = ["$PYTHON", "-m", "unittest", "-q", "tests.test_questbot_reproduction"]
TESTS_ARGV = ["$PYTHON", "-m", "unittest", "-q"]
FIXED_PAGER = sample_files()["pager.py"].replace("return total // per_page",
                                                 "return -(-total // per_page)")
UNFIXED_PAGER = sample_files()["pager.py"].replace("return total // per_page",
                                                   "return total // per_page + 0")
READ_ONLY = ["list_files", "read_file", "search", "read_log", "run_command", "answer", "halt"]
WRITING = [*READ_ONLY, "write_file"]

CLAIMS = [
    {"statement": "page_count rounds the page count down", "confidence": 0.9,
     "evidence": [{"path": "pager.py", "quote": "return total // per_page", "line": 15}]},
    {"statement": "the existing test expects 4 pages for 10 items at 3 a page",
     "confidence": 0.95,
     "evidence": [{"path": "tests/test_pager.py",
                   "quote": "self.assertEqual(page_count(10, 3), 4)", "line": 11}]},
    {"statement": "page() refuses page numbers past page_count, so item 9 is lost",
     "confidence": 0.8,
     "evidence": [{"path": "pager.py", "quote": "if not 1 <= number <= last:", "line": 21}]},
]
HYPOTHESIS = ("page_count divides with //, which rounds down, so a partial last page is "
              "dropped: 10 items at 3 a page give 3 pages and item 9 is never shown.")
WRONG_CLAIM = {"statement": "page_count divides with a float division", "confidence": 0.9,
               "evidence": [{"path": "pager.py", "quote": "return total / per_page"}]}
PLAN = {"summary": "Round the page count up: -(-total // per_page). One line in pager.py.",
        "risk": "low", "files": ["pager.py"]}


@dataclass
class Turn:
    calls: list[tuple[str, dict[str, Any]]]
    text: str | None = None
    last_contains: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    absent_tools: list[str] = field(default_factory=list)
    tokens: tuple[int, int] = (1200, 120)


@dataclass
class Script:
    name: str
    match: list[str]
    turns: list[Turn]


def research(name: str = "research") -> Script:
    return Script(name, ["stage: research;"], [
        Turn([("read_log", {}), ("list_files", {})], text="I will look at the log and files.",
             tools=READ_ONLY, absent_tools=["write_file"], tokens=(1850, 64)),
        Turn([("read_file", {"path": "pager.py"}), ("read_file", {"path": "tests/test_pager.py"})],
             last_contains=["pager.py", "tests/test_pager.py"], tokens=(2240, 71)),
        Turn([("search", {"pattern": "page_count\\("})],
             last_contains=["return total // per_page", "assertEqual(page_count(10, 3), 4)"],
             tokens=(3310, 40)),
        Turn([("answer", {"hypothesis": HYPOTHESIS, "claims": CLAIMS})],
             last_contains=["pager.py:20:", "tests/test_pager.py:11:"], tokens=(3620, 310)),
    ])


def research_repaired() -> Script:
    return Script("research-repaired", ["stage: research;"], [
        Turn([("read_file", {"path": "pager.py"})], tools=READ_ONLY, tokens=(1850, 30)),
        Turn([("answer", {"hypothesis": HYPOTHESIS, "claims": [WRONG_CLAIM]})],
             last_contains=["return total // per_page"], tokens=(2400, 140)),
        Turn([("answer", {"hypothesis": HYPOTHESIS, "claims": CLAIMS})],
             last_contains=["claims were rejected", "does not contain the quoted text",
                            "answer 1 of 3"], tokens=(2700, 310)),
    ])


def research_exhausted() -> Script:
    return Script("research-exhausted", ["stage: research;"], [
        Turn([("answer", {"hypothesis": HYPOTHESIS, "claims": [WRONG_CLAIM]})],
             tools=READ_ONLY, tokens=(1850, 140)),
        Turn([("answer", {"hypothesis": HYPOTHESIS, "claims": [WRONG_CLAIM]})],
             last_contains=["does not contain the quoted text", "answer 1 of 2"],
             tokens=(2100, 140)),
    ])


def research_needs_human() -> Script:
    return Script("research-needs-human", ["stage: research;"], [
        Turn([("halt", {"status": "needs_human",
                        "reason": "the failure is in a vendored payment library; a person "
                                  "who owns it must decide"})],
             text="This needs a maintainer.", tools=READ_ONLY, tokens=(1850, 52)),
    ])


def reproduce() -> Script:
    return Script("reproduce", ["stage: reproduce;"], [
        Turn([("write_file", {"path": REPRODUCTION_PATH, "content": REPRODUCTION_TEST})],
             tools=WRITING, tokens=(2100, 260)),
        Turn([("run_command", {"argv": REPRO_ARGV})], last_contains=["wrote"],
             tokens=(2420, 48)),
        Turn([("answer", {"reproduction": {"name": "test_questbot_reproduction",
                                           "command": REPRO_ARGV,
                                           "files": {REPRODUCTION_PATH: REPRODUCTION_TEST}},
                          "plan": PLAN})],
             last_contains=["exit code 1", "FAILED"], tokens=(2900, 380)),
    ])


def plan() -> Script:
    return Script("plan", ["stage: plan;"], [
        Turn([("answer", {"plan": {**PLAN, "summary": PLAN["summary"] + " An empty list has "
                                   "no pages: page_count(0, 3) stays 0."}})],
             last_contains=["mention the empty list"], tools=READ_ONLY,
             absent_tools=["write_file"], tokens=(1700, 90)),
    ])


def patch() -> Script:
    return Script("patch", ["stage: patch;"], [
        Turn([("read_file", {"path": "pager.py"})], tools=WRITING, tokens=(2300, 30)),
        Turn([("write_file", {"path": "pager.py", "content": FIXED_PAGER})],
             last_contains=["return total // per_page"], tokens=(2650, 240)),
        Turn([("run_command", {"argv": TESTS_ARGV})], last_contains=["wrote"],
             tokens=(2920, 40)),
        Turn([("answer", {"message": "Count a partial last page in page_count"})],
             last_contains=["exit code 0"], tokens=(3100, 30)),
    ])


def patch_refused() -> Script:
    return Script("patch-refused", ["stage: patch;"], [
        Turn([("write_file", {"path": "pager.py", "content": UNFIXED_PAGER})],
             tools=WRITING, tokens=(2300, 240)),
        Turn([("answer", {"message": "Adjust page_count"})], last_contains=["wrote"],
             tokens=(2600, 30)),
        Turn([("halt", {"status": "refused",
                        "reason": "the checks show the reproduction expects a behaviour "
                                  "change I will not make without a maintainer"})],
             last_contains=["The checks failed on your change", "FAILED"],
             tokens=(3400, 60)),
    ])


REVIEW_TOOLS = ["answer"]
"""A reviewer has no tools: it reads the pinned evidence it is given (``bot.reviews``)."""


def review_hypothesis() -> Script:
    """The automated check at A on the sample: the hypothesis cites its own words."""
    return Script("review-hypothesis", ["review: automated_check;", "partial last page"], [
        Turn([("answer", {"verdict": "approve",
                          "synopsis": "The hypothesis names one cause, floor division, and "
                                      "an example that shows it.",
                          "claims": [{"statement": "the cause is named: floor division",
                                      "confidence": 0.9,
                                      "evidence": [{"path": "artifacts/hypothesis",
                                                    "quote": "page_count divides with //"}]}]})],
             tools=REVIEW_TOOLS, tokens=(1400, 120)),
    ])


def review_design() -> Script:
    """The design reviewer at B on the sample's plan: bounded, tested by its reproduction."""
    return Script("review-design", ["review: design_reviewer;", "Round the page count up"], [
        Turn([("answer", {"verdict": "approve",
                          "synopsis": "The reproduction is a test of its own that fails for "
                                      "the stated reason, and the plan changes one line.",
                          "claims": [
                              {"statement": "the scope is one line of pager.py",
                               "confidence": 0.9,
                               "evidence": [{"path": "artifacts/plan",
                                             "quote": "One line in pager.py."}]},
                              {"statement": "the criterion is the reproduction test",
                               "confidence": 0.8,
                               "evidence": [{"path": "artifacts/reproduction",
                                             "quote": "test_questbot_reproduction"}]}]})],
             tools=REVIEW_TOOLS, tokens=(1600, 180)),
    ])


def review_design_repaired() -> Script:
    """A design review that first cites what it was never shown, is told so, and then asks
    for a revision citing the plan."""
    outside = {"statement": "page_count rounds down", "confidence": 0.9,
               "evidence": [{"path": "pager.py", "quote": "return total // per_page"}]}
    return Script("review-design-repaired", ["review: design_reviewer;", "fix the bound"], [
        Turn([("answer", {"verdict": "approve", "synopsis": "Looks right.",
                          "claims": [outside]})], tools=REVIEW_TOOLS, tokens=(1200, 90)),
        Turn([("answer", {"verdict": "revise",
                          "synopsis": "The plan says what to change but not which checks "
                                      "must pass: decide the criterion before the run.",
                          "claims": [{"statement": "the plan names no check",
                                      "confidence": 0.85,
                                      "evidence": [{"path": "artifacts/plan",
                                                    "quote": "fix the bound"}]}]})],
             last_contains=["were rejected", "answer 1 of 2"], tokens=(1500, 140)),
    ])


def review_experiment_unfounded() -> Script:
    """An experiment review that cites only what it was never shown, twice."""
    outside = {"statement": "the tests pass", "confidence": 0.9,
               "evidence": [{"path": "tests/test_pager.py", "quote": "assertEqual"}]}
    answer = ("answer", {"verdict": "approve", "synopsis": "The tests pass.",
                         "claims": [outside]})
    return Script("review-experiment-unfounded",
                  ["review: experiment_reviewer;", "fix the bound"], [
        Turn([answer], tools=REVIEW_TOOLS, tokens=(1300, 80)),
        Turn([answer], last_contains=["were rejected", "answer 1 of 2"], tokens=(1500, 80)),
    ])


def claim(statement: str, path: str, quote: str, confidence: float = 0.9) -> dict[str, Any]:
    return {"statement": statement, "confidence": confidence,
            "evidence": [{"path": path, "quote": quote}]}


LOG_FIRST = "Research starts from the failing log and quotes it before any fix is planned."
VAGUE = "We will be more careful."
QUOTE_LOG = "Each quest's hypothesis must quote the failing log before a plan is written."
SENT_BACK = ("It names no cause the record shows and no change that would have prevented "
             "these endings: both quests were killed as the wrong idea, and it does not say "
             "why.")


def reflect_write() -> Script:
    """questbot's reflection on two quests killed for guessing (``bot.reflection.runs``)."""
    return Script("reflect-write", ["reflect: write; attempt 1 of", "guessed at the cause"], [
        Turn([("answer", {
            "went_wrong": "Both quests guessed at the cause instead of reading the failing "
                          "log, and a maintainer stopped each.",
            "changes": LOG_FIRST,
            "claims": [claim("the first quest was stopped for guessing", "endings/1",
                             "guessed at the cause"),
                       claim("the second was stopped because the log disagreed",
                             "endings/2", "the log said otherwise")]})],
             tools=REVIEW_TOOLS, tokens=(1500, 160)),
    ])


def review_reflection_pass() -> Script:
    return Script("review-reflection-pass",
                  ["review: reflection_reviewer;", "Research starts from the failing log"], [
        Turn([("answer", {
            "verdict": "pass",
            "synopsis": "It names the cause both endings record, guessing without the log, "
                        "and a change that would have caught it.",
            "claims": [claim("the first ending records the guess", "endings/1",
                             "guessed at the cause"),
                       claim("the change answers it", "reflection",
                             "Research starts from the failing log")]})],
             tools=REVIEW_TOOLS, tokens=(1700, 120)),
    ])


def reflect_vague() -> Script:
    return Script("reflect-vague", ["reflect: write; attempt 1 of", "wrong idea"], [
        Turn([("answer", {"went_wrong": "Things went wrong with two quests.", "changes": VAGUE,
                          "claims": [claim("a quest was killed", "endings/1", "wrong idea")]})],
             tools=REVIEW_TOOLS, tokens=(1400, 60)),
    ])


def review_reflection_reject() -> Script:
    return Script("review-reflection-reject", ["review: reflection_reviewer;", VAGUE], [
        Turn([("answer", {
            "verdict": "reject", "synopsis": SENT_BACK,
            "claims": [claim("the record says only that the idea was wrong", "endings/1",
                             "wrong idea"),
                       claim("the change is no change", "reflection", VAGUE)]})],
             tools=REVIEW_TOOLS, tokens=(1600, 110)),
    ])


def reflect_again() -> Script:
    """The second attempt, told why the first was sent back."""
    return Script("reflect-again", ["reflect: write; attempt 2 of", "wrong idea"], [
        Turn([("answer", {
            "went_wrong": "Both quests went after the wrong idea: each was planned before "
                          "its hypothesis was checked against the failure.",
            "changes": QUOTE_LOG,
            "claims": [claim("both were killed as the wrong idea", "endings/2",
                             "wrong idea")]})],
             last_contains=["It names no cause the record shows"], tools=REVIEW_TOOLS,
             tokens=(1800, 150)),
    ])


def review_reflection_pass_again() -> Script:
    return Script("review-reflection-pass-again",
                  ["review: reflection_reviewer;", "must quote the failing log"], [
        Turn([("answer", {
            "verdict": "pass",
            "synopsis": "It names what both endings share and a check that would have "
                        "stopped the wrong idea before any plan.",
            "claims": [claim("both endings are the wrong idea", "endings/2", "wrong idea"),
                       claim("the change is concrete", "reflection",
                             "must quote the failing log")]})],
             tools=REVIEW_TOOLS, tokens=(1750, 120)),
    ])


def reflect_unfounded() -> Script:
    """A writer that backs its reflection with what the record does not hold, twice."""
    answer = ("answer", {"went_wrong": "The pager rounds down.", "changes": "Round up.",
                         "claims": [claim("the pager rounds down", "pager.py",
                                          "return total // per_page")]})
    return Script("reflect-unfounded", ["reflect: write; attempt 1 of", "wrong idea"], [
        Turn([answer], tools=REVIEW_TOOLS, tokens=(1400, 60)),
        Turn([answer], last_contains=["were rejected", "answer 1 of 2"], tokens=(1500, 60)),
    ])


def review_reflection_unfounded() -> Script:
    """A reviewer that passes the reflection citing what it was never shown, twice."""
    outside = claim("the tests pass now", "tests/test_pager.py", "assertEqual")
    answer = ("answer", {"verdict": "pass", "synopsis": "Fine.", "claims": [outside]})
    return Script("review-reflection-unfounded",
                  ["review: reflection_reviewer;", "Research starts from the failing log"], [
        Turn([answer], tools=REVIEW_TOOLS, tokens=(1300, 60)),
        Turn([answer], last_contains=["were rejected", "answer 1 of 2"], tokens=(1500, 60)),
    ])


LESSON_TOOLS = ["lesson"]
"""The lesson writer has no tools either: it reads the ended quest's record (``consolidation``)."""
LESSON = ("In this repository the tests check fails when page_count rounds a partial last "
          "page down with //; the fix pattern was ceiling division, -(-total // per_page), "
          "in pager.py, proved by a reproduction test of its own.")
LESSON_ROLLED_BACK = ("Ceiling division in page_count is the fix that holds in this "
                      "repository; reuse it for any paging bug.")
LESSON_ABANDONED = ("In this repository a plan to fix the bound is stopped by maintainers; "
                    "prefer changes nobody reviews.")


def lesson(name: str, ending: str, text: str) -> Script:
    """The writer, after a quest's ``ending``: one lesson, in one answer."""
    return Script(name, [f"lesson: {ending};"], [
        Turn([("lesson", {"lesson": text})], tools=LESSON_TOOLS, tokens=(1500, 90)),
    ])


def review_consolidation() -> Script:
    """The consolidation reviewer keeps the landed quest's lesson: the record bears it out."""
    return Script("review-consolidation",
                  ["review: consolidation_reviewer;", "the fix pattern was ceiling division"], [
        Turn([("answer", {"verdict": "approve",
                          "synopsis": "The record shows the cause, the one-line fix and that "
                                      "it landed and stayed clean; the lesson says no more.",
                          "claims": [
                              {"statement": "the quest landed and was watched clean",
                               "confidence": 0.95,
                               "evidence": [{"path": "artifacts/ending",
                                             "quote": "landed and watched clean"}]},
                              {"statement": "the cause was floor division in page_count",
                               "confidence": 0.9,
                               "evidence": [{"path": "artifacts/hypothesis",
                                             "quote": "page_count divides with //"}]},
                              {"statement": "the fix rounded the page count up",
                               "confidence": 0.9,
                               "evidence": [{"path": "artifacts/plan",
                                             "quote": "Round the page count up"}]}]})],
             tools=REVIEW_TOOLS, tokens=(1700, 160)),
    ])


def review_consolidation_rejected() -> Script:
    """A rolled-back fix taught as the one that holds: rejected, citing the ending."""
    return Script("review-consolidation-rejected",
                  ["review: consolidation_reviewer;", "the fix that holds"], [
        Turn([("answer", {"verdict": "reject",
                          "synopsis": "The fix was rolled back after a regression, so the "
                                      "record says it did not hold; the lesson says the "
                                      "opposite and generalises to every paging bug.",
                          "claims": [{"statement": "the landed fix was rolled back",
                                      "confidence": 0.95,
                                      "evidence": [{"path": "artifacts/ending",
                                                    "quote": "rolled back after a "
                                                             "regression"}]}]})],
             tools=REVIEW_TOOLS, tokens=(1600, 120)),
    ])


def review_consolidation_unfounded() -> Script:
    """A consolidation review that approves citing what the record never held, twice."""
    answer = ("answer", {"verdict": "approve", "synopsis": "Sounds right.",
                         "claims": [{"statement": "maintainers stop such plans",
                                     "confidence": 0.6,
                                     "evidence": [{"path": "CONTRIBUTING.md",
                                                   "quote": "we stop plans"}]}]})
    return Script("review-consolidation-unfounded",
                  ["review: consolidation_reviewer;", "prefer changes nobody reviews"], [
        Turn([answer], tools=REVIEW_TOOLS, tokens=(1400, 70)),
        Turn([answer], last_contains=["were rejected", "answer 1 of 2"], tokens=(1600, 70)),
    ])


PROBE = "questbot model check"
"""The first words of each request `python -m bot model check` sends (bot.agent.model.probe)."""


def probe_tools() -> Script:
    """What a model that calls tools answers the probe: the tool it is told to call, then a
    word once the tool's result is back (the second request carries the first answer, which is
    how the probe sees whether the server takes an assistant message with null content)."""
    return Script("probe-tools", [f"{PROBE}: tools"], [
        Turn([("note", {"text": "ok"})], tools=["note"], tokens=(130, 14)),
        Turn([], text="done", last_contains=["noted"], tokens=(170, 2)),
    ])


def probe_limit() -> Script:
    """A long answer, so an output limit the server honours shows: it stops at the limit."""
    return Script("probe-limit", [f"{PROBE}: limit"], [
        Turn([], text=" ".join(str(n) for n in range(1, 101)), tokens=(40, 292)),
    ])


SCRIPTS = [research(), research_repaired(), research_exhausted(), research_needs_human(),
           reproduce(), plan(), patch(), patch_refused(), review_hypothesis(), review_design(),
           review_design_repaired(), review_experiment_unfounded(), reflect_write(),
           review_reflection_pass(), reflect_vague(), review_reflection_reject(),
           reflect_again(), review_reflection_pass_again(), review_reflection_unfounded(),
           reflect_unfounded(), lesson("lesson-landed", "landed", LESSON),
           lesson("lesson-rolled-back", "rolled_back", LESSON_ROLLED_BACK),
           lesson("lesson-abandoned", "abandoned", LESSON_ABANDONED), review_consolidation(),
           review_consolidation_rejected(), review_consolidation_unfounded(), probe_tools(),
           probe_limit()]


def _id(*parts: object, size: int = 24) -> str:
    return hashlib.sha256("/".join(map(str, parts)).encode()).hexdigest()[:size]


def openai_turn(script: Script, n: int, turn: Turn) -> dict[str, Any]:
    calls = [{"id": f"call_{_id(script.name, n, i)}", "type": "function",
              "function": {"name": name, "arguments": json.dumps(args)}}
             for i, (name, args) in enumerate(turn.calls)]
    prompt, completion = turn.tokens
    return {
        "id": f"chatcmpl-{_id('openai', script.name, n, size=29)}",
        "object": "chat.completion",
        "created": 1764000000 + n,
        "model": OPENAI_MODEL,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": turn.text,
                                             **({"tool_calls": calls} if calls else {}),
                                             "refusal": None, "annotations": []},
                     "logprobs": None, "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                  "total_tokens": prompt + completion,
                  "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                  "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                                "accepted_prediction_tokens": 0,
                                                "rejected_prediction_tokens": 0}},
        "service_tier": "default",
        "system_fingerprint": "fp_6f2eabb9a5",
    }


def anthropic_turn(script: Script, n: int, turn: Turn) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if turn.text:
        content.append({"type": "text", "text": turn.text})
    content += [{"type": "tool_use", "id": f"toolu_01{_id(script.name, n, i)}", "name": name,
                 "input": args} for i, (name, args) in enumerate(turn.calls)]
    prompt, completion = turn.tokens
    return {
        "id": f"msg_01{_id('anthropic', script.name, n)}",
        "type": "message",
        "role": "assistant",
        "model": ANTHROPIC_MODEL,
        "content": content,
        "stop_reason": "tool_use" if turn.calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": prompt, "cache_creation_input_tokens": 0,
                  "cache_read_input_tokens": 0, "output_tokens": completion,
                  "service_tier": "standard"},
    }


def documents() -> dict[Path, str]:
    from questbot_testing.modelserver import make_bugs
    from questbot_testing.modelserver.hostile import hostile_scripts

    out: dict[Path, str] = {}
    for protocol, shape in (("openai", openai_turn), ("anthropic", anthropic_turn)):
        for script in [*SCRIPTS, *hostile_scripts(), *make_bugs.scripts()]:
            turns = []
            for n, turn in enumerate(script.turns, 1):
                expect: dict[str, Any] = {}
                if turn.last_contains:
                    expect["last_contains"] = turn.last_contains
                if turn.tools:
                    expect["tools"] = turn.tools
                if turn.absent_tools:
                    expect["absent_tools"] = turn.absent_tools
                turns.append({"expect": expect, "response": shape(script, n, turn)})
            doc = {"name": script.name, "protocol": protocol, "match": script.match,
                   "turns": turns}
            out[HERE / protocol / f"{script.name}.json"] = json.dumps(doc, indent=1) + "\n"
    from questbot_testing.modelserver.cli_recorded import cli_conversations

    for doc in cli_conversations():
        out[HERE / doc["protocol"] / f"{doc['name']}.json"] = json.dumps(doc, indent=1) + "\n"
    return out


def main() -> None:
    for path, text in documents().items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
