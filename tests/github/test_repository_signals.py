"""What GitHub tells questbot about a repository's own life, read from GitHub's example
payloads (``bot.repository.signals``): archived, renamed, transferred, made private, the
default branch renamed, removed from or added to the App, the App suspended or uninstalled,
a quest branch deleted."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from bot.adapters import AppIdentity
from bot.intake.routes import read_intents
from bot.repository.names import repositories
from bot.repository.signals import RepositoryChanged
from bot.words.repository import Change
from questbot_testing.fakegithub.webhooks import build_payload

REPO = "octo/sample"
QUESTBOT = AppIdentity(id=4242, slug="questbot")


async def changes(event: str, example: str, *, repository: dict[str, Any] | None = None,
                  named: bool = True, **overrides: Any) -> list[RepositoryChanged]:
    if repository is not None:
        overrides["repository"] = repository
    payload = build_payload(event, example, repository=REPO if named else None,
                            overrides=overrides, user="maya")
    return [i for i in await read_intents(event, payload, delivery_id="d-1", app=QUESTBOT)
            if isinstance(i, RepositoryChanged)]


async def test_archived_and_unarchived() -> None:
    (archived,) = await changes("repository", "privatized.payload.json", action="archived")
    assert (archived.change, archived.repos, archived.actor) == (Change.ARCHIVED, (REPO,),
                                                                "maya")
    (back,) = await changes("repository", "privatized.payload.json", action="unarchived")
    assert back.change is Change.UNARCHIVED


async def test_deleted() -> None:
    (deleted,) = await changes("repository", "privatized.payload.json", action="deleted")
    assert (deleted.change, deleted.repos, deleted.actor) == (Change.DELETED, (REPO,), "maya")


async def test_the_ids_of_a_deleted_repository_and_of_one_given_to_the_app() -> None:
    """A deleted repository restored keeps its id; one made since under its name has
    another: what ``bot.repository.restorable`` tells them apart by."""
    (deleted,) = await changes("repository", "privatized.payload.json", action="deleted",
                               repository={"id": 77, "full_name": REPO})
    assert deleted.ids == ((REPO, 77),) and deleted.id_of(REPO.upper()) == 77
    (added,) = await changes("installation_repositories", "added.payload.json", named=False,
                             repositories_added=[{"id": 78, "full_name": REPO,
                                                  "name": "sample", "node_id": "R_78",
                                                  "private": False}])
    assert added.id_of(REPO) == 78 and added.id_of("octo/other") is None


async def test_renamed_and_transferred_name_where_the_repository_was() -> None:
    (renamed,) = await changes("repository", "renamed.payload.json",
                               changes={"repository": {"name": {"from": "old-name"}}})
    assert (renamed.change, renamed.old) == (Change.RENAMED, "octo/old-name")
    (moved,) = await changes("repository", "transferred.payload.json",
                             changes={"owner": {"from": {"user": {"login": "first"}}}})
    assert (moved.change, moved.old) == (Change.TRANSFERRED, "first/sample")


async def test_made_private_and_the_default_branch_renamed() -> None:
    (private,) = await changes("repository", "privatized.payload.json")
    assert private.change is Change.PRIVATIZED
    (edited,) = await changes("repository", "edited.with-default_branch-edit.payload.json",
                              changes={"default_branch": {"from": "main"}},
                              repository={"default_branch": "trunk"})
    assert (edited.change, edited.old, edited.branch) == (Change.DEFAULT_BRANCH, "main",
                                                          "trunk")
    assert await changes("repository", "edited.payload.json") == []  # a description edited


async def test_the_installation_its_repositories_suspended_and_gone() -> None:
    (removed,) = await changes("installation_repositories", "removed.payload.json",
                               named=False)
    assert removed.change is Change.REMOVED and removed.repos == ("octocat/Hello-World",)
    assert removed.installation_id is not None
    (added,) = await changes("installation_repositories", "added.payload.json",
                             named=False)
    assert added.change is Change.ADDED
    (suspended,) = await changes("installation", "suspend.payload.json", named=False)
    assert suspended.change is Change.SUSPENDED and suspended.repos == ()
    (gone,) = await changes("installation", "deleted.payload.json", named=False)
    assert gone.change is Change.UNINSTALLED
    assert await changes("installation", "new_permissions_accepted.payload.json",
                         named=False) == []


async def test_a_deleted_quest_branch_by_a_person_and_not_by_questbot() -> None:
    deleted = {"ref": "refs/heads/quest/q0123456789", "deleted": True, "after": "0" * 40}
    (gone,) = await changes("push", "with-installation.payload.json", **deleted)
    assert (gone.change, gone.branch, gone.actor) == (Change.BRANCH_DELETED,
                                                      "quest/q0123456789", "maya")
    ours = {**deleted, "sender": {"login": "questbot[bot]", "type": "Bot"}}
    assert await changes("push", "with-installation.payload.json", **ours) == []
    other = {**deleted, "ref": "refs/heads/feature"}
    assert await changes("push", "with-installation.payload.json", **other) == []


# --- the repositories a payload names (bot.repository.names) ---------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 2**64) | st.text(max_size=12)
    | st.sampled_from(["octo/sample", "a/b/c", "", "octo/"]),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.sampled_from(["id", "full_name", "repo", "head", "repository", "x"]),
                      inner, max_size=4),
    max_leaves=30)


@given(JSON)
def test_any_payload_yields_only_repositories(value: object) -> None:
    for found in repositories(value):
        assert isinstance(found["id"], int) and not isinstance(found["id"], bool)
        assert found["id"] > 0 and found["full_name"].count("/") == 1


async def test_every_repository_of_a_real_payload_is_found() -> None:
    payload = build_payload("pull_request", "opened", repository=REPO)
    names = {r["full_name"] for r in repositories(payload)}
    assert REPO in names
    assert len(list(repositories(payload))) >= 3  # the repository, the head's and the base's
