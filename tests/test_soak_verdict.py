"""The soak's flatness verdict (``scripts/soak.py``'s ``flatness``) on made-up samples: a figure
that grows by what each ended quest may keep is flat however long the last quests take to
drain, and one that grows by more is not."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def script(name: str, patch: pytest.MonkeyPatch) -> ModuleType:
    """A module of ``scripts/``, loaded from its file and named in ``sys.modules`` while the
    test module runs (the scripts import each other as the directory they run from, which the
    tests do not put on the path, and a dataclass looks its module up there)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    patch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def soak() -> Iterator[ModuleType]:
    with pytest.MonkeyPatch.context() as patch:
        script("chaos", patch)  # soak.py's ``from chaos import``
        yield script("soak", patch)


def run(soak: ModuleType, *, keys_per_quest: float, drain_s: float) -> dict[str, dict]:
    """Ten minutes of driving, a quest ending every 5 s, then ``drain_s`` of draining; each
    ended quest leaves ``keys_per_quest`` lasting keys, nothing else moves."""
    args = argparse.Namespace(flat_tolerance=0.0, ended_bytes=600, ended_keys=1.0, sample=5.0,
                              warmup=0.2, window=0.2)
    state = soak.Soak()
    end = 600.0
    state.last_start = end
    for n in range(1, int(end // 5) + 1):
        state.quests.append(soak.Started(repo=f"r{n}", at=n * 5 - 60, ended=n * 5.0))
    for n in range(int((end + drain_s) // 5) + 1):
        at = n * 5.0
        ended = min(at, end) // 5
        state.samples.append(soak.Sample(at=at, rss={"w": 100 << 20, "x": 50 << 20},
                                         used_memory=4 << 20, keys=1000,
                                         lasting=400 + round(keys_per_quest * ended)))
    return soak.flatness(args, state, 0.0, end + drain_s, {"w": "worker", "x": "web"})


@pytest.mark.parametrize("drain_s", [0.0, 40.0, 200.0])
def test_what_each_ended_quest_may_keep_is_flat_however_long_the_drain(
        soak: ModuleType, drain_s: float) -> None:
    keys = run(soak, keys_per_quest=1.0, drain_s=drain_s)["redis_lasting_keys"]
    assert keys["flat"], keys
    assert keys["last_half_growth"] == pytest.approx(60, abs=1)  # 60 quests ended in the half


@pytest.mark.parametrize("drain_s", [0.0, 200.0])
def test_more_than_that_is_not_flat(soak: ModuleType, drain_s: float) -> None:
    keys = run(soak, keys_per_quest=1.3, drain_s=drain_s)["redis_lasting_keys"]
    assert not keys["flat"], keys
    # 60 steps of growth, 61 quests ended counting both edges of the half
    assert keys["last_half_per_ended_quest"] == pytest.approx(1.3, abs=0.03)
