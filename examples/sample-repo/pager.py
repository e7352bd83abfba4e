"""Split a list of items into numbered pages, the way a listing view shows them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def page_count(total: int, per_page: int) -> int:
    """How many pages ``total`` items fill at ``per_page`` items a page."""
    if per_page < 1:
        raise ValueError(f"per_page must be at least 1, not {per_page}")
    return total // per_page


def page(items: Sequence[T], number: int, per_page: int) -> list[T]:
    """The items on page ``number`` (the first page is 1)."""
    last = page_count(len(items), per_page)
    if not 1 <= number <= last:
        raise IndexError(f"page {number} is out of range 1..{last}")
    start = (number - 1) * per_page
    return list(items[start : start + per_page])
