"""Summary figures for a day's response times, in milliseconds."""

from __future__ import annotations


def mean(values: list[float]) -> float:
    """The average of ``values``; 0.0 for a day with no requests."""
    return sum(values) / len(values)


def summary(values: list[float]) -> dict[str, float]:
    """The count, mean and slowest of a day's response times."""
    return {"count": float(len(values)), "mean": mean(values),
            "slowest": max(values, default=0.0)}
