"""What the core makes of the signals one failure sends and of the watch's evidence: attached
reports keep their fingerprints, a failure during the watch is a suspect until a re-run of it
fails too, a green result is evidence (flaky where the check failed), and a quest that starts
again does so from the base it is given, on a fresh branch."""

from __future__ import annotations

from bot.core import Refusal, State, fold
from tests.core.quests import builder_in
from tests.core.test_branches import refused, types

S = State


def suspect(run: str, *, sha: str = "merge1", fingerprint: str = "fp-1") -> dict[str, object]:
    return {"fingerprint": fingerprint, "source": f"https://ci/{run}", "sha": sha, "run": run,
            "suspect": True}


def test_reports_of_one_failure_are_attached_with_their_fingerprints_once() -> None:
    b = builder_in(S.RESEARCHING)
    for fingerprint in ("check:b", "suite:ci", "check:b"):
        b.add("signal_attached", fingerprint=fingerprint, source="x")
    q = b.quest
    assert q.attached == ("check:b", "suite:ci") and q.signals == 4
    assert q.holds("fp-1") and q.holds("suite:ci") and not q.holds("check:c")
    b.add("signal_attached", fingerprint="fp-1", source="again")
    assert b.quest.attached == ("check:b", "suite:ci")  # the first signal's is held already


def test_a_failure_during_the_watch_is_a_suspect_and_asks_for_a_rerun() -> None:
    b = builder_in(S.WATCHING)
    b.add("signal_attached", **suspect("check_run:7"))
    assert b.quest.state is S.WATCHING
    assert [(s.sha, s.fingerprint, s.run) for s in b.quest.suspects] == [
        ("merge1", "fp-1", "check_run:7")]
    assert types(b) == ["run_probes"]
    assert b.effects[-1].payload == {"rerun": "check_run:7", "sha": "merge1",
                                     "fingerprint": "fp-1"}
    b.add("signal_attached", **suspect("check_run:7"))  # the same run told again
    assert types(b) == [] and len(b.quest.suspects) == 1


def test_a_failure_outside_the_watch_asks_for_nothing() -> None:
    b = builder_in(S.RESEARCHING)
    b.add("signal_attached", **suspect("check_run:7"))
    assert types(b) == [] and b.quest.suspects == ()


def test_only_a_rerun_that_fails_too_confirms_a_regression() -> None:
    b = builder_in(S.WATCHING)
    b.add("signal_attached", **suspect("check_run:7"))
    assert b.quest.confirms("merge1", "fp-1", "check_run:8")
    assert not b.quest.confirms("merge1", "fp-1", "check_run:7")  # the same run
    assert not b.quest.confirms("later", "fp-1", "check_run:8")  # another commit
    assert not b.quest.confirms("merge1", "fp-2", "check_run:8")  # another check
    for fields in ({"run": "check_run:7"}, {"run": "check_run:8", "sha": "later"},
                   {"run": "check_run:9", "fingerprint": "fp-2"}):
        event = {"source": "x", "sha": "merge1", "fingerprint": "fp-1", **fields}
        assert refused(b, "regression_detected", **event).code is Refusal.BAD_EVENT
    b.add("regression_detected", source="https://ci/8", sha="merge1", fingerprint="fp-1",
          run="check_run:8")
    assert b.quest.state is S.ROLLED_BACK and b.quest.suspects == ()
    assert types(b) == ["rollback"]


def test_a_rerun_that_passes_clears_its_suspect_as_flaky() -> None:
    b = builder_in(S.WATCHING)
    b.add("signal_attached", **suspect("check_run:7"))
    b.add("signal_attached", **suspect("workflow_run:3:1", fingerprint="workflow:CI"))
    b.add("signal_attached", fingerprint="fp-1", sha="merge1", run="check_run:8", passed=True)
    q = b.quest
    assert [s.fingerprint for s in q.suspects] == ["workflow:CI"]
    assert (q.passes, q.flaky, q.state) == (1, 1, S.WATCHING)
    assert types(b) == [] and q.signals == 3  # a pass is evidence, not another failure


def test_a_pass_where_the_quest_started_is_flaky_and_elsewhere_only_evidence() -> None:
    b = builder_in(S.RESEARCHING)
    base = b.quest.base
    b.add("signal_attached", fingerprint="fp-1", sha="later", run="check_run:3", passed=True)
    assert (b.quest.passes, b.quest.flaky) == (1, 0)  # a later commit: perhaps fixed
    b.add("signal_attached", fingerprint="fp-1", sha=base, run="check_run:4", passed=True)
    assert (b.quest.passes, b.quest.flaky) == (2, 1)  # the commit it failed on: flaky
    assert b.quest.severity.value == "high" and b.quest.attached == ()


def test_a_rollback_starts_again_from_the_revert_on_a_fresh_branch() -> None:
    b = builder_in(S.ROLLED_BACK)
    assert b.quest.branch == "quest/q-1"
    b.add("rollback_confirmed", revert_sha="rev1")
    q = b.quest
    assert (q.state, q.revision, q.base, q.merge_sha) == (S.RESEARCHING, 2, "rev1", None)
    assert q.branch_revision == 2 and q.branch == "quest/q-1-r2"


def test_a_reopened_quest_starts_from_the_head_it_names_on_a_fresh_branch() -> None:
    b = builder_in(S.CLOSED)
    b.add("reopened", fingerprint="fp-1", source="x", severity="high", base="main-now")
    q = b.quest
    assert (q.state, q.base, q.branch) == (S.RESEARCHING, "main-now", "quest/q-1-r2")
    b = builder_in(S.CLOSED)
    old_base = b.quest.base
    b.add("reopened", fingerprint="fp-1", source="x")  # a journal from before: the old base
    assert b.quest.base == old_base


def test_a_closed_quest_is_reopened_by_an_attached_fingerprint() -> None:
    b = builder_in(S.WATCHING)
    b.add("signal_attached", fingerprint="suite:ci", source="x")
    b.add("watch_clean")
    b.add("reopened", fingerprint="suite:ci", source="y")
    assert b.quest.state is S.RESEARCHING


def test_a_regression_without_a_run_counts_as_journals_before_reruns_did() -> None:
    b = builder_in(S.WATCHING)
    b.add("regression_detected", source="check_run:9")
    assert b.quest.state is S.ROLLED_BACK
    assert fold(b.events, b.policy).quest == b.quest
