"""What is wrong with a ``.github/questbot.yml``, in words a maintainer can act on.

``parse_settings`` turns YAML and validation errors into ``SettingsProblem``s here: each names
the field path (``checkpoints.B``), the file line when the YAML says, what was expected and
what was found, and for an unknown key the setting it was probably meant to be.
``render_settings_problem`` turns them into Markdown for a check run or an issue comment.
"""

from __future__ import annotations

import difflib
import re

import yaml
from pydantic import BaseModel, ConfigDict
from pydantic_core import ErrorDetails

from bot.errors import ConfigurationError

SETTINGS_PATH = ".github/questbot.yml"


class SettingsProblem(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    """Dotted field path (``checkpoints.B``, ``proof.commands.0``); empty for the whole file."""
    message: str
    """What is wrong, starting with the field: "`checkpoints.B` must be one of …"."""
    line: int | None = None
    """1-based line in the file, when known."""

    def __str__(self) -> str:
        where = f"`{SETTINGS_PATH}`" if self.line is None else f"`{SETTINGS_PATH}` line {self.line}"
        return f"{where}: {self.message}"


class SettingsError(ConfigurationError):
    """``.github/questbot.yml`` cannot be used; the last good settings stay in force."""

    def __init__(self, problems: list[SettingsProblem]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(str(problem) for problem in self.problems))


def describe(
    error: ErrorDetails, lines: dict[tuple[str, ...], int], root: type[BaseModel]
) -> SettingsProblem:
    """One pydantic error in plain words; ``lines`` is from ``key_lines``, ``root`` the model."""
    loc = tuple(str(part) for part in error["loc"])
    path = ".".join(loc)
    line = next((lines[loc[:n]] for n in range(len(loc), 0, -1) if loc[:n] in lines), None)
    field = f"`{path}`" if path else "the settings"
    kind, ctx, got = error["type"], error.get("ctx", {}), error.get("input")
    if kind == "extra_forbidden":
        known = _known_fields(root, loc[:-1])
        by_lower = {name.lower(): name for name in known}
        close = difflib.get_close_matches(loc[-1].lower(), list(by_lower), n=1)
        hint = ""
        if close:
            hint = f"; did you mean `{'.'.join((*loc[:-1], by_lower[close[0]]))}`?"
        elif known:
            hint = f"; the settings here are {', '.join(known)}"
        return SettingsProblem(path=path, message=f"{field} is not a setting{hint}", line=line)
    if kind in {"enum", "literal_error"}:
        allowed = ", ".join(re.findall(r"'([^']*)'", str(ctx.get("expected", ""))))
        message = f"{field} must be one of {allowed} (got {_shown(got)})"
    elif kind in {"int_type", "int_parsing", "int_from_float"}:
        message = f"{field} must be a whole number (got {_shown(got)})"
    elif kind == "bool_type":
        message = f"{field} must be true or false (got {_shown(got)})"
    elif kind in {"string_type"}:
        message = f"{field} must be text (got {_shown(got)})"
    elif kind in {"greater_than_equal", "greater_than"}:
        message = f"{field} must be at least {ctx.get('ge', ctx.get('gt'))} (got {_shown(got)})"
    elif kind in {"less_than_equal", "less_than"}:
        message = f"{field} must be at most {ctx.get('le', ctx.get('lt'))} (got {_shown(got)})"
    elif kind in {"string_too_short", "too_short"}:
        message = f"{field} must not be empty"
    elif kind == "string_too_long":
        message = f"{field} must be at most {ctx.get('max_length')} characters long"
    elif kind in {"tuple_type", "list_type"}:
        message = f"{field} must be a list (got {kind_of(got)})"
    elif kind in {"model_type", "model_attributes_type", "dict_type"}:
        message = f"{field} must be a mapping of settings (got {kind_of(got)})"
    elif kind == "missing":
        message = f"{field} is required"
    elif kind == "value_error":
        reason = str(ctx.get("error", error["msg"]))
        message = reason if reason.startswith("`") else f"{field} {reason}"
    else:
        message = f"{field}: {error['msg'][:1].lower()}{error['msg'][1:]}"
    return SettingsProblem(path=path, message=message, line=line)


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"


def kind_of(value: object) -> str:
    """A plain-words name for a YAML value's type: "a list", "text", "nothing"."""
    names = {
        list: "a list",
        dict: "a mapping",
        str: "text",
        bool: "true/false",
        int: "a number",
        type(None): "nothing",
    }
    return names.get(type(value), f"a {type(value).__name__}")


def _known_fields(root: type[BaseModel], loc: tuple[str, ...]) -> list[str]:
    """The setting names allowed at ``loc``, for "did you mean" hints."""
    model = root
    for part in loc:
        annotation = model.model_fields[part].annotation if part in model.model_fields else None
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return []
        model = annotation
    return list(model.model_fields)


def key_lines(text: str) -> dict[tuple[str, ...], int]:
    """1-based line of each mapping key and sequence item, by path, for error messages."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return {}
    lines: dict[tuple[str, ...], int] = {}

    def walk(node: yaml.Node, path: tuple[str, ...]) -> None:
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    lines[(*path, str(key.value))] = key.start_mark.line + 1
                    walk(value, (*path, str(key.value)))
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                lines[(*path, str(index))] = item.start_mark.line + 1
                walk(item, (*path, str(index)))

    if root is not None:
        walk(root, ())
    return lines


# --- telling the maintainer -------------------------------------------------------------------

_MAX_LISTED = 20


def render_settings_problem(error: SettingsError, *, in_force: str | None = None) -> str:
    """Markdown for a check run summary or an issue comment about an unusable settings file.

    ``in_force`` names the settings still used (say "the settings from commit abc1234"); by
    default the text says the last good settings, or the defaults if there never were any.
    """
    count = len(error.problems)
    kept = (
        in_force
        or "the last settings questbot read successfully (or the defaults, if it never read any)"
    )
    listed = [str(problem) for problem in error.problems[:_MAX_LISTED]]
    if count > _MAX_LISTED:
        listed.append(f"… and {count - _MAX_LISTED} more")
    body = "\n".join(listed)
    # A fenced block shows the problems verbatim: no Markdown, and no @mentions from values.
    fence = "`" * max(3, 1 + max((len(r) for r in re.findall(r"`+", body)), default=0))
    noun = "problem" if count == 1 else f"{count} problems"
    return (
        f"### questbot cannot use `{SETTINGS_PATH}`\n\n"
        f"The file on the default branch has {'a ' if count == 1 else ''}{noun}, so questbot "
        f"ignores all of it and keeps using {kept}.\n\n"
        f"{fence}text\n{body}\n{fence}\n\n"
        f"**To fix it**, correct `{SETTINGS_PATH}` on the default branch and push. questbot "
        "reads the file again on every push that changes it; when the file is good, this "
        "message is resolved and the new settings apply to the next step of every quest.\n"
    )
