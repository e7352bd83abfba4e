"""``Name``: the base of the core's string enums.

``StrEnum`` members are ``str`` instances and compare equal to their values, but ``Enum``
hashes them in Python by *name*. The core looks states and types up in dicts and sets on every
event, so ``Name`` hashes them as the strings they are: C speed, and consistent with ``==``.
"""

from __future__ import annotations

from enum import StrEnum


class Name(StrEnum):
    __hash__ = str.__hash__
