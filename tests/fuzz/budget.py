"""How hard the fuzzers try: a few seconds each by default, deeper on request.

``QUESTBOT_FUZZ_EXAMPLES`` sets every fuzzer's example count (as ``QUESTBOT_PROPERTY_EXAMPLES``
does for the property tests). Left unset, the counts are small and the runs derandomized, so the
suite stays fast and a failure reproduces on every machine; set, the runs draw fresh inputs
each time and print the blob that reproduces a failure.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, Phase, settings

EXAMPLES_ENV = "QUESTBOT_FUZZ_EXAMPLES"


def examples(default: int) -> int:
    """The example count for one fuzzer: ``default``, or what ``QUESTBOT_FUZZ_EXAMPLES`` says."""
    return int(os.environ.get(EXAMPLES_ENV, default))


def fuzz(default: int, *, shrink: bool = True) -> settings:
    """Hypothesis settings for a fuzzer whose default run takes a few seconds. ``shrink=False``
    for a fuzzer expected to fail (``xfail``) on a known bug: shrinking its failure would cost
    far more than finding it."""
    deep = EXAMPLES_ENV in os.environ
    phases = [phase for phase in Phase if shrink or phase is not Phase.shrink]
    return settings(
        phases=phases,
        max_examples=examples(default),
        derandomize=not deep,
        database=None,
        deadline=None,
        print_blob=deep,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
            HealthCheck.function_scoped_fixture,
        ],
    )
