"""GitHub's published descriptions of itself, fetched from npm and pinned like a lock file.

The fake GitHub checks every request against GitHub's REST description, every GraphQL query
against GitHub's schema, starts every webhook from GitHub's example payloads and replays
exchanges recorded against the real api.github.com. None of that is ours to write or to copy
into the repository: GitHub (through Octokit) publishes it as npm packages. ``published.lock.json``
names each package, its version and the integrity npm publishes for its tarball; ``fetch``
takes each with ``npm pack`` (so a user's registry mirror, proxy and credentials apply),
checks the tarball against that integrity before reading a byte of it, and keeps only the
files the lock lists, in a cache that every later run reads without the network.

The cache is ``.cache/published`` in the checkout (``QUESTBOT_CACHE`` moves it): it goes with
the clone, and deleting the clone leaves nothing behind.

``python -m questbot_testing.published fetch`` is what ``scripts/setup`` runs; ``check``
exits 1 when something is missing.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import fnmatch
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
LOCK = HERE / "published.lock.json"
NAMES = HERE / "webhook_example_names.json"
PROJECT = HERE.parent.parent  # the checkout: testing/questbot_testing → ../..
"""The checkout this package lives in (``testing/questbot_testing`` → the checkout)."""

_STAMP = ".integrity"


class PublishedDataError(RuntimeError):
    """A published package could not be fetched, or did not match its lock."""


@dataclass(frozen=True)
class Package:
    """One pinned npm package and the files of it the tests read."""

    name: str
    version: str
    integrity: str
    files: tuple[str, ...]

    @property
    def spec(self) -> str:
        return f"{self.name}@{self.version}"

    @property
    def folder(self) -> str:
        """Its folder in the cache: ``@octokit/openapi`` → ``octokit-openapi``."""
        return self.name.lstrip("@").replace("/", "-")

    def wanted(self, member: str) -> str | None:
        """The path inside the package a tarball member has, when the lock keeps it."""
        inside = member.removeprefix("package/")
        return inside if any(fnmatch.fnmatchcase(inside, p) for p in self.files) else None


def packages() -> dict[str, Package]:
    data: dict[str, Any] = json.loads(LOCK.read_text())
    return {name: Package(name, p["version"], p["integrity"], tuple(p["files"]))
            for name, p in data["packages"].items()}


def cache_dir() -> Path:
    return Path(os.environ.get("QUESTBOT_CACHE") or PROJECT / ".cache").resolve() / "published"


def _home(package: Package) -> Path:
    return cache_dir() / package.folder


def _present(package: Package) -> bool:
    stamp = _home(package) / _STAMP
    return stamp.is_file() and stamp.read_text().strip() == package.integrity


def _check_integrity(tarball: Path, integrity: str) -> None:
    """npm's Subresource-Integrity string (``sha512-<base64>``) against the file's digest."""
    algorithm, _, expected = integrity.partition("-")
    if algorithm not in ("sha512", "sha384", "sha256"):
        raise PublishedDataError(f"unsupported integrity {integrity!r} in {LOCK.name}")
    digest = hashlib.new(algorithm, tarball.read_bytes()).digest()
    actual = base64.b64encode(digest).decode()
    if actual != expected:
        raise PublishedDataError(
            f"{tarball.name} does not match {LOCK.name}: {algorithm}-{actual} was fetched, "
            f"{integrity} is pinned; the registry served another file than the one pinned")


def _npm() -> str:
    npm = shutil.which("npm")
    if npm is None:
        raise PublishedDataError(
            "npm is not installed: scripts/setup installs Debian's npm, or install Node.js "
            "and run `python -m questbot_testing.published fetch` again")
    return npm


def _pack(package: Package, into: Path) -> Path:
    """``npm pack`` the package into ``into``; its tarball's path."""
    done = subprocess.run(
        [_npm(), "pack", package.spec, "--pack-destination", str(into), "--json", "--silent"],
        capture_output=True, text=True, check=False, cwd=into)
    if done.returncode != 0:
        raise PublishedDataError(
            f"npm pack {package.spec} failed (exit {done.returncode}): "
            f"{(done.stderr or done.stdout).strip()[-800:]}")
    tarballs = sorted(into.glob("*.tgz"))
    if len(tarballs) != 1:
        raise PublishedDataError(f"npm pack {package.spec} left {len(tarballs)} tarballs")
    return tarballs[0]


def _unpack(package: Package, tarball: Path, into: Path) -> int:
    """The lock's files of the tarball, written under ``into``; how many."""
    kept = 0
    with tarfile.open(tarball, "r:gz") as archive:
        for member in archive:
            inside = package.wanted(member.name)
            if inside is None or not member.isfile():
                continue
            target = (into / inside).resolve()
            if into.resolve() not in target.parents:
                raise PublishedDataError(f"{package.spec}: {member.name} leaves the package")
            source = archive.extractfile(member)
            assert source is not None
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read())
            kept += 1
    if kept == 0:
        raise PublishedDataError(f"{package.spec} holds none of {list(package.files)}")
    return kept


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    """One fetch at a time per cache: parallel test processes wait for the first."""
    cache_dir().mkdir(parents=True, exist_ok=True)
    with (cache_dir() / ".lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def fetch(*, say: bool = False) -> list[str]:
    """Every package of the lock in the cache; the specs that had to be fetched."""
    fetched: list[str] = []
    with _locked():
        for package in packages().values():
            if _present(package):
                continue
            with tempfile.TemporaryDirectory(dir=cache_dir()) as scratch:
                work = Path(scratch)
                tarball = _pack(package, work)
                _check_integrity(tarball, package.integrity)
                staged = work / "staged"
                kept = _unpack(package, tarball, staged)
                (staged / _STAMP).write_text(package.integrity + "\n")
                shutil.rmtree(_home(package), ignore_errors=True)
                staged.rename(_home(package))
            fetched.append(package.spec)
            if say:
                print(f"published: {package.spec} ({kept} files) into {_home(package)}",
                      file=sys.stderr)
    return fetched


def missing() -> list[str]:
    return [p.spec for p in packages().values() if not _present(p)]


def ensure() -> Path:
    """The cache, fetched first when something is missing (a first run without setup)."""
    if missing():
        fetch(say=True)
    return cache_dir()


def path(package: str, inside: str) -> Path:
    """A file of a pinned package, from the cache."""
    ensure()
    found = _home(packages()[package]) / inside
    if not found.is_file():
        raise PublishedDataError(f"{package} has no {inside} in {LOCK.name}'s files")
    return found


def rest_description_path() -> Path:
    """GitHub's whole REST description of api.github.com (OpenAPI 3.0, 13 MB)."""
    return path("@octokit/openapi", "generated/api.github.com.json")


def graphql_schema_path() -> Path:
    return path("@octokit/graphql-schema", "schema.graphql")


@cache
def webhook_schema() -> dict[str, Any]:
    """Every webhook payload's JSON Schema in one document; ``definitions`` holds
    ``<event>$<action>`` for each."""
    data: dict[str, Any] = json.loads(path("@octokit/webhooks-schemas", "schema.json").read_text())
    return data


_SCHEMA_BASE = "urn:octokit-webhooks"


@cache
def _schema_registry() -> Any:
    from referencing import Registry
    from referencing.jsonschema import DRAFT7

    return Registry().with_resource(_SCHEMA_BASE, DRAFT7.create_resource(webhook_schema()))


def webhook_problems(event: str, action: str, value: Any, *, part: str | None = None) -> list[str]:
    """What of a payload breaks GitHub's schema of ``<event>.<action>``, one line a problem;
    with ``part``, what of that one object of the payload (``value`` is then the object)."""
    from jsonschema import Draft7Validator  # type: ignore[import-untyped]

    pointer = f"{_SCHEMA_BASE}#/definitions/{event}${action}"
    if part is not None:
        pointer += f"/properties/{part}"
    validator = Draft7Validator({"$ref": pointer}, registry=_schema_registry())
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}"
            for e in validator.iter_errors(value)]


@dataclass(frozen=True)
class Example:
    """One example payload: ``event`` is its event, ``name`` its upstream file name."""

    event: str
    name: str
    payload: str
    """The JSON text, so every ``load`` is a fresh copy."""

    def load(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.payload)
        return data


@cache
def webhook_examples() -> tuple[Example, ...]:
    """Every named example payload, by event and name."""
    index: list[dict[str, Any]] = json.loads(
        path("@octokit/webhooks-examples", "api.github.com/index.json").read_text())
    names: dict[str, list[str]] = json.loads(NAMES.read_text())["events"]
    by_event = {entry["name"]: entry["examples"] for entry in index}
    found: list[Example] = []
    for event, row in sorted(names.items()):
        examples = by_event.get(event, [])
        if len(examples) != len(row):
            raise PublishedDataError(
                f"{event}: {NAMES.name} names {len(row)} examples, the package has "
                f"{len(examples)}; name them again for the pinned version")
        found += [Example(event, name, json.dumps(payload))
                  for name, payload in zip(row, examples, strict=True)]
    return tuple(sorted(found, key=lambda e: (e.event, e.name)))


@cache
def recorded(scenario: str) -> tuple[dict[str, Any], ...]:
    """The exchanges of one recorded scenario (``paginate-issues``, ``errors``, …)."""
    inside = f"scenarios/api.github.com/{scenario}/normalized-fixture.json"
    data: list[dict[str, Any]] = json.loads(path("@octokit/fixtures", inside).read_text())
    return tuple(data)


def recorded_scenarios() -> list[str]:
    home = _home(packages()["@octokit/fixtures"]) / "scenarios" / "api.github.com"
    ensure()
    return sorted(p.parent.name for p in home.glob("*/normalized-fixture.json"))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    command = args[0] if args else "fetch"
    try:
        if command == "fetch":
            fetched = fetch(say=True)
            if not fetched:
                print(f"published: all {len(packages())} packages in {cache_dir()}",
                      file=sys.stderr)
            return 0
        if command == "check":
            absent = missing()
            for spec in absent:
                print(f"published: {spec} is not in {cache_dir()}", file=sys.stderr)
            return 1 if absent else 0
    except PublishedDataError as error:
        print(f"published: {error}", file=sys.stderr)
        return 1
    print("usage: python -m questbot_testing.published [fetch|check]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
