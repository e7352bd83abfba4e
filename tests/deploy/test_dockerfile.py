"""The Dockerfile held to questbot's needs without building it: what it installs against
scripts/setup, the pinned base, the non-root user, questbot from this repository.

``test_image.py`` builds and runs it where an engine can run; these hold the file itself.
"""

from __future__ import annotations

import re

from tests.deploy import files

RUNTIME = {"git": "checkouts and pushes (git 2.31+)",
           "bubblewrap": "the sandbox of every proof, check and agent",
           "util-linux": "prlimit, the sandbox's limits",
           "python-is-python3": "`python` for repositories' checks in the sandbox"}
"""What scripts/setup installs that the worker itself runs: the image must have each."""
TEST_ONLY = {"redis-server": "the tests' Redis (compose.yaml runs Redis's own image)",
             "redis-tools": "redis-cli, for the tests' local cluster",
             "chromium": "the register page's browser test",
             "chromium-driver": "the same test's driver",
             "npm": "fetches GitHub's published descriptions for the fake GitHub",
             "docker.io": "test_image.py's container engine",
             "mmdebstrap": "test_image.py's base image, from Debian's packages"}
"""What scripts/setup (and scripts/setup-engine) install for the tests only: none of it
belongs in the image."""
IMAGE_OWN = {"python3": "the interpreter (Debian's, not a /usr/local build)",
             "python3-venv": "the virtual environment questbot is installed into",
             "ca-certificates": "HTTPS to GitHub and the model endpoint",
             "tini": "PID 1: signals forwarded, orphans reaped"}
"""What the image installs that a developer's machine has already."""


def test_the_image_installs_what_scripts_setup_installs_for_questbot_and_no_test_tool() -> None:
    """Every Debian package scripts/setup installs is classified here as the worker's own
    (the image must install it) or the tests' (the image must not); a package added to
    scripts/setup fails this test until it is one or the other."""
    setup = set(files.setup_packages())
    assert setup == set(RUNTIME) | set(TEST_ONLY), (
        f"scripts/setup installs {sorted(setup - set(RUNTIME) - set(TEST_ONLY))}, which this "
        "test does not know: add it to RUNTIME (the image needs it) or TEST_ONLY")
    installed = files.apt_packages(files.dockerfile())
    assert set(RUNTIME) <= installed, f"the image lacks {sorted(set(RUNTIME) - installed)}"
    assert not installed & set(TEST_ONLY), sorted(installed & set(TEST_ONLY))
    assert installed == set(RUNTIME) | set(IMAGE_OWN), sorted(installed ^ (set(RUNTIME)
                                                                          | set(IMAGE_OWN)))


def test_the_base_is_pinned_by_a_dated_tag_and_its_digest() -> None:
    """A floating tag (``bookworm-slim``, ``latest``) would build a different image every
    week; the date tag says which, the digest makes it exact."""
    image = files.base_image(files.dockerfile())
    match = re.fullmatch(r"debian:(bookworm-\d{8}-slim)@sha256:([0-9a-f]{64})", image)
    assert match, image


def test_questbot_runs_as_a_user_of_its_own_after_everything_is_installed() -> None:
    """The last ``USER`` is the uid ``useradd`` made, not 0, and nothing runs after it: the
    installs are root's, the processes are not (and RLIMIT_NPROC bounds the sandbox's
    processes only for a user that is not root)."""
    instructions = files.dockerfile()
    users = [i for i, ins in enumerate(instructions) if ins.keyword == "USER"]
    assert users, "no USER: the image would run as root"
    last = instructions[users[-1]]
    uid, _, gid = last.args.partition(":")
    assert uid.isdigit() and int(uid) != 0 and gid == uid
    made = [ins for ins in instructions if ins.keyword == "RUN" and "useradd" in ins.args]
    assert len(made) == 1 and f"--uid {uid}" in made[0].args
    assert not [ins for ins in instructions[users[-1]:] if ins.keyword in ("RUN", "COPY")]


def test_questbot_is_installed_from_this_repository_without_its_test_stack() -> None:
    """``pip install`` of the copied source (not editable, no ``[test]`` extra, no
    ``testing/``), and .dockerignore lets in exactly what the COPY lines take."""
    instructions = files.dockerfile()
    copies = [ins.args.split() for ins in instructions if ins.keyword == "COPY"]
    sources = [src for args in copies for src in args[:-1] if not src.startswith("--")]
    assert "bot" in sources and "pyproject.toml" in sources
    assert not [s for s in sources if s.startswith("testing")]
    for source in sources:
        assert files.dockerignore_allows(source), f".dockerignore drops {source}"
    for excluded in (".venv/bin/python", ".env", ".cache/published", "testing/pyproject.toml",
                     "tests/conftest.py", "bot/__pycache__/x.pyc"):
        assert not files.dockerignore_allows(excluded), excluded
    pip = [ins.args for ins in instructions if ins.keyword == "RUN" and "pip install" in ins.args]
    assert len(pip) == 1
    assert re.search(r"pip install [^&]*/src(\s|$)", pip[0])
    assert " -e " not in pip[0] and "[test]" not in pip[0]


def test_the_health_check_is_the_script_the_image_copies_in() -> None:
    instructions = files.dockerfile()
    copied = {ins.args.split()[-1]: ins.args.split()[0] for ins in instructions
              if ins.keyword == "COPY"}
    (command,) = files.only(instructions, "HEALTHCHECK").exec_form()
    assert copied[f"/usr/local/bin/{command}"] == "deploy/healthcheck.py"
