"""The deployment files as the tests read them: the Dockerfile's instructions, compose.yaml, the
env file's example, scripts/setup's package list and the Procfile.

Each reader is small and strict on purpose: it understands what these files use (line
continuations, comments, exec-form JSON arrays, ``ARG`` defaults in ``FROM``) and fails loudly
on anything else, so a test never passes because a reader skipped a line it did not follow.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"
COMPOSE = ROOT / "compose.yaml"
ENV_EXAMPLE = ROOT / "deploy" / "questbot.env.example"
SETUP = ROOT / "scripts" / "setup"
PROCFILE = ROOT / "Procfile"
DOCKERIGNORE = ROOT / ".dockerignore"


@dataclass(frozen=True)
class Instruction:
    keyword: str
    args: str

    def exec_form(self) -> list[str]:
        """The JSON array of an exec-form ``CMD``/``ENTRYPOINT``/``HEALTHCHECK CMD``."""
        text = self.args
        if self.keyword == "HEALTHCHECK":  # options, then CMD and the command
            text = text[text.index("CMD [") + 4:]
        value = json.loads(text)
        assert isinstance(value, list) and all(isinstance(v, str) for v in value), text
        return value


def dockerfile(path: Path = DOCKERFILE) -> list[Instruction]:
    """The instructions, continuation lines joined and comment lines dropped (Docker drops a
    comment line inside a continued instruction too)."""
    out: list[Instruction] = []
    pending = ""
    for line in path.read_text().splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        whole = pending + stripped
        pending = ""
        keyword, _, args = whole.partition(" ")
        out.append(Instruction(keyword.upper(), " ".join(args.split())))
    assert not pending, "the Dockerfile ends inside a continued instruction"
    return out


def args_of(instructions: list[Instruction]) -> dict[str, str]:
    """``ARG NAME=default`` → its default."""
    found = {}
    for ins in instructions:
        if ins.keyword == "ARG" and "=" in ins.args:
            name, _, value = ins.args.partition("=")
            found[name] = value
    return found


def base_image(instructions: list[Instruction]) -> str:
    """The image the (single) ``FROM`` names, with its ``ARG`` default put in."""
    froms = [i for i in instructions if i.keyword == "FROM"]
    assert len(froms) == 1, "one stage expected"
    image = froms[0].args.split()[0]
    match = re.fullmatch(r"\$\{(\w+)\}", image)
    return args_of(instructions)[match.group(1)] if match else image


def apt_packages(instructions: list[Instruction]) -> set[str]:
    """Every package an ``apt-get install`` of a ``RUN`` names."""
    packages: set[str] = set()
    for ins in instructions:
        if ins.keyword != "RUN":
            continue
        for command in re.split(r"&&|;", ins.args):
            words = shlex.split(command)
            while words and "=" in words[0]:  # VAR=value before the command
                words.pop(0)
            if words[:2] == ["apt-get", "install"]:
                packages |= {w for w in words[2:] if not w.startswith("-")}
    return packages


def only(instructions: list[Instruction], keyword: str) -> Instruction:
    found = [i for i in instructions if i.keyword == keyword]
    assert len(found) == 1, f"{len(found)} {keyword} instructions"
    return found[0]


def compose() -> dict[str, Any]:
    """compose.yaml as Compose reads it: YAML anchors and ``<<`` merges resolved (PyYAML does
    both), ``x-`` extension keys left in."""
    data = yaml.safe_load(COMPOSE.read_text())
    assert isinstance(data, dict)
    return data


def env_file(path: Path) -> tuple[dict[str, str], set[str]]:
    """``VARIABLE=value`` lines, and the names of the ``# VARIABLE=…`` lines (settings the
    example offers, commented out)."""
    values: dict[str, str] = {}
    offered: set[str] = set()
    for line in path.read_text().splitlines():
        stripped = line.strip()
        commented = re.fullmatch(r"#\s*([A-Z][A-Z0-9_]*)=.*", stripped)
        if commented:
            offered.add(commented.group(1))
        elif stripped and not stripped.startswith("#"):
            name, sep, value = stripped.partition("=")
            assert sep and re.fullmatch(r"[A-Z][A-Z0-9_]*", name), f"not VARIABLE=value: {line}"
            values[name] = value
    return values, offered


def setup_packages() -> dict[str, str]:
    """The Debian packages scripts/setup and scripts/setup-engine install, each with the
    command whose absence installs it (``command -v git … || missing+=(git)``)."""
    text = SETUP.read_text() + (SETUP.parent / "setup-engine").read_text()
    found = dict(re.findall(r"command -v (\S+) .*\|\| missing\+=\(([\w.+-]+)\)", text))
    assert found, "scripts/setup names no package in the form this reader knows"
    return {package: command for command, package in found.items()}


def procfile() -> dict[str, list[str]]:
    """Each process type → its command line, split as a shell would."""
    out = {}
    for line in PROCFILE.read_text().splitlines():
        if line.strip():
            name, _, command = line.partition(":")
            out[name.strip()] = shlex.split(command)
    return out


def dockerignore_allows(path: str) -> bool:
    """Whether the build context keeps ``path`` under .dockerignore's rules (the last
    matching rule wins; ``!`` keeps). Only the forms the file uses: ``*``, a name, ``dir/``,
    ``**/name``."""
    kept = True
    for raw in DOCKERIGNORE.read_text().splitlines():
        rule = raw.strip()
        if not rule or rule.startswith("#"):
            continue
        keep = rule.startswith("!")
        pattern = rule.lstrip("!").rstrip("/")
        parts = path.split("/")
        if pattern == "*":
            matched = True
        elif pattern.startswith("**/"):
            matched = pattern[3:] in parts
        else:
            matched = path == pattern or path.startswith(pattern + "/")
        if matched:
            kept = keep
    return kept
