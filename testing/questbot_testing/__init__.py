"""questbot's test stack, a package of its own: the strict fake GitHub, the recorded model
server, Redis and Redis Cluster launchers, the whole-stack harness, the demo's sample repository
and the lifecycle scenarios. The demo, the benchmarks, the chaos run and the tests import it;
questbot itself (``bot``) never does.

Every part follows the real thing it stands in for: the fake GitHub checks each exchange against
GitHub's published descriptions (``questbot_testing.published``), the model server answers as
real inference servers answer."""

from __future__ import annotations

from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent.parent
"""The checkout this package is installed from (it is installed editable, by scripts/setup)."""
