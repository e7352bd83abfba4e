"""The fake refuses what GitHub refuses for comments, issues, labels, check runs and the Git
database, with GitHub's status and message (BEHAVIOUR.md §0, §7-§9, §11)."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from questbot_testing.fakegithub import FakeGitHub
from questbot_testing.fakegithub.rules import BODY_LIMIT, DIRECTORY_LIMIT, OUTPUT_LIMIT
from questbot_testing.fakegithub.state import CheckRun, iso
from tests.questbot_testing.fakegithub.conftest import REPO, error_of

BASE = f"/repos/{REPO}"


# -- §0 the request schema --------------------------------------------------------------------


async def test_a_body_that_breaks_the_schema_is_invalid_request(fake: FakeGitHub,
                                                               answer: Any) -> None:
    status, body = await answer("POST", f"{BASE}/check-runs", {"name": "questbot"})
    assert status == 422 and body["message"].startswith("Invalid request.\n\n")
    assert "'head_sha' is a required property" in body["message"]
    assert fake.violations  # questbot must never send one
    fake.violations.clear()


# -- §7, §8 comments, issues, labels, locks ---------------------------------------------------


async def test_a_comment_past_65536_characters_is_refused(fake: FakeGitHub,
                                                          answer: Any) -> None:
    issue = await fake.open_issue(REPO, "long")
    comments = f"{BASE}/issues/{issue.number}/comments"
    status, body = await answer("POST", comments, {"body": "x" * (BODY_LIMIT + 1)})
    assert status == 422
    assert error_of(body) == {"resource": "IssueComment", "code": "custom", "field": "body",
                              "message": "body is too long (maximum is 65536 characters)"}
    status, made = await answer("POST", comments, {"body": "x" * BODY_LIMIT})
    assert status == 201
    status, body = await answer("PATCH", f"{BASE}/issues/comments/{made['id']}",
                                {"body": "y" * (BODY_LIMIT + 1)})
    assert status == 422 and error_of(body)["resource"] == "IssueComment"
    status, body = await answer("POST", f"{BASE}/issues", {"title": "t",
                                                           "body": "z" * (BODY_LIMIT + 1)})
    assert status == 422 and error_of(body)["resource"] == "Issue"
    fake.assert_clean()


async def test_the_app_cannot_comment_on_a_locked_issue(fake: FakeGitHub, answer: Any) -> None:
    issue = await fake.open_issue(REPO, "heated")
    assert (await answer("PUT", f"{BASE}/issues/{issue.number}/lock",
                         {"lock_reason": "too heated"}))[0] == 204
    status, body = await answer("POST", f"{BASE}/issues/{issue.number}/comments", {"body": "hi"})
    assert (status, body["message"]) == (403, "Unable to create comment because issue is "
                                              "locked.")
    assert (await answer("DELETE", f"{BASE}/issues/{issue.number}/lock"))[0] == 204
    assert (await answer("POST", f"{BASE}/issues/{issue.number}/comments",
                         {"body": "hi"}))[0] == 201
    fake.assert_clean()


async def test_a_repeated_reaction_is_200_with_the_one_there(fake: FakeGitHub,
                                                             answer: Any) -> None:
    issue = await fake.open_issue(REPO, "r")
    comment = await fake.comment(REPO, issue.number, "/approve", user="alice")
    path = f"{BASE}/issues/comments/{comment.id}/reactions"
    assert (await answer("POST", path, {"content": "eyes"}))[0] == 201
    assert (await answer("POST", path, {"content": "eyes"}))[0] == 200


async def test_labels_are_created_as_they_are_added_and_a_missing_one_is_404(
        fake: FakeGitHub, answer: Any) -> None:
    issue = await fake.open_issue(REPO, "l")
    status, labels = await answer("POST", f"{BASE}/issues/{issue.number}/labels",
                                  {"labels": ["questbot"]})
    assert status == 200 and [(x["name"], x["color"]) for x in labels] == [
        ("questbot", "ededed")]
    assert (await answer("GET", f"{BASE}/labels/questbot"))[0] == 200
    status, body = await answer("DELETE", f"{BASE}/issues/{issue.number}/labels/nope")
    assert (status, body["message"]) == (404, "Label does not exist")
    status, body = await answer("POST", f"{BASE}/labels", {"name": "x", "color": "invalid"})
    assert status == 422 and error_of(body) == {"resource": "Label", "code": "invalid",
                                                "field": "color"}
    fake.assert_clean()


# -- §9 check runs ----------------------------------------------------------------------------


async def test_a_completed_run_needs_a_conclusion(fake: FakeGitHub, answer: Any) -> None:
    sha = fake.repo(REPO).refs["refs/heads/main"]
    status, body = await answer("POST", f"{BASE}/check-runs",
                                {"name": "q", "head_sha": sha, "status": "completed"})
    assert status == 422 and body["message"].startswith("Invalid request.")
    status, made = await answer("POST", f"{BASE}/check-runs", {"name": "q", "head_sha": sha})
    status, body = await answer("PATCH", f"{BASE}/check-runs/{made['id']}",
                                {"status": "completed"})
    assert status == 422
    assert len(fake.violations) == 2
    fake.violations.clear()


@pytest.mark.parametrize("output", [
    {"title": "t", "summary": "s" * (OUTPUT_LIMIT + 1)},
    {"title": "t", "summary": "s", "text": "x" * (OUTPUT_LIMIT + 1)},
    {"title": "t", "summary": "s", "annotations": [
        {"path": "a", "start_line": 1, "end_line": 1, "annotation_level": "notice",
         "message": "m"}] * 51},
])
async def test_check_run_output_past_githubs_limits_is_refused(
        fake: FakeGitHub, answer: Any, output: dict[str, Any]) -> None:
    sha = fake.repo(REPO).refs["refs/heads/main"]
    status, body = await answer("POST", f"{BASE}/check-runs",
                                {"name": "q", "head_sha": sha, "output": output})
    assert status == 422 and body["message"].startswith("Invalid request.")
    fake.violations.clear()
    exact = {"title": "t", "summary": "s" * OUTPUT_LIMIT, "text": "x" * OUTPUT_LIMIT}
    status, _ = await answer("POST", f"{BASE}/check-runs",
                             {"name": "q", "head_sha": sha, "output": exact})
    assert status == 201


@pytest.mark.parametrize("actions", [
    [{"label": "a", "description": "d", "identifier": "i"}] * 4,
    [{"label": "l" * 21, "description": "d", "identifier": "i"}],
    [{"label": "l", "description": "d" * 41, "identifier": "i"}],
    [{"label": "l", "description": "d", "identifier": "i" * 21}],
])
async def test_check_run_buttons_past_githubs_limits_are_refused(
        fake: FakeGitHub, answer: Any, actions: list[dict[str, str]]) -> None:
    sha = fake.repo(REPO).refs["refs/heads/main"]
    status, _ = await answer("POST", f"{BASE}/check-runs",
                             {"name": "q", "head_sha": sha, "actions": actions})
    assert status == 422
    fake.violations.clear()


async def test_a_check_run_on_an_unknown_commit_is_refused(fake: FakeGitHub,
                                                           answer: Any) -> None:
    status, body = await answer("POST", f"{BASE}/check-runs",
                                {"name": "q", "head_sha": "f" * 40})
    assert (status, body["message"]) == (422, "No commit found for SHA: " + "f" * 40)


async def test_check_runs_are_listed_by_app_and_name_a_page_of_at_most_100(
        fake: FakeGitHub, answer: Any) -> None:
    """§9: ``app_id`` and ``check_name`` filter, ``filter=all`` keeps every run of a name,
    and ``per_page`` past 100 is 100."""
    repo = fake.repo(REPO)
    sha = str(repo.branch_sha("main"))
    for n in range(101):  # made as the App would, past the writes GitHub allows a minute
        run = CheckRun(fake.world.new_id(), sha, "questbot", "in_progress", None, f"e{n}", iso(),
                       app_slug=fake.world.app_slug)
        repo.check_runs[run.id] = run
    await fake.complete_check_run(REPO, sha, "questbot", "failure", app_slug="github-actions")
    listing = f"{BASE}/commits/{sha}/check-runs"
    status, body = await answer("GET", f"{listing}?check_name=questbot&filter=all&per_page=500")
    assert status == 200 and body["total_count"] == 102 and len(body["check_runs"]) == 100
    status, body = await answer("GET", f"{listing}?check_name=questbot&filter=all"
                                       f"&app_id={fake.world.app_id}&per_page=100&page=2")
    assert body["total_count"] == 101 and [r["external_id"] for r in body["check_runs"]] == ["e0"]
    status, body = await answer("GET", f"{listing}?app_id=15368")  # GitHub Actions'
    assert [(r["name"], r["app"]["slug"]) for r in body["check_runs"]] == [
        ("questbot", "github-actions")]
    status, body = await answer("GET", f"{listing}?check_name=questbot")  # filter=latest
    assert body["total_count"] == 1
    fake.assert_clean()


async def test_a_query_parameter_github_does_not_know_is_ignored_and_a_violation(
        fake: FakeGitHub, answer: Any) -> None:
    """GitHub answers as if an unknown query parameter were not there (unconfirmed): a
    misspelt filter filters nothing, so the fake answers the same and fails the test."""
    sha = str(fake.repo(REPO).branch_sha("main"))
    for name in ("questbot", "tests"):
        await answer("POST", f"{BASE}/check-runs", {"name": name, "head_sha": sha})
    status, body = await answer("GET", f"{BASE}/commits/{sha}/check-runs?check-name=questbot")
    assert status == 200 and body["total_count"] == 2
    assert fake.violations == [
        f"GET {BASE}/commits/{sha}/check-runs (checks/list-for-ref): GitHub ignores the unknown "
        "query parameter(s) check-name"]
    fake.violations.clear()


# -- §11 the Git database and contents --------------------------------------------------------


async def test_refs_are_created_once_from_known_commits_and_moved_forward_only(
        fake: FakeGitHub, answer: Any) -> None:
    repo = fake.repo(REPO)
    main = repo.refs["refs/heads/main"]
    refs = f"{BASE}/git/refs"
    assert (await answer("POST", refs, {"ref": "refs/heads/x", "sha": main}))[0] == 201
    status, body = await answer("POST", refs, {"ref": "refs/heads/x", "sha": main})
    assert (status, body["message"]) == (422, "Reference already exists")
    status, body = await answer("POST", refs, {"ref": "refs/heads/y", "sha": "e" * 40})
    assert (status, body["message"]) == (422, "Object does not exist")
    status, _ = await answer("POST", refs, {"ref": "heads/z", "sha": main})
    assert status == 422
    ahead = await fake.push(REPO, "x", {"a": "1"})
    status, body = await answer("PATCH", f"{refs}/heads/main", {"sha": ahead.sha})
    assert status == 200  # a fast-forward
    status, body = await answer("PATCH", f"{refs}/heads/x", {"sha": main})
    assert (status, body["message"]) == (422, "Update is not a fast forward")
    status, _ = await answer("GET", f"{BASE}/git/ref/heads/nope")
    assert status == 404
    status, body = await answer("PATCH", f"{refs}/heads/nope", {"sha": main})
    assert (status, body["message"]) == (422, "Reference does not exist")
    fake.assert_clean()


async def test_a_tree_entry_takes_sha_or_content_and_deletes_only_what_exists(
        fake: FakeGitHub, answer: Any) -> None:
    repo = fake.repo(REPO)
    tree = repo.git.commits[repo.refs["refs/heads/main"]].tree
    blob = repo.git.files(repo.refs["refs/heads/main"])["README.md"]
    trees = f"{BASE}/git/trees"
    both = {"path": "a", "mode": "100644", "type": "blob", "sha": blob, "content": "x"}
    assert (await answer("POST", trees, {"base_tree": tree, "tree": [both]}))[0] == 422
    gone = {"path": "nope.txt", "mode": "100644", "type": "blob", "sha": None}
    assert (await answer("POST", trees, {"base_tree": tree, "tree": [gone]}))[0] == 422
    drop = {"path": "README.md", "mode": "100644", "type": "blob", "sha": None}
    status, made = await answer("POST", trees, {"base_tree": tree, "tree": [drop]})
    assert status == 201 and [e["path"] for e in made["tree"]] == ["src"]
    fake.assert_clean()


async def test_contents_stop_at_1_mb_and_1000_entries_and_git_data_does_not(
        fake: FakeGitHub, answer: Any) -> None:
    big = b"x" * (1024 * 1024 + 1)
    many = {f"many/f{n:04}.txt": str(n) for n in range(DIRECTORY_LIMIT + 5)}
    commit = await fake.push(REPO, "big", {"big.bin": big, **many})
    status, body = await answer("GET", f"{BASE}/contents/big.bin?ref=big")
    assert status == 403 and body["message"].startswith("This API returns blobs up to 1 MB")
    assert body["errors"] == [{"resource": "Blob", "field": "data", "code": "too_large"}]
    status, raw = await answer("GET", f"{BASE}/contents/big.bin?ref=big",
                               accept="application/vnd.github.raw")
    assert status == 200 and raw == big
    sha = fake.repo(REPO).git.files(commit.sha)["big.bin"]
    status, blob = await answer("GET", f"{BASE}/git/blobs/{sha}")
    assert status == 200 and base64.b64decode(blob["content"]) == big
    status, listing = await answer("GET", f"{BASE}/contents/many?ref=big")
    assert status == 200 and len(listing) == DIRECTORY_LIMIT
    status, tree = await answer("GET", f"{BASE}/git/trees/{commit.sha}?recursive=1")
    assert status == 200 and tree["truncated"] is False
    assert len([e for e in tree["tree"] if e["path"].startswith("many/")]) == (
        DIRECTORY_LIMIT + 5)
    fake.assert_clean()
