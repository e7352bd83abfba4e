"""The image's processes without an engine: questbot installed the way the Dockerfile installs
it, run the way the image runs it, as the image's user, and the demo's quest told to it.

What is taken from the deployment files, not restated here: the files the Dockerfile copies
(copied from this checkout into a fresh directory, then ``pip install`` of that copy into a
new virtual environment made by Debian's ``python3`` — the interpreter the image has), the
uid of its ``USER``, its ``PATH``, and each process's command line (the Dockerfile's
``ENTRYPOINT`` after tini, then compose.yaml's ``command``). The processes get a clean
environment holding only what the image and the env file would give them, the App's key as a
file of their own user's, mode 0400, as the docs tell a self-hoster to make it, and nothing of
this checkout (no ``PYTHONPATH``, another working directory).

What this cannot show, and ``test_image.py`` does where an engine runs: the image's own
filesystem, tini, Docker's seccomp filter and masked ``/proc`` paths — here bubblewrap runs
with this machine's permissions, not a container's.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from questbot_testing.redis_server import RedisServer
from tests.deploy import files, story

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

DEBIAN_PYTHON = "/usr/bin/python3"
"""The interpreter the image runs questbot on (Debian's python3)."""
BASE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
"""``PATH`` of Debian's images, which the Dockerfile's ``ENV PATH`` extends."""


@dataclass
class Install:
    root: Path
    """Stands for the image's ``/``: ``opt/questbot`` (the venv) and the healthcheck in it."""
    uid: int
    env: dict[str, str]

    @property
    def prefix(self) -> Path:
        return self.root / "opt" / "questbot"


def image_user() -> int:
    user = files.only([i for i in files.dockerfile() if i.keyword == "USER"][-1:], "USER")
    return int(user.args.partition(":")[0])


def image_path(prefix: Path) -> str:
    """The Dockerfile's ``ENV PATH=/opt/questbot/bin:$PATH``, with the venv where it is here."""
    env = [i.args for i in files.dockerfile() if i.keyword == "ENV"]
    assert len(env) == 1 and env[0].startswith("PATH=/opt/questbot/bin:$PATH ")
    return f"{prefix}/bin:{BASE_PATH}"


@pytest.fixture(scope="module")
def install() -> Iterator[Install]:
    """A fresh ``pip install`` of what the Dockerfile copies, in a directory the image's user
    can read and not write (root installs, as in the image)."""
    if not Path(DEBIAN_PYTHON).exists():
        pytest.skip(f"{DEBIAN_PYTHON} (Debian's python3, the image's interpreter) is missing")
    root = Path(tempfile.mkdtemp(prefix="questbot-deploy-"))
    root.chmod(0o755)
    try:
        src = root / "src"
        src.mkdir()
        for ins in files.dockerfile():
            parts = ins.args.split()
            if ins.keyword == "COPY" and parts[-1].startswith("/src"):
                for source in parts[:-1]:
                    origin = files.ROOT / source
                    target = src / Path(parts[-1]).relative_to("/src") / (
                        origin.name if parts[-1].endswith("/") else "")
                    if origin.is_dir():
                        shutil.copytree(origin, target,
                                        ignore=shutil.ignore_patterns("__pycache__"))
                    else:
                        target.parent.mkdir(parents=True, exist_ok=True)
                        shutil.copy2(origin, target)
        prefix = root / "opt" / "questbot"
        subprocess.run([DEBIAN_PYTHON, "-m", "venv", str(prefix)], check=True)
        done = subprocess.run([str(prefix / "bin" / "pip"), "install", "--quiet",
                               "--disable-pip-version-check", str(src)],
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        check = prefix / "bin" / "questbot-healthcheck"  # the image's /usr/local/bin
        shutil.copy2(files.ROOT / "deploy" / "healthcheck.py", check)
        check.chmod(0o755)
        env = {"PATH": image_path(prefix), "PYTHONUNBUFFERED": "1",
               "PYTHONDONTWRITEBYTECODE": "1", "LANG": "C.UTF-8"}
        yield Install(root, image_user() if os.geteuid() == 0 else os.geteuid(), env)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def as_user(install: Install, argv: list[str]) -> list[str]:
    """``argv`` as the image's user: setpriv drops root's uid, groups and capabilities, as the
    engine does for ``USER 10001:10001`` (when the tests do not run as root, they already
    are another user, and ``argv`` runs as it is)."""
    if os.geteuid() != 0:
        return argv
    uid = str(install.uid)
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
            "--inh-caps=-all", "--bounding-set=-all", *argv]


def owned_dir(parent: Path, name: str, uid: int) -> Path:
    path = parent / name
    path.mkdir(mode=0o700)
    os.chown(path, uid, uid)
    return path


async def test_the_images_commands_run_the_demo_as_the_images_user(
        install: Install, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Both processes start from their entrypoint commands as uid 10001 with nothing but the
    image's environment and the settings; each ``/healthz`` is green by the image's own
    health check; the worker says bubblewrap confines commands and bounds their processes;
    the demo's webhook becomes a quest that goes through A, B and C (its reproduction and
    proof run in the sandbox); and SIGTERM — what ``docker stop`` sends — ends both cleanly."""
    uid = install.uid
    home = owned_dir(install.root, "home", uid)
    work = owned_dir(install.root, "tmp", uid)
    logs = tmp_path_factory.mktemp("logs")
    redis = RedisServer(appendonly=True)
    redis.start()
    scene = await story.scene(redis.url, os.path.realpath(DEBIAN_PYTHON))
    key = install.root / "github_app_key"
    key.write_text(scene.fake.keys.private_pem)
    os.chown(key, uid, uid)
    key.chmod(0o400)
    env = {**install.env, "HOME": str(home), "TMPDIR": str(work),
           **scene.settings(str(key))}
    entrypoint = files.only(files.dockerfile(), "ENTRYPOINT").exec_form()[2:]  # after tini
    compose = files.compose()["services"]
    procs: dict[str, subprocess.Popen[bytes]] = {}
    try:
        for name in ("web", "worker"):
            argv = entrypoint + compose[name]["command"]
            argv[0] = shutil.which(argv[0], path=env["PATH"]) or argv[0]
            assert argv[0] == str(install.prefix / "bin" / "python")
            with (logs / f"{name}.log").open("wb") as out:
                procs[name] = subprocess.Popen(as_user(install, argv), env=env, cwd=home,
                                               stdout=out, stderr=subprocess.STDOUT)

        def alive() -> str | None:
            for name, proc in procs.items():
                if proc.poll() is not None:
                    return f"{name} exited {proc.returncode}:\n" + (
                        logs / f"{name}.log").read_text()[-4000:]
            return None

        async def healthy() -> bool:
            for role in ("serve", "worker"):  # the fake GitHub answers meanwhile: no blocking
                check = await asyncio.create_subprocess_exec(
                    *as_user(install, ["questbot-healthcheck", role]), env=env,
                    stdout=asyncio.subprocess.DEVNULL)
                if await asyncio.wait_for(check.wait(), 10) != 0:
                    return False
            return True

        try:
            await story.until("both /healthz answered 200 to the image's health check",
                              healthy, alive, seconds=120)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{story.tails(logs)}") from None
        assert story.healthz(scene.web_port) == (200, {"status": "ok", "redis": "ok"})
        assert story.healthz(scene.metrics_port) == (200, {"status": "ok", "redis": "ok"})
        sandbox = story.said(logs / "worker.log", "sandbox:")
        assert len(sandbox) == 1 and "confines commands" in sandbox[0], sandbox
        assert "at most 1024 processes each" in sandbox[0], sandbox

        await story.tell(scene, alive)

        for proc in procs.values():
            proc.send_signal(signal.SIGTERM)
        for name, proc in procs.items():  # waited in a thread: the fake GitHub answers on
            code = await asyncio.to_thread(proc.wait, 30)
            assert code == 0, (logs / f"{name}.log").read_text()[-3000:]
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        await scene.close()
        redis.cleanup()
