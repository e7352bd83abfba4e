"""The union assembled from the event families lists every event once, and ``EVENT_TYPES``
with it.

The events live in family modules (``bot.core.events.signals`` and the others) and
``bot.core.events`` names each in two places: the union ``Event`` and the ordered
``EVENT_TYPES``. A class defined in a family but left out of either — or named twice — fails
here before it reaches a journal.
"""

from __future__ import annotations

from typing import get_args

from bot.core.events import EVENT_TYPES, Event
from bot.core.events.base import _Event


def _every_event_class() -> set[type[_Event]]:
    found: set[type[_Event]] = set()
    todo = list(_Event.__subclasses__())
    while todo:
        cls = todo.pop()
        found.add(cls)
        todo.extend(cls.__subclasses__())
    return found


def test_the_union_holds_every_event_class_of_the_families() -> None:
    members = set(get_args(get_args(Event)[0]))
    assert members == _every_event_class()


def test_event_types_name_each_member_of_the_union_once() -> None:
    members = get_args(get_args(Event)[0])
    assert len(EVENT_TYPES) == len(set(EVENT_TYPES))
    assert set(EVENT_TYPES) == {cls.model_fields["type"].default for cls in members}


def test_event_types_keep_the_families_order() -> None:
    # The lifecycle docs and diagram list events in this order; the families are read top
    # to bottom: signals, agent work, decisions, landing, bookkeeping.
    assert EVENT_TYPES[:7] == ("signal_sensed", "triaged", "held", "research_started",
                               "rerun_requested", "rerun_reported", "signal_attached")
    assert EVENT_TYPES[-5:] == ("spend_requested", "spend_decided", "usage_recorded",
                                "effect_failed", "comment_posted")
