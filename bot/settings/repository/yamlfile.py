"""Reading ``.github/questbot.yml`` as YAML, safely, whatever its text: data or a ``SettingsError``.

Anyone who can push to the default branch writes this file, and the worker reads it on every
settings change, so reading it must neither crash nor hang on any text. Safe YAML alone does
neither promise: PyYAML composes nodes recursively (a few thousand ``[`` exceed Python's
recursion limit), expands aliases by reference (nine anchors of nine aliases each are 387
million list items to validate — the "billion laughs"), lets an anchor contain itself, and
raises ``ValueError`` or ``TypeError`` for a 5,000-digit number, a 13th month or a list used as
a key. So before anything is built, ``_check_shape`` walks the parser's events (iteratively)
and refuses a document nested deeper than ``MAX_DEPTH``, one whose aliases would expand past
``MAX_NODES`` values, and an anchor used inside itself; whatever the constructors still raise
becomes a problem with the line it was on.

On top of safe YAML, a key written twice is an error (plain YAML keeps the last one, so a typo
fixed further down would silently lose to the line above), and merge keys (``<<: *defaults``)
work as YAML 1.1 says: explicit keys override merged ones.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

import yaml

from bot.settings.repository.problems import SettingsError, SettingsProblem

MAX_SETTINGS_BYTES = 64 * 1024
"""Settings are a screenful; anything much larger is a mistake, not configuration."""
MAX_DEPTH = 32
"""Settings nest four levels deep (``proof.commands.0.0``); 32 leaves room for any honest file."""
MAX_NODES = 100_000
"""Values a document may hold once its aliases are expanded: far above any 64 KiB file written
without aliases (at most one value per two bytes), far below an alias bomb."""

_MERGE_TAG = "tag:yaml.org,2002:merge"


class _StrictLoader(yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader):  # type: ignore[misc]
    """Safe YAML that refuses duplicate keys instead of keeping the last; libyaml's parser
    when PyYAML has it (ten times the pure-Python one's speed on a 64 KiB file)."""


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        if key_node.tag == _MERGE_TAG:
            continue  # `<<` merges another mapping in; its keys may be overridden here
        if not isinstance(key_node, yaml.ScalarNode):
            raise yaml.constructor.ConstructorError(
                None, None, "a key must be a name such as `label`, not a list or a mapping",
                key_node.start_mark)
        key = loader.construct_object(key_node)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"the key {key!r} appears twice", key_node.start_mark
            )
        seen.add(key)
    loader.flatten_mapping(node)
    pairs = loader.construct_pairs(node)
    # a merged key comes first and an explicit one after it: the explicit one wins
    return dict(pairs)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


class _Mark(Protocol):
    """Where in the text: PyYAML's pure-Python and C marks both have these."""

    line: int
    column: int


_LINE_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
"""YAML 1.1's line breaks, which PyYAML and libyaml count lines by."""


def _problem(message: str, mark: _Mark | None = None, text: str = "") -> SettingsError:
    if mark is None:
        return SettingsError([SettingsProblem(path="", message=message)])
    lines = len(_LINE_BREAK.split(text))
    if mark.line + 1 > lines:  # libyaml puts an unfinished document's end on the next line
        return SettingsError([SettingsProblem(path="", message=message +
                                              " (at the end of the file)", line=lines)])
    return SettingsError([SettingsProblem(path="", message=f"{message} (column "
                                          f"{mark.column + 1})", line=mark.line + 1)])


def _check_shape(text: str) -> None:
    """Refuse, before composing, what would exhaust the stack, the memory or the clock."""
    open_anchors: list[tuple[str | None, int]] = []  # per open collection: anchor, values before
    sizes: dict[str, int] = {}  # values each finished anchor stands for
    values = 0
    for event in yaml.parse(text, Loader=_StrictLoader):
        if isinstance(event, yaml.AliasEvent):
            if any(anchor == event.anchor for anchor, _ in open_anchors):
                raise _problem(f"is not valid YAML: the alias *{event.anchor} is used inside "
                               f"&{event.anchor} itself, which would never end",
                               event.start_mark, text)
            values += sizes.get(event.anchor or "", 0)
        elif isinstance(event, yaml.ScalarEvent):
            values += 1
            if event.anchor:
                sizes[event.anchor] = 1
        elif isinstance(event, yaml.CollectionStartEvent):
            values += 1
            open_anchors.append((event.anchor, values))
            if len(open_anchors) > MAX_DEPTH:
                raise _problem(f"nests lists and mappings more than {MAX_DEPTH} levels deep; "
                               "settings need four at most", event.start_mark, text)
        elif isinstance(event, yaml.CollectionEndEvent):
            anchor, before = open_anchors.pop()
            if anchor:
                sizes[anchor] = values - before + 1
        if values > MAX_NODES:
            raise _problem(f"holds more than {MAX_NODES:,} values once its aliases are "
                           "expanded; settings are a few lines, so write them out",
                           event.start_mark, text)


def load_yaml(text: str) -> Any:
    """The data ``text`` holds (``None`` for an empty document); raises ``SettingsError``."""
    try:
        size = len(text.encode())
    except UnicodeEncodeError as exc:  # a lone surrogate: text that no file can hold
        raise _problem(f"is not UTF-8 text (character {exc.start + 1} is a lone surrogate); "
                       "save the file as UTF-8") from exc
    if size > MAX_SETTINGS_BYTES:
        raise SettingsError([SettingsProblem(
            path="", message=f"is larger than {MAX_SETTINGS_BYTES // 1024} KiB; settings are a "
            "few lines, so this is probably the wrong file")])
    try:
        _check_shape(text)
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise _problem(f"is not valid YAML: {exc.problem or exc.context or 'unreadable'}",
                       mark, text) from exc
    except yaml.YAMLError as exc:
        raise _problem(f"is not valid YAML: {exc}") from exc
    except ValueError as exc:  # a value YAML's constructors cannot build: 13th month, huge int
        raise _problem(f"has a value questbot cannot read ({exc}); put it in quotes if it "
                       "is meant as text") from exc
