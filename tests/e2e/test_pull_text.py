"""The quest's pull request explains itself, on the strict fake GitHub: its title says what
failed and then what questbot thinks; its description is rewritten (``pulls/update``) when a
checkpoint brings new facts — and only then; the merged pull request keeps its record when a
regression reopens the quest, and the new one links it and the commit the failure came back on.
"""

from __future__ import annotations

from dataclasses import dataclass

from questbot_testing.scenario import REPO, Line, Story, main_line, regression
from questbot_testing.stack import Stack


@dataclass
class Seen:
    state: str
    number: int
    title: str
    body: str


def section(body: str, name: str) -> str:
    return body.split(f"### {name}", 1)[1].split("###", 1)[0].strip()


async def test_the_pull_request_explains_itself_at_each_checkpoint(stack: Stack) -> None:
    seen: list[Seen] = []
    story = Story(stack)

    def say(line: Line) -> None:
        repo = stack.fake.repo(REPO)
        mine = [p for p in repo.pulls.values() if p.head_ref.startswith("quest/")]
        newest = max(mine, key=lambda p: p.number)
        issue = repo.issues[newest.number]
        seen.append(Seen(line.state, newest.number, issue.title, issue.body or ""))

    story.say = say
    await main_line(story)
    by_state = {s.state: s for s in seen}
    a, b, c = by_state["hypothesised"], by_state["planned"], by_state["ready"]
    closed = by_state["closed"]
    quest = await stack.quest(story.quest_id)
    # the title: what failed, on which commit, then what questbot thinks
    assert a.title.startswith("Check tests failed on ") and " — " in a.title
    assert "questbot:" not in a.title and len(a.title) <= 120
    # A: the hypothesis as a quote, what to decide
    assert section(a.body, "What questbot thinks").startswith("> ")
    assert "Checkpoint A" in section(a.body, "What to do now")
    assert "[the failed check](" in section(a.body, "What failed")
    # B: the plan; C: the change, linked, and the proof
    assert section(b.body, "The plan").startswith("> ")
    assert "Checkpoint B" in section(b.body, "What to do now")
    assert f"/pull/{c.number}/files" in section(c.body, "The change")
    proof = section(c.body, "The proof")
    assert proof.startswith("On the fix as it is now (") and proof.endswith(".")
    assert "passed" in proof and "the new test fails on the base" in proof
    assert "Checkpoint C" in section(c.body, "What to do now")
    assert "the fix is merged" in section(closed.body, "What to do now")
    # written when a checkpoint brought facts, not at every event
    updates = stack.calls("pulls/update")
    assert all(set(u.json) == {"title", "body"} and u.status == 200 for u in updates)
    assert 3 <= len(updates) <= 5, [u.json["title"] for u in updates]

    await regression(story)
    repo = stack.fake.repo(REPO)
    first = repo.issues[closed.number]
    assert (first.title, first.body) == (closed.title, closed.body)  # the merged one's record
    fresh = seen[-1]
    assert fresh.number != closed.number and fresh.title.startswith("Regression: ")
    back = section(fresh.body, "This failure came back")
    assert f"/pull/{closed.number})" in back
    merged = repo.pulls[closed.number].merge_commit_sha
    assert merged and f"/commit/{merged})" in back
    came_back_on = str(repo.branch_sha("main"))
    assert f"/commit/{came_back_on})" in back and f"/compare/{merged}...{came_back_on})" in back
    assert quest.merge_sha == merged
