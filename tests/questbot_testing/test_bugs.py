"""The bug set's bugs are real: each check, run in the sandbox as CI runs it, fails on the
repository as committed and prints what the registry says it shows; it passes with the fix a
careful person would make; the flaky test fails and passes on the same code as CI's seed falls;
and what the careful model is recorded to quote is in the files."""

from __future__ import annotations

from questbot_testing.bugs import BUGS, TESTS, Bug, Ending
from questbot_testing.bugs.ci import Job, run_checks
from questbot_testing.modelserver.make_bugs import ANSWERS


def jobs(bug: Bug) -> list[Job]:
    """The bug's CI attempts as committed, and its check with the fix."""
    return [*(Job(bug.name, bug.files(), command) for command in bug.ci),
            Job(bug.name, bug.fixed_files(), bug.attempt(1))]


async def test_each_check_fails_as_it_says_and_passes_with_the_fix() -> None:
    every = [job for bug in BUGS for job in jobs(bug)]
    results = iter(await run_checks(every))  # one run of questbot's proof command for all
    for bug in BUGS:
        first, *others = [next(results) for _ in bug.ci]
        fixed = next(results)
        assert not first.passed, f"{bug.name}: its check passes as committed"
        for shown in bug.shows:
            assert shown in first.output, f"{bug.name}: {shown!r} not in\n{first.output}"
        assert "/home/runner/work/" in first.output and "questbot-proof-" not in first.output
        assert fixed.passed, f"{bug.name}: the fix does not pass:\n{fixed.output}"
        if bug.ending is Ending.FLAKY:
            assert [r.passed for r in others] == [True], "the re-run's seed must pass"
        else:
            assert others == [], "a real bug's re-run is the same run again"


def test_the_set_holds_a_bug_of_each_kind_and_every_ending() -> None:
    assert 5 <= len(BUGS) <= 10
    assert len({bug.kind for bug in BUGS}) == len(BUGS)
    assert {bug.ending for bug in BUGS} == {Ending.FIXED, Ending.FLAKY, Ending.PARKED}
    assert all(bug.why for bug in BUGS if bug.ending is Ending.PARKED)
    assert all(bug.attempt(1).endswith(TESTS) for bug in BUGS)


def test_the_careful_model_quotes_what_is_in_the_files() -> None:
    for name, careful in ANSWERS.items():
        files = next(bug for bug in BUGS if bug.name == name).files()
        for _statement, path, quote in careful.claims:
            assert quote in files[path], f"{name}: {quote!r} is not in {path}"
    assert {b.name for b in BUGS if b.ending is not Ending.FLAKY} == set(ANSWERS)
