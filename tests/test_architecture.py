"""The house plan of ``bot/``, held against its imports: every room on a floor, and an import
only ever points to a room on a lower floor — never up, never in a circle. The pure core imports
the standard library and pydantic only (and orjson, a pure serializer).

To add a room, give it a floor here; to let a room import another, the other must be below it.
``docs/architecture.md`` draws the same plan."""

from __future__ import annotations

import ast
import re
import sys
from collections import defaultdict
from pathlib import Path

from questbot_testing import PROJECT

FLOORS: dict[str, int] = {
    # the ground: no questbot imports but each other's
    "errors": 0, "control_chars": 0, "gitrun": 0,
    "core": 1, "observe": 1,
    # every setting: the process's (the environment) and a repository's (its file); the store
    "settings": 2, "journal": 2,
    # what moves work along: the effect runner, leases, timers, doorbells, the inbound stream
    "runner": 3,
    "adapters": 4,
    "agent": 5,
    # what people read (pure), and reviews by capability
    "words": 6, "reviews": 6,
    # the one way to GitHub: the only room with a token or an HTTP call to it
    "github": 7,
    # which quest an event is about, who may act
    "quests": 8,
    # the concerns: each its router, what it does with an event, its effect adapters
    "views": 9, "failures": 9, "commands": 9,
    "pulls": 10, "inbox": 10, "lessons": 10, "reflection": 10, "repository": 10,
    # the concerns combined: one delivery's intents, each to its concern
    "intake": 11,
    # the processes
    "worker": 12, "web": 12, "register": 12,
    "tools": 13,
    "__main__": 14, "__init__": 14,
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
    """The rules would catch the arrows they exist for: the agent or the words reaching for
    GitHub, the GitHub room reaching for a concern."""
    assert FLOORS["github"] > FLOORS["agent"] and FLOORS["github"] > FLOORS["words"]
    assert FLOORS["pulls"] > FLOORS["github"]
    found = arrows()
    assert ("agent", "github") not in found and ("words", "github") not in found
    assert ("github", "words") in found  # the other way round is allowed, and real


def test_only_the_github_room_talks_to_github() -> None:
    """The one way to GitHub: no room but ``bot/github`` holds an HTTP client to it or mints
    a token (the web process's aiohttp server and the model agent's own endpoint aside)."""
    talking = {"gidgethub.aiohttp", "gidgethub.abc", "jwt"}
    found = {str(p.relative_to(PROJECT)): sorted(set(imports(p)) & talking)
             for p in (PROJECT / "bot").rglob("*.py")
             if room_of(p) != "github" and set(imports(p)) & talking}
    assert found == {}


KEY_SHAPES = (re.compile(r'["\'](?:q|repo):\{'), re.compile(r"\bhash_tag\("))
"""What building a Redis key looks like: a quest's or a repository's hash-tagged prefix."""


def test_no_redis_key_is_built_outside_the_layout_module() -> None:
    """Every key is made in ``bot/journal/keys.py``: one place to read the layout, to keep
    each quest's keys in one cluster slot, and to change a key's shape."""
    layout = PROJECT / "bot" / "journal" / "keys.py"
    built = {str(p.relative_to(PROJECT)): n for p in (PROJECT / "bot").rglob("*.py")
             if p != layout
             for n, line in enumerate(p.read_text().splitlines(), 1)
             if any(shape.search(line) for shape in KEY_SHAPES)
             and not line.lstrip().startswith(("#", '"""', "``"))}
    assert built == {}
    assert any(shape.search('    return f"q:{hash_tag(quest_id)}:gh"') for shape in KEY_SHAPES)


def test_every_setting_has_one_home_below_what_reads_it() -> None:
    """Issue 23: the process's settings and a repository's live in one room, ``settings``,
    below the agent and GitHub whose values they hold, so every room may read them and they
    read nothing above them."""
    assert FLOORS["settings"] < min(FLOORS["agent"], FLOORS["github"], FLOORS["runner"])
    found = arrows()
    assert {b for (a, b) in found if a == "settings"} <= {"core", "errors"}
    for part in ("process", "repository"):
        assert (PROJECT / "bot" / "settings" / part / "__init__.py").is_file()
