"""The worker process's garbage collector, settled once at start-up (``settle``).

Why. A worker holds the quests it writes (``Journal``'s cache, up to 10,000 of them), and each
apply makes a new version of one quest that lives until that quest's next event: long enough to
be promoted to the oldest generation, where it dies. With Python's default thresholds
(700, 10, 10) a full collection then comes every ~70,000 allocations and walks every object the
process holds. Measured with ``scripts/bench_journal.py``'s full size (3,000 quests, each quest's
version living a round of 500 applies), full collections took 16-21 µs and the young and middle
ones 5-7 µs more of the 72-87 µs of CPU an apply; that is why the full run's ratio was 0.30
where ``--quick``'s (300 quests, whose versions die young) was 0.38 (``docs/performance.md``,
*Why the full run was slower than --quick*).

Settled: what start-up allocated (modules, classes, clients, settings: alive as long as the
process) is frozen, so no collection walks it again, and the young generation's threshold is
10,000, so a full collection comes at most every ~1,000,000 allocations. Measured the same way:
4-5 µs of collection an apply, its CPU -25%. Cycles are still collected, only less often.

The price is a longer young collection, a few milliseconds now and then; the web process keeps
the defaults for its p99 (``bot/web/app.py`` says why), the worker has no such deadline.

Raised again, 10,000 → 100,000 (issue 26, item 5, on a machine ~2.5 times slower than the one
above): the count is allocations *less deallocations*, and a worker in its stride frees an old
version of a quest for each new one it makes, so the count climbs slowly while the young
generation fills with every new version still held — each young collection then walked some
15,000-25,000 objects (20-70 ms here) and the young and middle ones together took 10-25 µs of
the ~100 µs of CPU an apply at 3,000 quests. At 100,000 a worker whose held quests are not
growing all but never collects (0-1 young collections in a run of 36,000 applies, against 12):
what a young collection would find is mostly versions that die by refcount anyway. What it
gives up: garbage in cycles (rare here: some 150 objects in 36,000 applies, from exceptions'
tracebacks) waits for up to 100,000 allocations before it is freed, a few MB at most.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 100_000
"""Allocations (less deallocations) between two young collections; Python's default is 700."""


def settle() -> None:
    """Freeze what start-up allocated and raise the young generation's threshold; call once,
    when the process has started (the worker's ``_serve``; the journal benchmarks call it too,
    so they measure what a worker runs)."""
    gc.collect()  # start-up's garbage is not frozen with the rest
    gc.freeze()
    _young, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
