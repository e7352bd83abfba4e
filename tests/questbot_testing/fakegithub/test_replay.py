"""Each recorded exchange with the real api.github.com (``@octokit/fixtures``, pinned in
``questbot_testing/published.lock.json``) is sent
to the fake, which must answer with GitHub's status and GitHub's shape: every key the real
answer has, with a value of the same JSON type (``null`` on either side matches anything: the
recordings are normalized and the fake leaves unmodelled fields as GitHub's examples have them).

The recordings come with their own state — a repository holding ``README.md``, thirteen open
issues, a commit ``0…01`` — so each scene builds it in the fake first and maps the recorded
placeholders (SHAs, the repository id) to what the fake made. Where the fake does not model
an endpoint (release uploads, projects, renames…) it answers 404, as GitHub answers a route it
does not know, and says so as a violation; a scene lists what it does not cover, and why.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import pytest

from questbot_testing import published
from questbot_testing.fakegithub import FakeGitHub
from questbot_testing.fakegithub.state import Issue, Label, iso

ORG = "octokit-fixture-org"
SHA1, SHA2 = "0" * 39 + "1", "0" * 39 + "2"


def exchanges(name: str) -> list[dict[str, Any]]:
    return list(published.recorded(name))


def shape_problems(real: Any, ours: Any, where: str = "$") -> list[str]:
    """Where ``ours`` lacks a key of ``real`` or holds another JSON type."""
    if real is None or ours is None:
        return []
    if isinstance(real, dict):
        if not isinstance(ours, dict):
            return [f"{where}: an object on GitHub, {type(ours).__name__} here"]
        return [p for key, value in real.items()
                for p in (shape_problems(value, ours[key], f"{where}.{key}") if key in ours
                          else [f"{where}.{key}: missing"])]
    if isinstance(real, list):
        if not isinstance(ours, list):
            return [f"{where}: a list on GitHub, {type(ours).__name__} here"]
        return shape_problems(real[0], ours[0], f"{where}[0]") if real and ours else []
    kinds = {bool: "boolean", int: "number", float: "number", str: "string"}
    if kinds[type(real)] != kinds.get(type(ours)):
        return [f"{where}: {kinds[type(real)]} on GitHub, {type(ours).__name__} here"]
    return []


def repo_of(name: str) -> str:
    return f"{ORG}/{'hello-world' if name in ('get-content', 'get-repository') else name}"


def plain(fake: FakeGitHub, name: str) -> dict[str, str]:
    fake.create_repository(repo_of(name), {"README.md": "# hello-world"})
    return {}


def with_issue(fake: FakeGitHub, name: str) -> dict[str, str]:
    repo = fake.create_repository(repo_of(name), {"README.md": "x"})
    repo.issues[1] = Issue(repo.take_number(), "Lock me", None, "octokit-fixture-user-a", iso())
    return {}


def thirteen_issues(fake: FakeGitHub, name: str) -> dict[str, str]:
    repo = fake.create_repository(repo_of(name), {"README.md": "x"})
    for n in range(13):
        number = repo.take_number()
        repo.issues[number] = Issue(number, f"Test issue {n + 1}", None,
                                    "octokit-fixture-user-a", iso(1_500_000_000 + n))
    return {"/repositories/1000/": f"/repositories/{repo.id}/"}


def two_commits(fake: FakeGitHub, name: str) -> dict[str, str]:
    """``main`` at ``0…01``, whose parent is ``0…02``: the recording moves ``test`` from
    ``0…02`` to ``0…01`` without ``force``, so that is a fast-forward."""
    repo = fake.create_repository(repo_of(name), {"README.md": "x"})
    first = repo.refs["refs/heads/main"]
    main = repo.git.put_commit(repo.git.commits[first].tree, [first], "second").sha
    repo.refs["refs/heads/main"] = main
    return {SHA1: main, SHA2: first}


def at_main(fake: FakeGitHub, name: str) -> dict[str, str]:
    repo = fake.create_repository(repo_of(name), {"README.md": "x"})
    return {SHA1: repo.refs["refs/heads/main"]}


def default_labels(fake: FakeGitHub, name: str) -> dict[str, str]:
    repo = fake.create_repository(repo_of(name), {"README.md": "x"})
    for label in exchanges(name)[0]["response"]:
        repo.labels[label["name"].lower()] = Label(label["name"], label["color"],
                                                   label["description"])
    return {}


@dataclass(frozen=True)
class Scene:
    setup: Callable[[FakeGitHub, str], dict[str, str]] = plain
    gone: frozenset[int] = frozenset()
    """Exchanges whose route today's description no longer has: 404 and a violation."""
    unmodelled: str | None = None
    """The operation the fake does not model; the scene stops at its first request."""
    why: str = ""
    exact: bool = False
    """Compare error bodies word for word (``message`` and ``errors``)."""
    headers: tuple[str, ...] = field(default=())


SCENES: dict[str, Scene] = {
    "add-labels-to-issue": Scene(),
    "create-status": Scene(at_main),
    "errors": Scene(exact=True),
    "get-content": Scene(),
    "get-repository": Scene(),
    "get-root": Scene(),
    "git-refs": Scene(two_commits, gone=frozenset({0, 3}),
                      why="listing every ref at git/refs/ is not in today's description "
                          "(git/list-matching-refs replaced it)"),
    "labels": Scene(default_labels),
    "lock-issue": Scene(with_issue),
    "paginate-issues": Scene(thirteen_issues, headers=("link",)),
    "branch-protection": Scene(unmodelled="repos/get-branch-protection",
                               why="branch protection is not modelled beyond required checks"),
    "add-and-remove-repository-collaborator": Scene(
        unmodelled="repos/add-collaborator", why="questbot does not manage collaborators"),
    "create-file": Scene(unmodelled="repos/create-or-update-file-contents",
                         why="questbot writes through the Git Data API"),
    "get-archive": Scene(unmodelled="repos/download-tarball-archive",
                         why="checkouts read trees and blobs"),
    "get-organization": Scene(unmodelled="orgs/get", why="questbot reads no organisation"),
    "mark-notifications-as-read": Scene(unmodelled="activity/mark-notifications-as-read",
                                        why="an App has no notifications"),
    "markdown": Scene(unmodelled="markdown/render", why="questbot renders its own Markdown"),
    "project-cards": Scene(unmodelled="(none: classic projects are gone from the "
                                      "description)", why="GitHub retired classic projects"),
    "release-assets": Scene(unmodelled="repos/get-release-by-tag", why="no releases"),
    "release-assets-conflict": Scene(unmodelled="repos/get-release-by-tag", why="no releases"),
    "rename-repository": Scene(unmodelled="repos/update", why="repositories are not renamed"),
    "search-issues": Scene(unmodelled="search/issues-and-pull-requests",
                           why="questbot lists, it does not search"),
}


def test_every_recording_has_a_scene() -> None:
    assert set(published.recorded_scenarios()) == set(SCENES)


def substitute(value: Any, subs: dict[str, str]) -> Any:
    if isinstance(value, str):
        for old, new in subs.items():
            value = value.replace(old, new)
        return value
    if isinstance(value, dict):
        return {k: substitute(v, subs) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, subs) for v in value]
    return value


@pytest.mark.parametrize("name", sorted(SCENES))
async def test_the_fake_answers_each_recorded_exchange_as_github_did(name: str) -> None:
    scene = SCENES[name]
    async with FakeGitHub() as fake:
        subs = scene.setup(fake, name)
        repo = fake.repo(repo_of(name))
        token = fake.installation_token(repo.installation_id)
        async with aiohttp.ClientSession() as session:
            for index, recorded in enumerate(exchanges(name)):
                path = substitute(recorded["path"], subs)
                body = recorded["body"] if recorded["body"] != "" else None
                headers = {"Authorization": f"token {token}",
                           "Accept": recorded["reqheaders"].get("accept", "application/json")}
                async with session.request(recorded["method"].upper(), fake.url + path,
                                           json=substitute(body, subs), headers=headers,
                                           allow_redirects=False) as response:
                    status = response.status
                    raw = await response.read()
                    got_headers = {k.lower(): v for k, v in response.headers.items()}
                ours = json.loads(raw) if raw and "json" in got_headers.get(
                    "content-type", "") else raw.decode()
                where = f"{name}[{index}] {recorded['method'].upper()} {path}"
                if scene.unmodelled is not None or index in scene.gone:
                    assert status == 404, where
                    assert ours["message"] == "Not Found", where
                    expected = ("in the REST description" if index in scene.gone or str(
                        scene.unmodelled).startswith("(none") else str(scene.unmodelled))
                    assert len(fake.violations) == 1 and expected in fake.violations[0], (
                        where, fake.violations)
                    fake.violations.clear()
                    if scene.unmodelled is not None:
                        break
                    continue
                assert status == recorded["status"], (where, ours)
                real = recorded["response"]
                if isinstance(real, str):
                    assert ours == real or real == "", where
                else:
                    assert shape_problems(real, ours) == [], where
                if scene.exact and status >= 400:
                    assert (ours["message"], ours.get("errors")) == (
                        real["message"], real.get("errors")), where
                for header in scene.headers:
                    assert rels(got_headers.get(header)) == rels(recorded["headers"].get(
                        header)), where
        fake.assert_clean()


def rels(link: str | None) -> list[str]:
    """The relations of a ``Link`` header, in order, and the page each points to."""
    if not link:
        return []
    out = []
    for part in link.split(", "):
        url, rel = part.split("; ")
        out.append(f"{rel} {url.rsplit('page=', 1)[-1].rstrip('>')}")
    return out
