"""GitHub's secondary limit on content creation, as the fake enforces it: an installation's
81st content-creating request in a minute (or 501st in an hour) is refused 403 with GitHub's
message and a ``retry-after``, the primary limit untouched (BEHAVIOUR.md §15)."""

from __future__ import annotations

import aiohttp
from multidict import CIMultiDict

from questbot_testing.fakegithub import FakeGitHub
from questbot_testing.fakegithub.faults import SECONDARY

REPO = "octo-org/limits"


async def test_the_81st_write_in_a_minute_is_refused_until_the_minute_has_passed() -> None:
    now = [1_000_000.0]
    async with FakeGitHub(clock=lambda: now[0]) as fake, aiohttp.ClientSession() as session:
        repo = fake.create_repository(REPO, {"a.txt": "a\n"})
        auth = {"Authorization": "token " + fake.installation_token(repo.installation_id)}

        async def create(title: str) -> tuple[int, CIMultiDict[str], dict[str, object]]:
            async with session.post(f"{fake.url}/repos/{REPO}/issues", json={"title": title},
                                    headers=auth) as reply:
                return reply.status, CIMultiDict(reply.headers), await reply.json()

        for n in range(80):
            now[0] += 0.5  # 80 writes in 40 s
            assert (await create(f"t{n}"))[0] == 201
        async with session.get(f"{fake.url}/repos/{REPO}/issues", headers=auth) as reply:
            assert reply.status == 200  # reads are not content creation
        status, headers, body = await create("one too many")
        assert (status, body["message"]) == (403, SECONDARY)
        assert headers["retry-after"] == "60" and int(headers["x-ratelimit-remaining"]) > 0
        assert len(repo.issues) == 80 and len(fake.secondary.hits) == 1
        now[0] += 20.5  # the first write is now over a minute old
        assert (await create("in the next minute"))[0] == 201
        fake.secondary.hits.clear()
        fake.assert_clean()


async def test_graphql_mutations_count_and_an_hour_holds_500() -> None:
    now = [1_000_000.0]
    async with FakeGitHub(clock=lambda: now[0]) as fake:
        repo = fake.create_repository(REPO, {"a.txt": "a\n"})
        limits = fake.secondary
        for n in range(500):
            now[0] += 2.0  # 30 a minute: under the minute's limit, over the hour's at 501
            limits.take(repo.installation_id, f"write {n}")
        assert limits.hits == []
        auth = {"Authorization": "token " + fake.installation_token(repo.installation_id)}
        mutation = {"query": "mutation { addStar(input: {starrableId: \"x\"}) { clientMutationId"
                             " } }"}
        async with aiohttp.ClientSession() as session, session.post(
                f"{fake.url}/graphql", json=mutation, headers=auth) as reply:
            assert reply.status == 403 and (await reply.json())["message"] == SECONDARY
        assert limits.hits == ["POST /graphql (a mutation): more than 500 content-creating "
                               "requests in 3600 s"]


async def test_each_mutation_of_a_document_counts_and_a_document_past_the_limit_is_refused_whole(
        ) -> None:
    """GitHub does not say whether a document of several mutations counts once or per
    mutation against content creation; the fake takes the stricter reading (BEHAVIOUR §16)."""
    now = [1_000_000.0]
    async with FakeGitHub(clock=lambda: now[0]) as fake:
        repo = fake.create_repository(REPO, {"a.txt": "a\n"})
        limits = fake.secondary
        for n in range(78):
            limits.take(repo.installation_id, f"write {n}")
        auth = {"Authorization": "token " + fake.installation_token(repo.installation_id)}
        star = 'addStar(input: {starrableId: "x"}) { clientMutationId }'
        three = {"query": f"mutation {{ a: {star} b: {star} c: {star} }}"}
        async with aiohttp.ClientSession() as session, session.post(
                f"{fake.url}/graphql", json=three, headers=auth) as reply:
            assert reply.status == 403 and (await reply.json())["message"] == SECONDARY
        assert len(limits.hits) == 1 and len(limits._seen[repo.installation_id]) == 78
        limits.hits.clear()
