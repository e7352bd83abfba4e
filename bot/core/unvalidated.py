"""Making pydantic model instances without validation, for the core's hot path.

``Quest.evolve`` and ``Snapshot.of`` build instances from values that are typed already (they
come from a validated quest or event), so validation would only repeat itself. Pydantic's
``model_construct`` does this generically and slowly; these are the four slots it sets on every
instance, with their own setters (what ``object.__setattr__`` would call, minus its look-up).
"""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel

new = object.__new__
set_dict, set_fields_set, set_extra, set_private = (
    BaseModel.__dict__[name].__set__
    for name in ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__",
                 "__pydantic_private__")
)


M = TypeVar("M", bound=BaseModel)


_EVERY_FIELD: dict[type[BaseModel], set[str]] = {}
"""Each class's set of every field name, made once and shared by its instances ``make``
builds, as ``Quest.evolve`` shares a quest's: frozen models never change their fields set."""


def make(cls: type[M], data: dict[str, object]) -> M:
    """An instance of ``cls`` holding ``data`` — every field, each typed already — unvalidated:
    for records the core builds on every step from values it holds (seals, reviews, attempts).
    Its fields set is the names given, shared when they are every field (they always are)."""
    fields_set = _EVERY_FIELD.get(cls)
    if fields_set is None:
        fields_set = _EVERY_FIELD[cls] = set(cls.model_fields)
    if len(data) != len(fields_set):
        fields_set = set(data)
    instance = new(cls)
    set_dict(instance, data)
    set_fields_set(instance, fields_set)
    set_extra(instance, None)
    set_private(instance, None)
    return instance
