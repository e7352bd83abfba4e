"""The evidence bundle: ``verified`` and the checks are the result's, never its own."""

from __future__ import annotations

from bot.agent.machine import TERMINAL_STATES
from tests.agent.bundles import PASS, UNVERIFIED, bundle, verified_result


def test_result_states_are_all_covered() -> None:
    assert {r.state for r in UNVERIFIED.values()} == set(TERMINAL_STATES)


def test_bundle_verified_is_the_results() -> None:
    assert bundle(verified_result()).verified is True
    assert bundle(UNVERIFIED["failed"]).verified is False
    assert bundle(verified_result()).checks == (PASS,)
