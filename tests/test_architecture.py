"""The house plan of ``bot/``, held against its imports: every room on a floor, and an import
only ever points to a room on a lower floor — never up, never in a circle. The pure core imports
the standard library and pydantic only (and orjson, a pure serializer).

To add a room, give it a floor here; to let a room import another, the other must be below it.
``docs/architecture.md`` draws the same plan."""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

from questbot_testing import PROJECT

FLOORS: dict[str, int] = {
    # the ground: no questbot imports but each other's
    "errors": 0, "control_chars": 0, "gitrun": 0,
    "core": 1, "observe": 1,
    "settings": 2, "journal": 2,
    "adapters": 3,
    "agent": 4,
    "reviews": 5,
    "words": 5,
    "github": 6,
    "config": 7,
    "worker": 8, "web": 8, "register": 8,
    "tools": 9,
    "__main__": 10, "__init__": 10,
}

CORE_MAY_IMPORT = {"pydantic", "pydantic_core", "typing_extensions", "orjson"}
"""orjson: a pure serializer, no I/O — the seals' digests at a fifth of the cost
(docs/decisions.md, "The fold after seals")."""


def room_of(path: Path) -> str:
    parts = path.relative_to(PROJECT / "bot").parts
    return parts[0].removesuffix(".py")


def imports(path: Path) -> list[str]:
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
    return found


def arrows() -> dict[tuple[str, str], list[str]]:
    """(from room, to room) → the files that make the arrow."""
    found: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in sorted((PROJECT / "bot").rglob("*.py")):
        source = room_of(path)
        for module in imports(path):
            if module.startswith("bot."):
                target = module.split(".")[1]
                if target != source:
                    found[(source, target)].append(str(path.relative_to(PROJECT)))
    return found


def test_every_room_has_a_floor() -> None:
    rooms = {room_of(p) for p in (PROJECT / "bot").rglob("*.py")}
    assert rooms - set(FLOORS) == set(), "give the new room a floor in FLOORS"
    assert set(FLOORS) - rooms == set(), "a room in FLOORS is gone: take it out"


def test_every_arrow_points_down() -> None:
    up = {f"{a} (floor {FLOORS[a]}) -> {b} (floor {FLOORS[b]})": files
          for (a, b), files in arrows().items() if FLOORS[b] >= FLOORS[a]}
    assert up == {}


def test_the_core_imports_the_standard_library_and_pydantic_only() -> None:
    outside: dict[str, set[str]] = defaultdict(set)
    for path in (PROJECT / "bot" / "core").rglob("*.py"):
        for module in imports(path):
            top = module.split(".")[0]
            if top in sys.stdlib_module_names or top in CORE_MAY_IMPORT:
                continue
            if module.startswith(("bot.core", "bot.errors")):
                continue
            outside[str(path.relative_to(PROJECT))].add(module)
    assert dict(outside) == {}


def test_the_check_sees_an_arrow_up() -> None:
    """The rule would catch the arrow it exists for: the agent reaching for the GitHub adapter."""
    assert FLOORS["github"] > FLOORS["agent"]
    assert ("agent", "github") not in arrows()
    assert ("github", "agent") in arrows()  # the other way round is allowed, and real
