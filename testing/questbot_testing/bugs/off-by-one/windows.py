"""Sliding windows over a series of measurements, for moving averages."""

from __future__ import annotations


def windows(values: list[float], size: int) -> list[list[float]]:
    """Every run of ``size`` consecutive values, in order: n values give n - size + 1."""
    if size < 1:
        raise ValueError(f"a window holds at least one value, not {size}")
    return [values[i : i + size] for i in range(len(values) - size)]


def moving_average(values: list[float], size: int) -> list[float]:
    """The mean of each window, in order."""
    return [sum(window) / size for window in windows(values, size)]
