"""The status comment and the check run at every state, as snapshots, and the promises they
keep whatever the quest holds: within GitHub's limits, no host path, no internal identifier.

Snapshots are Markdown files in ``tests/words/snapshots/`` compared exactly. After a change
to what people see, look at the diff and regenerate them with
``UPDATE_SNAPSHOTS=1 python -m pytest tests/words/test_status_comment.py``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.agent.evidence import CommandOutput, EvidenceBundle
from bot.agent.machine import RunState
from bot.agent.proofs import diff_stat
from bot.agent.result import AppliedChange, TaskResult
from bot.agent.validation import Claim, ClaimVerdict, Evidence, Verdict
from bot.commands.replies import status_text
from bot.core import EVENT_TYPES, Quest, State
from bot.core.diagram import path_mermaid
from bot.core.lifecycle import path
from bot.core.proof import CheckRecord
from bot.core.states import TERMINAL
from bot.words import check_run as checks
from bot.words import status_comment as status
from bot.words.evidence import render_markdown
from bot.words.github_limits import BODY_LIMIT, OUTPUT_LIMIT
from bot.words.markdown import display_argv, hide_paths
from bot.words.timeline import WORDS, entry_of
from questbot_testing.journals import ZERO_DIGEST, JournalBuilder, main_line
from tests.agent.bundles import UNVERIFIED, verified_result
from tests.agent.bundles import bundle as evidence_bundle
from tests.words.status_scenarios import PULL, PYTHON, every_state
from tests.words.surface import problems

SNAPSHOTS = Path(__file__).parent / "snapshots"
UPDATE = os.environ.get("UPDATE_SNAPSHOTS") == "1"
STATES = every_state()


def check_markdown(quest: Quest, bundle: EvidenceBundle | None) -> str:
    """The check run as one Markdown file: its fields, then its summary and text."""
    body = checks.check_run(quest, bundle).body()
    output = body.pop("output")
    return (f"```json\n{json.dumps(body, indent=2, sort_keys=True)}\n```\n\n"
            f"# {output['title']}\n\n{output['summary']}\n\n---\n\n{output.get('text', '')}\n")


def snapshot(name: str, text: str) -> None:
    file = SNAPSHOTS / name
    if UPDATE or not file.exists():
        SNAPSHOTS.mkdir(exist_ok=True)
        file.write_text(text)
        if not UPDATE:
            pytest.fail(f"{name} had no snapshot; one was written: look at it, then rerun")
    assert text == file.read_text(), (
        f"{name} changed; if the change is meant, UPDATE_SNAPSHOTS=1 writes it")


@pytest.mark.parametrize("state", list(State), ids=lambda s: s.value)
def test_the_status_comment_at_each_state_matches_its_snapshot(state: State) -> None:
    at = STATES[state]
    snapshot(f"status-{state.value.replace('_', '-')}.md", status.status_comment(at.view))


@pytest.mark.parametrize("state", list(State), ids=lambda s: s.value)
def test_the_check_run_at_each_state_matches_its_snapshot(state: State) -> None:
    at = STATES[state]
    snapshot(f"check-{state.value.replace('_', '-')}.md",
             check_markdown(at.quest, at.view.evidence))


@pytest.mark.parametrize("state", list(State), ids=lambda s: s.value)
def test_what_people_read_has_no_internal_name_or_host_path(state: State) -> None:
    at = STATES[state]
    check = checks.check_run(at.quest, at.view.evidence).body()["output"]
    for text in (status.status_comment(at.view), "# " + check["title"], check["summary"],
                 check.get("text", "")):
        assert problems(text, commits=()) == []  # no jargon, digest chip or id heading either


def _after_checkpoints(text: str) -> tuple[str, str]:
    """The bullet of the checkpoints' list, and the first line after that list."""
    lines = text.split("\n")
    at = lines.index("**Checkpoints:**") + 1
    bullet = lines[at][:2]
    end = at
    while end < len(lines) and lines[end].startswith(bullet):
        end += 1
    rest = [line for line in lines[end:] if line.strip()]
    return bullet, rest[0] if rest else ""


@pytest.mark.parametrize("state", list(State), ids=lambda s: s.value)
def test_the_checkpoints_are_a_list_of_their_own(state: State) -> None:
    """A list after a blank line with the same bullet continues the list above it
    (CommonMark): the facts under the checkpoints would read as more checkpoints."""
    at = STATES[state]
    check = checks.check_run(at.quest, at.view.evidence).body()["output"].get("text", "")
    for text in (status.status_comment(at.view), check):
        bullet, after = _after_checkpoints(text)
        assert bullet in ("- ", "* ")
        assert not after.startswith(bullet), (bullet, after)


def test_the_comment_answers_the_ten_second_questions_at_checkpoint_c() -> None:
    at = STATES[State.READY]
    body = status.status_comment(at.view)
    top = body.split("<details>")[0]  # what is read without opening anything
    assert "[the failed check](https://github.com/octo/demo/runs/11)" in top
    assert "[its log](https://ci.example.com/octo/demo/jobs/11)" in top
    assert ("**What questbot thinks** (the agent is 80% sure, over 2 claims; the code "
            "supports 1):\n  > pages\\(\\) rounds down, so the last partial page is "
            "lost\n") in top  # a quote a person reads, not a code chip
    assert f"1 file (+1 line, -1 line): `pager.py` — [the diff]({PULL}/files)" in top
    assert "1 of 1 checks passed" in top and "fails on the base and passes on the head" in top
    assert "`/approve C`" in top and "**Approve** · **Revise** · **Reject**" in top
    assert "**Cost so far:** 12,345 tokens, $0.42" in top
    assert "`@alice` approved checkpoint B" in body  # the timeline, in people's words
    assert "AssertionError: 2 != 3" in body and ZERO_DIGEST not in top
    assert PYTHON not in body and "python -m unittest -q" in body


def test_the_diagram_draws_this_quests_path_not_the_whole_machine() -> None:
    body = status.status_comment(STATES[State.ROLLED_BACK].view)
    diagram = body.split("```mermaid\n")[1].split("```")[0]
    assert "watching --> rolledBack" in diagram and 'state "rolled back" as rolledBack' in diagram
    assert "class rolledBack current" in diagram
    assert "handedOff" not in diagram and "parked" not in diagram
    assert diagram.count("-->") == 12  # [*] and the eleven steps it took, nothing else


def test_path_replays_the_journal_and_skips_what_did_not_move() -> None:
    b = main_line()
    states = path(b.events, b.policy)
    assert states[0] is State.SENSED and states[-1] is State.CLOSED
    assert len(states) == len(set(states)) == 12
    again = path([*b.events, *b.events], b.policy)  # redelivered: absorbed
    assert again == states
    revised = JournalBuilder().sense()
    revised.add("hypothesis_written", summary="h")
    revised.decide("A", "revise", reason="look again")
    revised.add("hypothesis_written", summary="h2")
    assert path(revised.events, revised.policy)[-3:] == (
        State.HYPOTHESISED, State.RESEARCHING, State.HYPOTHESISED)
    assert "hypothesised --> researching" in path_mermaid(path(revised.events, revised.policy))


def test_every_event_has_words_for_the_timeline() -> None:
    assert set(WORDS) == set(EVENT_TYPES)
    for entry in (entry_of(e) for e in main_line().events):
        assert entry.words and problems(entry.words) == []


def test_the_cost_line_sums_the_usage_receipts() -> None:
    b = JournalBuilder().sense()
    assert status.cost_line(b._q()) == "nothing recorded yet"
    b.add("usage_recorded", tokens=1_000)
    assert status.cost_line(b._q()) == "1,000 tokens, no price in dollars was reported"
    b.add("usage_recorded", tokens=2_500, cost_cents=1234)
    assert status.cost_line(b._q()) == "3,500 tokens, $12.34"


def test_a_local_models_tokens_cost_nothing_and_it_says_so() -> None:
    """Issue 25: with prices 0,0 the line read "no price in dollars was reported; … ($0.00)";
    a price of zero is known, and it is no charge."""
    b = JournalBuilder().sense()
    b.add("usage_recorded", tokens=20_000, stage="research", free=True)
    assert status.cost_line(b._q()) == "20,000 tokens, local model, no charge"
    b.add("usage_recorded", tokens=500)  # a receipt whose price nobody knew
    assert status.cost_line(b._q()) == "20,500 tokens, no price in dollars was reported"


def test_host_paths_are_hidden_and_urls_and_commands_are_not() -> None:
    assert display_argv((PYTHON, "-m", "pytest", "/tmp/questbot-proof-x1/head/tests")) == \
        "python -m pytest tests"
    assert hide_paths("see /usr/lib/python3.11/case.py and /home/w/.cache/x") == \
        "see …/case.py and …/x"
    assert hide_paths('File "/tmp/questbot-proof-k9/head-repro/tests/t.py", line 2') == \
        'File "tests/t.py", line 2'
    kept = "https://github.com/octo/demo/pull/7/files, `/approve A`, a/b/c, 3/4"
    assert hide_paths(kept) == kept


def test_the_diff_stat_counts_lines_and_binary_files() -> None:
    numstat = "3\t1\tpager.py\n-\t-\tlogo.png\n0\t12\tdocs/a b.md\n"
    assert diff_stat(numstat) == (("pager.py", "logo.png", "docs/a b.md"), (3, 13))
    assert diff_stat("") == ((), (0, 0))


def test_a_link_is_only_made_of_a_web_address() -> None:
    assert status.link("x", "https://github.com/o/r/runs/1") == "[x](https://github.com/o/r/runs/1)"
    assert status.link("x", "javascript:alert(1)") == "x (`javascript:alert(1)`)"
    assert status.link("x", "https://e.com/a) [y](https://evil") .startswith("x (")


def _bundle(claims: int, outputs: list[tuple[int, int]], files: int) -> EvidenceBundle:
    verdicts = tuple(
        ClaimVerdict(claim=Claim(statement=f"claim {n} " + "x" * 190, confidence=0.5,
                                 evidence=(Evidence(path=f"/tmp/questbot-proof-q/head/f{n}.py",
                                                    quote="y" * 190),)),
                     verdict=Verdict.SUPPORTED) for n in range(claims))
    checks = tuple(CheckRecord(name=f"check {n}", command=(PYTHON, "-c", "z" * 300),
                               exit_code=n % 2, output_sha256=ZERO_DIGEST)
                   for n in range(len(outputs)))
    result = TaskResult(run_id="r", state=RunState.FAILED, reason="proof failed" * 50,
                        change=AppliedChange(base="b", head="h", files=tuple(
                            f"dir/{n}.py" for n in range(files))), checks=checks)
    printed = tuple(
        CommandOutput.of(name=f"check {n}", at="head", command=(PYTHON, "-c", "z"),
                         exit_code=1, output=(f"{PYTHON} said /home/w/x\n" * lines)[:size])
        for n, (lines, size) in enumerate(outputs))
    return EvidenceBundle(hypothesis="h" * 5000, claims=verdicts, result=result,
                          plan="p" * 5000, proof_digest=ZERO_DIGEST, outputs=printed)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(claims=st.integers(0, 1500),
       outputs=st.lists(st.tuples(st.integers(0, 5000), st.integers(0, 200_000)), max_size=60),
       files=st.integers(1, 3000), title=st.text(max_size=3000),
       state=st.sampled_from(sorted(State)))
def test_whatever_the_quest_holds_github_takes_what_questbot_writes(
        claims: int, outputs: list[tuple[int, int]], files: int, title: str,
        state: State) -> None:
    quest = STATES[state].quest.model_copy(update={"title": title})
    bundle = _bundle(claims, outputs, files)
    view = status.StatusView(quest, STATES[state].view.timeline, bundle, PULL,
                             ["x" * 5000] * 3, path=STATES[state].view.path,
                             check_url="https://github.com/octo/demo/runs/99")
    body = status.status_comment(view)
    assert len(body) <= BODY_LIMIT
    assert body.count("<details>") == body.count("</details>")
    assert body.rstrip().endswith("</details>")  # the path, after everything cut, survives
    assert problems(body) == []
    output = checks.check_run(quest, bundle).body()["output"]
    assert len(output["summary"]) <= OUTPUT_LIMIT and len(output["text"]) <= OUTPUT_LIMIT
    assert problems(output["text"]) == []
    with mock.patch.object(checks, "CHECK_TEXT_LIMIT", 10**9):  # the text uncut
        whole = checks.check_text(quest, bundle)
    if len(whole) > checks.CHECK_TEXT_LIMIT:  # a cut always says so
        assert "more were left out" in output["text"]
    else:
        assert output["text"] == whole


def test_a_cut_comment_points_to_the_check_runs_full_text() -> None:
    bundle = _bundle(1500, [(5000, 200_000)] * 40, 10)
    at = STATES[State.PARKED]
    body = status.status_comment(status.StatusView(
        at.quest, evidence=bundle, pull_url=PULL, check_url="https://github.com/octo/demo/runs/99"))
    assert len(body) <= BODY_LIMIT
    assert "more are in the `questbot` check run's details " \
           "(https://github.com/octo/demo/runs/99)" in body


def test_the_guard_sees_identifiers_and_paths_even_escaped() -> None:
    assert problems("the run ended needs\\_human") == ["internal name 'needs\\\\_human'"]
    assert problems("moved to `rolled_back` by usage_recorded")[:2] == [
        "internal name 'rolled_back'", "internal name 'usage_recorded'"]
    assert problems(f"ran {PYTHON} -m unittest") != []
    assert problems("<!-- questbot:key=q:1:run_proof:checkpoint_decided -->\nrolled back") == []


@pytest.mark.parametrize("state", list(State), ids=lambda s: s.value)
def test_the_path_ends_where_the_quest_is(state: State) -> None:
    view = STATES[state].view
    assert view.path[-1] is state and view.path[0] is State.SENSED
    assert all(a is not b for a, b in zip(view.path, view.path[1:], strict=False))


def test_what_failed_links_the_check_and_its_log_once_each() -> None:
    at = STATES[State.SENSED]
    same = status.FailedRun("https://github.com/o/r/actions/runs/5/job/7",
                            "https://github.com/o/r/actions/runs/5/job/7", "abc")
    body = status.status_comment(status.StatusView(at.quest, failed=same))
    assert "[the failed check and its log](https://github.com/o/r/actions/runs/5/job/7)" in body
    assert "[its log]" not in body
    bare = status.status_comment(status.StatusView(at.quest, failed=status.FailedRun(
        "check_run:1")))
    assert "the failed check (`check_run:1`)" in bare


def _ended(how: str) -> Quest:
    """A quest that ended ``how``: killed or rejected at each checkpoint, killed while parked,
    landed and closed, or ended by triage (ignored, a duplicate, flaky)."""
    b = JournalBuilder("q-9")
    if how in ("ignored", "duplicate", "flaky"):
        b.add("signal_sensed", repo=b.repo, fingerprint="fp-1", kind="check_failure",
              severity="high", title="tests fail on main", source="check_run:1", base="base0")
    if how == "ignored":
        b.add("triaged", route="ignore")
    elif how == "duplicate":
        b.add("triaged", route="duplicate", duplicate_of="q-1")
    elif how == "flaky":
        b.add("rerun_requested", sha="base0", run="check_run:1", route="auto_fix")
        b.add("rerun_reported", run="check_run:2", result="passed")
    else:
        end, at = how.split(" at ")
        b.sense()
        b.add("hypothesis_written", summary="off-by-one in pager")
        if at in "BC":
            b.decide("A")
            b.add("reproduced", check="test_pager_last_page")
            b.add("plan_written", summary="fix the bound", risk="low")
        if at == "C":
            b.decide("B")
            b.add("patch_pushed", head="head1", pusher="questbot[bot]")
            b.prove()
        if at == "parked":
            b.add("paused", actor="bob", reason="lunch")
        if end == "closed":
            b.land_and_close()
        elif end == "killed":
            b.add("killed", actor="bob", reason="not a bug")
        else:
            b.decide(at, "reject", actor="bob", reason="not a bug")
    assert b.quest is not None and b.quest.state in TERMINAL, (how, b.quest)
    return b.quest


ENDINGS = ["killed at A", "killed at B", "killed at C", "killed at parked", "rejected at A",
           "rejected at B", "rejected at C", "closed at C", "ignored", "duplicate", "flaky"]
RUNS: dict[str, TaskResult] = {"verified": verified_result(), **UNVERIFIED,
                               "at a checkpoint": TaskResult(
                                   run_id="r", state=RunState.NEEDS_HUMAN,
                                   reason="the hypothesis waits for checkpoint A: a person "
                                          "decides whether to go on")}
WAITING = re.compile(r"\bwait(s|ing)?\b|needs? a person|needs human|needs\\?_human",
                     re.IGNORECASE)


@pytest.mark.parametrize("run", sorted(RUNS))
@pytest.mark.parametrize("how", ENDINGS)
def test_a_quest_that_ended_says_what_its_run_found_and_that_nothing_waits(
        how: str, run: str) -> None:
    """Whatever the last run found — even a run that stopped for a person's decision — a
    quest that has ended waits for nobody: no text of its says so, and its evidence says the
    quest ended."""
    quest = _ended(how)
    bundle = evidence_bundle(RUNS[run])
    comment = status.status_comment(status.StatusView(quest, evidence=bundle, pull_url=PULL))
    check = checks.check_run(quest, bundle)
    assert check.conclusion is not checks.CheckConclusion.ACTION_REQUIRED
    output = check.body()["output"]
    for text in (comment, output["title"], output["summary"], output.get("text", ""),
                 status_text(quest)):
        assert not WAITING.search(text), (WAITING.search(text), text)
        assert problems(text) == []
    for text in (comment, output["text"]):
        assert render_markdown(bundle, ended=True) in hide_paths(text)
        assert "The quest has ended; this is what its last run found." in text
