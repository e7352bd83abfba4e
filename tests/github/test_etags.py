"""The cache of answers with an ETag is one per process, bounded in all, whatever the number of
installations a worker serves (``bot.github.etags``); one installation's answers never serve
another's read."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bot.github.etags import ANSWERS, Etags


def answer(n: int) -> tuple[str, None, dict[str, int], None]:
    return (f'"etag-{n}"', None, {"n": n}, None)


def test_many_installations_many_reads_stay_within_the_bound() -> None:
    """A worker that served 300 installations of 50 reads each (many quests, each its own
    repository) keeps ``ANSWERS`` answers, not 300 caches of them."""
    etags = Etags()
    for installation in range(300):
        view = etags.of(installation)
        for n in range(50):
            view[f"/repos/o{installation}/r/pulls/{n}"] = answer(n)
    assert len(etags) == ANSWERS
    # the most recent are the ones kept
    assert etags.of(299)["/repos/o299/r/pulls/49"] == answer(49)
    assert "/repos/o0/r/pulls/0" not in etags.of(0)


def test_an_installation_sees_only_its_own_answers() -> None:
    etags = Etags(maxsize=10)
    etags.of(1)["/repos/a/b"] = answer(1)
    assert "/repos/a/b" not in etags.of(2)
    etags.of(2)["/repos/a/b"] = answer(2)
    assert etags.of(1)["/repos/a/b"] == answer(1)
    assert etags.of(2)["/repos/a/b"] == answer(2)
    assert list(etags.of(1)) == ["/repos/a/b"] and len(etags.of(2)) == 1
    del etags.of(1)["/repos/a/b"]
    assert len(etags) == 1


@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 40)), max_size=300),
       st.integers(1, 50))
def test_the_bound_holds_for_any_reads(reads: list[tuple[int, int]], bound: int) -> None:
    etags = Etags(maxsize=bound)
    for installation, n in reads:
        etags.of(installation)[f"/u/{n}"] = answer(n)
        assert etags.of(installation)[f"/u/{n}"] == answer(n)  # the last written is kept
    assert len(etags) <= bound
    assert len(etags) == sum(len(etags.of(i)) for i in range(21))


def github_pull(n: int) -> dict[str, object]:
    """An answer shaped as GitHub's ``pulls/get``: two repositories of ~90 fields, users."""
    def user(login: str) -> dict[str, object]:
        return {"login": login, "id": 1000 + n, "node_id": f"U_{login}", "type": "User",
                "site_admin": False, **{f"{k}_url": f"https://api.github.com/users/{login}/{k}"
                                        for k in ("avatar", "html", "followers", "following",
                                                  "gists", "starred", "subscriptions",
                                                  "organizations", "repos", "events",
                                                  "received_events")}}

    def repo(name: str) -> dict[str, object]:
        base = f"https://api.github.com/repos/{name}"
        return {"id": 5000 + n, "node_id": f"R_{n}", "name": name.split("/")[1],
                "full_name": name, "private": False, "owner": user(name.split("/")[0]),
                "default_branch": "main", "open_issues_count": n, "size": 180 + n,
                **{f"{k}_url": f"{base}/{k}" for k in (
                    "forks", "keys", "collaborators", "teams", "hooks", "issue_events",
                    "events", "assignees", "branches", "tags", "blobs", "git_tags",
                    "git_refs", "trees", "statuses", "languages", "stargazers",
                    "contributors", "subscribers", "subscription", "commits", "git_commits",
                    "comments", "issue_comment", "contents", "compare", "merges", "archive",
                    "downloads", "issues", "pulls", "milestones", "notifications", "labels",
                    "releases", "deployments")},
                "has_issues": True, "has_wiki": True, "archived": False,
                "created_at": "2026-12-02T10:00:00Z", "pushed_at": "2026-12-02T10:01:00Z"}

    name = f"owner-{n}/repo-{n}"
    return {"number": n, "id": 9000 + n, "node_id": f"PR_{n}", "state": "open",
            "title": f"Fix the failing check #{n}", "body": "What failed, and why. " * 20,
            "user": user("questbot[bot]"), "merged": False, "mergeable": True,
            "mergeable_state": "clean", "draft": False, "commits": 2, "additions": 12,
            "deletions": 3, "changed_files": 2,
            "head": {"ref": f"questbot/q-{n}", "sha": f"{n:040x}", "repo": repo(name),
                     "user": user(f"owner-{n}")},
            "base": {"ref": "main", "sha": f"{n + 1:040x}", "repo": repo(name),
                     "user": user(f"owner-{n}")},
            **{f"{k}_url": f"https://api.github.com/repos/{name}/pulls/{n}/{k}"
               for k in ("html", "diff", "patch", "issue", "commits", "review_comments",
                         "comments", "statuses")}}


def test_an_answer_is_held_compressed_and_read_whole() -> None:
    """What one answer costs a worker: a pull request's answer, decoded, holds ~15 KB of
    Python objects; held compressed, the bound of ``ANSWERS`` costs a few MB, not ~15."""
    import tracemalloc

    etags = Etags()
    pulls = [github_pull(n) for n in range(ANSWERS)]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for n, pull in enumerate(pulls):
            etags.of(n % 7)[f"/repos/owner-{n}/repo-{n}/pulls/{n}"] = (
                f'"e{n}"', None, pull, None)
        held = tracemalloc.get_traced_memory()[0] - before
        decoded = tracemalloc.get_traced_memory()[0]
        copies = [github_pull(n) for n in range(100)]
        one_decoded = (tracemalloc.get_traced_memory()[0] - decoded) / len(copies)
    finally:
        tracemalloc.stop()
    assert one_decoded > 10_000  # what each answer held before
    assert held / ANSWERS < one_decoded / 4, (held / ANSWERS, one_decoded)
    assert held < 4_000_000
    read = etags.of(3)["/repos/owner-3/repo-3/pulls/3"]
    assert read == ('"e3"', None, pulls[3], None)
    read[2]["head"]["sha"] = "changed by a caller"
    assert etags.of(3)["/repos/owner-3/repo-3/pulls/3"][2] == pulls[3]
