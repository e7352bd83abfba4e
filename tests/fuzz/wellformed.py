"""What "parsed" means for an intent: every field holds the type its annotation names.

An intent whose ``number`` is a string or whose ``head`` is a list would crash later, in the
worker, far from the payload that caused it; the fuzzers check the types where the intent is
made.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

from pydantic import BaseModel


def conforms(value: Any, annotation: Any) -> bool:
    origin = typing.get_origin(annotation)
    if annotation is Any:
        return True
    if origin in (typing.Union, types.UnionType):
        return any(conforms(value, arm) for arm in typing.get_args(annotation))
    if origin is tuple:
        args = typing.get_args(annotation)
        if not isinstance(value, tuple):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(conforms(item, args[0]) for item in value)
        return len(args) == len(value) and all(map(conforms, value, args))
    if annotation is type(None):
        return value is None
    if annotation is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(annotation, type):
        return isinstance(value, annotation)
    raise TypeError(f"cannot check {annotation!r}")


def problems(intent: Any) -> list[str]:
    """Each field of the dataclass ``intent`` whose value is not of its annotated type."""
    assert dataclasses.is_dataclass(intent) and not isinstance(intent, type), intent
    hints = typing.get_type_hints(type(intent))
    found = []
    for item in dataclasses.fields(intent):
        value = getattr(intent, item.name)
        if isinstance(value, BaseModel):
            continue  # pydantic checked it when it was made
        if not conforms(value, hints[item.name]):
            found.append(f"{type(intent).__name__}.{item.name} = {value!r:.80} "
                         f"is not {hints[item.name]}")
    return found
