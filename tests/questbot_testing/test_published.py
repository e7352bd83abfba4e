"""GitHub's published descriptions come from the pinned npm packages and nowhere else: a
tarball that is not the pinned one is refused before a byte of it is used, only the lock's
files are kept, a cache that holds everything is read without npm or the network, and the
examples' names line up with the package's order."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import shutil
import tarfile
from pathlib import Path

import pytest

from questbot_testing import published
from questbot_testing.published import Package, PublishedDataError


def tarball(path: Path, members: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def integrity_of(path: Path) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode()


def test_the_lock_pins_every_package_by_version_and_sha512() -> None:
    packages = published.packages()
    assert set(packages) == {"@octokit/openapi", "@octokit/graphql-schema",
                             "@octokit/webhooks-examples", "@octokit/webhooks-schemas",
                             "@octokit/fixtures"}
    for package in packages.values():
        assert package.version.count(".") == 2 and "^" not in package.version
        assert package.integrity.startswith("sha512-") and package.files


def test_a_tarball_that_is_not_the_pinned_one_is_refused(tmp_path: Path) -> None:
    good = tarball(tmp_path / "good.tgz", {"package/schema.json": b"{}"})
    published._check_integrity(good, integrity_of(good))
    other = tarball(tmp_path / "other.tgz", {"package/schema.json": b'{"x": 1}'})
    with pytest.raises(PublishedDataError, match="another file than the one pinned"):
        published._check_integrity(other, integrity_of(good))


def test_only_the_locks_files_are_kept_and_none_may_leave_the_package(tmp_path: Path) -> None:
    package = Package("@octokit/fixtures", "1.0.0", "sha512-x",
                      ("scenarios/api.github.com/*/normalized-fixture.json",))
    source = tarball(tmp_path / "f.tgz", {
        "package/scenarios/api.github.com/errors/normalized-fixture.json": b"[]",
        "package/scenarios/api.github.com/errors/raw-fixture.json": b"[]",
        "package/lib/index.js": b"module.exports = 1",
    })
    into = tmp_path / "out"
    assert published._unpack(package, source, into) == 1
    assert [p.relative_to(into).as_posix() for p in into.rglob("*") if p.is_file()] == [
        "scenarios/api.github.com/errors/normalized-fixture.json"]
    escaping = Package("x", "1.0.0", "sha512-x", ("*",))
    bad = tarball(tmp_path / "bad.tgz", {"package/../../outside.json": b"{}"})
    with pytest.raises(PublishedDataError, match="leaves the package"):
        published._unpack(escaping, bad, tmp_path / "out2")
    assert not (tmp_path / "outside.json").exists()


def test_a_full_cache_is_read_without_npm_or_the_network(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a second run of scripts/test does: nothing is fetched, so nothing needs npm."""
    published.ensure()
    copy = tmp_path / "cache"
    shutil.copytree(published.cache_dir(), copy / "published")
    monkeypatch.setenv("QUESTBOT_CACHE", str(copy))
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    assert published.missing() == []
    assert published.fetch() == []
    assert published.main(["check"]) == 0
    assert published.rest_description_path().is_relative_to(copy)


def test_a_missing_package_without_npm_says_how_to_get_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("QUESTBOT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    assert published.main(["check"]) == 1
    assert published.main(["fetch"]) == 1
    said = capsys.readouterr().err
    assert "@octokit/openapi@23.0.2 is not in" in said
    assert "npm is not installed: scripts/setup installs Debian's npm" in said


def test_a_package_whose_files_changed_under_the_cache_is_fetched_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache is keyed by the pinned integrity: a lock moved to another version finds its
    old files stale rather than reading them."""
    published.ensure()
    copy = tmp_path / "cache"
    shutil.copytree(published.cache_dir(), copy / "published")
    monkeypatch.setenv("QUESTBOT_CACHE", str(copy))
    stamp = copy / "published" / "octokit-fixtures" / ".integrity"
    stamp.write_text("sha512-an-older-pin\n")
    assert published.missing() == ["@octokit/fixtures@23.1.2"]


def test_every_named_example_is_the_event_and_action_its_name_says() -> None:
    """The package ships examples without names; ours follow upstream's sorted file names
    after the docs' example. A name that slipped by one would name another action."""
    examples = published.webhook_examples()
    names = json.loads(published.NAMES.read_text())["events"]
    assert {e.event for e in examples} == set(names)
    checked = 0
    for example in examples:
        action = example.load().get("action")
        if action is None or example.name == "docs.payload.json":
            continue
        if example.event == "deployment_status":  # upstream names these without the action
            assert action == "created"
            continue
        assert example.name.startswith(f"{action}."), (example.event, example.name, action)
        checked += 1
    assert checked > 100


def test_the_published_data_is_under_the_checkout_not_beside_it() -> None:
    cache = published.cache_dir()
    if "QUESTBOT_CACHE" not in os.environ:
        assert cache.is_relative_to(published.PROJECT)
    assert published.PROJECT.joinpath("testing", "questbot_testing").is_dir()
