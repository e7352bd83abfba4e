"""questbot's GraphQL calls (``Forge.graphql``) against the fake's ``/graphql``: typed answers,
GitHub's refusals as ``PermanentError`` saying what to do, and the endpoint GitHub and GitHub
Enterprise Server use."""

from __future__ import annotations

import pytest

from bot.github.forge import Forge, Forges
from bot.github.forge.graphql import GraphQLRefused, graphql_endpoint
from bot.journal import PermanentError
from tests.github.conftest import REPO, World


async def forge_and_pull(world: World, *, draft: bool = True) -> tuple[Forge, str, int]:
    forge = await Forges(world.clients).for_repo(REPO)
    await world.push_quest()
    pull = await forge.create_pull(head="quest/q-1", base="main", title="t", body="b",
                                   draft=draft)
    assert pull.node_id.startswith("PR_")
    return forge, pull.node_id, pull.number


def test_the_endpoint_is_githubs_or_the_enterprise_servers() -> None:
    assert graphql_endpoint("https://api.github.com") == "https://api.github.com/graphql"
    assert graphql_endpoint("https://ghe.example.com/api/v3/") == (
        "https://ghe.example.com/api/graphql")
    assert graphql_endpoint("http://127.0.0.1:8080") == "http://127.0.0.1:8080/graphql"


async def test_draft_state_round_trips_through_graphql(world: World) -> None:
    forge, node_id, number = await forge_and_pull(world)
    ready = await forge.graphql.mark_ready(node_id)
    assert (ready.node_id, ready.number, ready.draft, ready.state) == (node_id, number, False,
                                                                       "OPEN")
    assert not (await forge.pull(number)).draft
    assert (await forge.graphql.convert_to_draft(node_id)).draft
    assert (await forge.pull(number)).draft


async def test_a_refusal_is_permanent_and_says_what_github_said(world: World) -> None:
    forge, node_id, _ = await forge_and_pull(world, draft=False)
    with pytest.raises(GraphQLRefused) as caught:
        await forge.graphql.enable_auto_merge(node_id, head=world.fake.repo(REPO).pulls[1]
                                              .head_sha)
    assert isinstance(caught.value, PermanentError) and caught.value.kind == "UNPROCESSABLE"
    assert "Auto merge is not allowed for this repository" in str(caught.value)
    assert str(caught.value).endswith("allow auto-merge in the repository's settings, or merge "
                                      "it by hand")
    with pytest.raises(GraphQLRefused) as missing:
        await forge.graphql.mark_ready("PR_kwbogus")
    assert missing.value.kind == "NOT_FOUND"


async def test_auto_merge_the_queue_and_revert_are_pinned_and_typed(world: World) -> None:
    forge, node_id, number = await forge_and_pull(world, draft=False)
    repo = world.fake.repo(REPO)
    head = repo.pulls[number].head_sha
    repo.allow_auto_merge, repo.required_checks = True, ["tests"]
    assert (await forge.graphql.enable_auto_merge(node_id, head=head,
                                                  method="SQUASH")).auto_merge == "SQUASH"
    repo.merge_queue = True
    entry = await forge.graphql.enqueue(node_id, head=head)
    assert (entry.state, entry.position) == ("QUEUED", 1)
    await world.fake.pass_check(REPO, head, "tests")  # GitHub merges it on its own
    assert repo.pulls[number].merged and await world.fake.settle_merges(REPO) == []
    revert = await forge.graphql.revert(node_id, title="Revert it")
    assert revert.state == "OPEN" and revert.number != number and not revert.draft
    assert repo.issues[revert.number].title == "Revert it"


async def test_pinning_an_issue_allows_three_per_repository(world: World) -> None:
    """BEHAVIOUR §8: ``pinIssue`` by the issue's node id; a fourth pin is refused for good,
    and unpinning one makes room again."""
    forge = await Forges(world.clients).for_repo(REPO)
    issues = [await forge.create_issue(f"issue {n}", "body") for n in range(4)]
    assert all(i.node_id.startswith("I_") for i in issues)
    for issue in issues[:3]:
        assert await forge.graphql.pin_issue(issue.node_id)
    assert await forge.graphql.pin_issue(issues[0].node_id)  # pinned already: still pinned
    with pytest.raises(GraphQLRefused) as full:
        await forge.graphql.pin_issue(issues[3].node_id)
    assert full.value.kind == "UNPROCESSABLE" and "3 pinned issues" in full.value.reason
    assert "at most three" in str(full.value)
    pinned = [n for n, i in world.fake.repo(REPO).issues.items() if i.pinned_at]
    assert pinned == [i.number for i in issues[:3]]
    world.fake.repo(REPO).issues[issues[1].number].pinned_at = 0  # a maintainer unpinned one
    assert await forge.graphql.pin_issue(issues[3].node_id)
    with pytest.raises(GraphQLRefused) as pull:  # a pull request's id is no issue's
        await forge.graphql.pin_issue((await forge_and_pull(world))[1])
    assert pull.value.kind == "NOT_FOUND"
