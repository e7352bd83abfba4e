"""One exception tree: every exception class questbot defines derives from ``QuestbotError``
and from exactly the groups ``bot.errors`` names, so a caller can decide what to do from the
class alone."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import bot
from bot import errors

GROUPS = (errors.Refused, errors.PermanentError, errors.RetryLater, errors.ConfigurationError,
          errors.InternalError)
ROOM_BASES = {"QuestError", "JournalError", "AgentError", "GitHubAdapterError", "AuthError",
              "SignatureError", "IllegalMove", "EndpointFailed"}
"""A room's own base, caught as "anything from this room"; it need not name a group."""
PRIVATE_CONTROL_FLOW = {"bot.agent.command._Capped", "bot.settings.process.problems._Whole",
                        "bot.settings.process.model.WholeSentence"}
"""Raised and caught inside one function, never seen by a caller."""


def _exception_classes() -> list[type[BaseException]]:
    found: list[type[BaseException]] = []
    for info in pkgutil.walk_packages(bot.__path__, prefix="bot."):
        if info.name == "bot.__main__":
            continue
        module = importlib.import_module(info.name)
        for _name, value in vars(module).items():
            if (inspect.isclass(value) and issubclass(value, BaseException)
                    and value.__module__ == module.__name__):
                found.append(value)
    return found


CLASSES = _exception_classes()


def test_the_walk_finds_the_rooms_errors() -> None:
    names = {c.__name__ for c in CLASSES}
    assert {"InvalidTransition", "CorruptJournal", "UnsafePath", "NotInstalled",
            "SettingsError", "ConfigError", "QuestNotFound", "RecordError"} <= names


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: f"{c.__module__}.{c.__name__}")
def test_every_error_is_in_the_tree_and_in_a_group(cls: type[BaseException]) -> None:
    qualified = f"{cls.__module__}.{cls.__name__}"
    if qualified in PRIVATE_CONTROL_FLOW:
        return
    assert issubclass(cls, errors.QuestbotError), f"{qualified} is outside the tree"
    if cls is errors.QuestbotError or cls in GROUPS or cls.__name__ in ROOM_BASES:
        return
    assert any(issubclass(cls, group) for group in GROUPS), (
        f"{qualified} says nothing about what its caller should do: derive it from one of "
        f"{', '.join(g.__name__ for g in GROUPS)}")
