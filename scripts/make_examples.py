"""Write the example journals under examples/ from questbot_testing.journals (after changing
events)."""

from __future__ import annotations

import json
from pathlib import Path

from questbot_testing.journals import JournalBuilder, main_line

ROOT = Path(__file__).resolve().parent.parent / "examples"


def rollback() -> JournalBuilder:
    b = JournalBuilder("q-rollback").sense().to_ready()
    b.decide("C")
    b.add("landed", merge_sha="merge1")
    b.add("regression_detected", source="check_run:7")
    b.add("rollback_confirmed", revert_sha="revert1")
    return b


def attempts_exhausted() -> JournalBuilder:
    b = JournalBuilder("q-exhausted").sense()
    b.add("hypothesis_written", summary="race in the cache")
    b.decide("A")
    b.add("reproduced", check="test_cache_race")
    b.add("plan_written", summary="lock the cache", risk="medium")
    b.decide("B")
    for attempt in range(1, b.policy.max_attempts + 1):
        b.add("patch_pushed", head=f"head{attempt}", pusher="questbot[bot]")
        b.add("proof_failed", head=f"head{attempt}", reason=f"test_cache_race still fails "
              f"(attempt {attempt})")
    return b


def write(name: str, b: JournalBuilder) -> None:
    lines = [json.dumps(e.model_dump(mode="json"), sort_keys=True) for e in b.events]
    (ROOT / name).write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    ROOT.mkdir(exist_ok=True)
    write("main-line-closed.jsonl", main_line("q-main"))
    write("rollback-revision-2.jsonl", rollback())
    write("parked-attempts-exhausted.jsonl", attempts_exhausted())


if __name__ == "__main__":
    main()
