"""The webhook parser's rules about people: who a comment or push is from, and what an edit says.

Payloads are GitHub's examples with the fields that matter replaced; the fuzzer in
``tests/fuzz/test_signals.py`` covers damaged ones.
"""

from __future__ import annotations

from typing import Any

from bot.adapters import AppIdentity
from bot.commands.signals import CommentCommands
from bot.intake.routes import read_intents
from bot.pulls.signals import QuestPush
from bot.words.commands import Command, CommandName
from questbot_testing.fakegithub.webhooks import build_payload

REPO = "octo/sample"


QUESTBOT = AppIdentity(id=4242, slug="questbot")


async def intents(event: str, example: str, *, changes: dict[str, Any] | None = None,
                  app: AppIdentity = QUESTBOT, **overrides: Any) -> list[object]:
    payload = build_payload(event, example, repository=REPO, overrides=overrides)
    if changes is not None:
        payload["changes"] = changes  # replaced, not merged into the example's
    return [i for i in await read_intents(event, payload, delivery_id="d-1", app=app)
            if type(i).__name__ != "Installed"]


def edited(before: str, after: str, *, author: str = "maya", editor: str = "maya",
           editor_type: str = "User") -> dict[str, Any]:
    return {"changes": {"body": {"from": before}},
            "comment": {"body": after, "user": {"login": author, "type": "User"}},
            "sender": {"login": editor, "type": editor_type}}


async def test_an_edit_reads_only_the_commands_it_adds() -> None:
    (intent,) = await intents("issue_comment", "edited",
                              **edited("/approve\nlooks good", "/claim\n/approve\nlooks good"))
    assert isinstance(intent, CommentCommands)
    assert intent.commands == (Command(name=CommandName.CLAIM, line=1),)


async def test_an_edit_that_keeps_or_moves_its_commands_says_nothing_new() -> None:
    for after in ("/approve\nthanks", "thanks\n\n/approve", "  /approve"):
        assert await intents("issue_comment", "edited", **edited("/approve", after)) == []


async def test_an_edit_is_the_editors_command_and_a_bots_edit_is_ignored() -> None:
    (intent,) = await intents("issue_comment", "edited",
                              **edited("hi", "hi\n/approve", author="rex", editor="maya"))
    assert isinstance(intent, CommentCommands) and intent.author == "maya"
    assert await intents("issue_comment", "edited", **edited(
        "hi", "hi\n/approve", editor="renovate[bot]", editor_type="Bot")) == []


async def test_an_edit_of_the_title_alone_says_nothing() -> None:
    assert await intents("issue_comment", "edited", comment={"body": "/approve"},
                         changes={"title": {"from": "old title"}}) == []
    assert await intents("issue_comment", "edited", comment={"body": "/approve"},
                         changes={}) == []  # GitHub did not say what the body was


async def test_deleting_a_comment_says_nothing() -> None:
    assert await intents("issue_comment", "deleted", comment={"body": "/approve"}) == []


async def test_a_bot_is_known_by_its_type_not_its_login() -> None:
    def comment(login: str, kind: str) -> dict[str, Any]:
        return {"comment": {"body": "/approve", "user": {"login": login, "type": kind}}}

    assert await intents("issue_comment", "created", **comment("dependabot[bot]", "Bot")) == []
    (intent,) = await intents("issue_comment", "created", **comment("questbot[bot]", "User"))
    assert isinstance(intent, CommentCommands) and intent.author == "questbot[bot]"


async def test_only_questbots_own_account_pushes_questbots_commits() -> None:
    async def push(login: str, kind: str) -> QuestPush:
        (intent,) = await intents("push", "with-installation", ref="refs/heads/quest/q1",
                                  after="a" * 40, sender={"login": login, "type": kind})
        assert isinstance(intent, QuestPush)
        return intent

    assert (await push("questbot[bot]", "Bot")).by_bot
    assert not (await push("questbot[bot]", "User")).by_bot  # a person, whatever the name
    assert not (await push("dependabot[bot]", "Bot")).by_bot  # another App's commit
    assert not (await push("carol", "User")).by_bot


async def test_an_app_named_otherwise_pushes_as_its_own_bot_account() -> None:
    fixbot = AppIdentity(id=31337, slug="fixbot")

    async def by_bot(login: str) -> bool:
        (intent,) = await intents("push", "with-installation", ref="refs/heads/quest/q1",
                                  after="a" * 40, sender={"login": login, "type": "Bot"},
                                  app=fixbot)
        assert isinstance(intent, QuestPush)
        return intent.by_bot

    assert await by_bot("fixbot[bot]")
    assert not await by_bot("questbot[bot]")  # another App, named as questbot's default
