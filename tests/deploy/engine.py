"""A Docker engine of the tests' own, and the images they build on it from Debian's packages.

Like the tests' Redis, the engine is started by the tests, not found: ``dockerd`` from Debian's
``docker.io`` (scripts/setup-engine installs it), as root, with its state in ``.cache/container``
(kept between runs, so the base image and the layers of unchanged steps are built once) and a
socket of its own, so it neither needs nor touches a Docker a developer may run. It makes no
bridge and no NAT rules: every container the tests run uses the host's network and talks to
the fake GitHub, the model server and Redis on loopback.

No image registry is reachable here, so the base is made from Debian's packages: ``mmdebstrap``
builds bookworm's minimal system (what Debian's ``bookworm-slim`` images are built from) and
the engine imports it; the Dockerfile is built ``FROM`` it through its ``BASE_IMAGE`` argument,
every other line as shipped. One addition is the tests' and not the image's: this machine's CA
bundle and ``PIP_CERT`` naming it, because the package mirrors here are reached through a proxy
whose certificate only the machine's bundle holds; on any other machine the bundle is the same
Mozilla set the image's own ``ca-certificates`` installs.

Redis's image (``redis:7.2.8-bookworm`` in compose.yaml) is replaced the same way, by Debian's
``redis-server`` on that base, run with compose.yaml's command line.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from questbot_testing import PROJECT
from tests.deploy import files

CACHE = Path(os.environ.get("QUESTBOT_CACHE") or files.ROOT / ".cache") / "container"
BASE = "questbot-test-base:bookworm"
REDIS = "questbot-test-redis:bookworm"
IMAGE = "questbot:test"
HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")
START_SECONDS = 60.0


def missing() -> str | None:
    """Why no engine can be started here, or ``None`` — once ``scripts/setup-engine`` has
    installed what it can (it is not part of ``scripts/setup``: trying questbot should not
    install a container engine)."""
    if os.geteuid() != 0:
        return "starting dockerd needs root, and these tests are not run as root"
    done = subprocess.run([str(PROJECT / "scripts" / "setup-engine")], capture_output=True,
                          text=True, check=False, timeout=1800)
    if done.returncode != 0:
        return f"scripts/setup-engine failed: {done.stderr[-2000:]}"
    for program, package in (("dockerd", "docker.io"), ("docker", "docker.io"),
                             ("mmdebstrap", "mmdebstrap")):
        if shutil.which(program) is None:
            return f"{program} is not installed (Debian's {package}; scripts/setup-engine)"
    return None


@dataclass
class Engine:
    socket: Path
    log: Path

    def docker(self, *args: str, check: bool = True, timeout: float = 900,
               input_text: str | None = None) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(["docker", "-H", f"unix://{self.socket}", *args],
                              capture_output=True, text=True, timeout=timeout, input=input_text)
        if check and done.returncode != 0:
            raise AssertionError(f"docker {' '.join(args[:3])} … exited {done.returncode}:\n"
                                 f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        return done

    def answers(self) -> bool:
        """Whether the daemon answers yet: a loaded machine may keep ``docker info`` waiting
        longer than one try's ten seconds while dockerd starts, which is not yet an answer."""
        try:
            return self.docker("info", check=False, timeout=10).returncode == 0
        except subprocess.TimeoutExpired:
            return False

    def has_image(self, name: str) -> bool:
        return self.docker("image", "inspect", name, check=False).returncode == 0

    def inspect(self, name: str) -> dict[str, object]:
        found = json.loads(self.docker("inspect", name).stdout)
        assert isinstance(found, list) and len(found) == 1
        return dict(found[0])


@contextlib.contextmanager
def started() -> Iterator[Engine]:
    """A dockerd of the tests' own until the block ends."""
    CACHE.mkdir(parents=True, exist_ok=True)
    run = Path(tempfile.mkdtemp(prefix="qbd-", dir="/tmp"))  # a short path: socket names
    engine = Engine(run / "docker.sock", CACHE / "dockerd.log")
    with engine.log.open("ab") as log:
        daemon = subprocess.Popen(
            ["dockerd", "--data-root", str(CACHE / "docker"), "--exec-root", str(run / "exec"),
             "--pidfile", str(run / "docker.pid"), "--host", f"unix://{engine.socket}",
             "--bridge=none", "--iptables=false", "--ip-masq=false", "--ip6tables=false"],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + START_SECONDS
        while not engine.answers():
            if daemon.poll() is not None or time.monotonic() > deadline:
                raise AssertionError("dockerd did not start:\n"
                                     + engine.log.read_text(errors="replace")[-3000:])
            time.sleep(0.5)
        yield engine
    finally:
        daemon.send_signal(signal.SIGTERM)
        try:
            daemon.wait(timeout=30)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()
        unmount_under(run)
        shutil.rmtree(run, ignore_errors=True)


def unmount_under(root: Path) -> None:
    """Whatever the daemon left mounted below ``root`` (its default network namespace is a
    bind mount of ``/proc/<pid>/ns/net``), so the directory can be removed."""
    points = [line.split()[1] for line in Path("/proc/self/mounts").read_text().splitlines()]
    for point in sorted((p for p in points if p.startswith(f"{root}/")), reverse=True):
        subprocess.run(["umount", "-l", point], check=False, capture_output=True)


def base_image(engine: Engine) -> str:
    """bookworm's minimal system from Debian's packages, imported once (its tarball cached)."""
    if engine.has_image(BASE):
        return BASE
    tarball = CACHE / "bookworm-minbase.tar"
    if not tarball.exists():
        partial = tarball.with_suffix(".partial")
        done = subprocess.run(
            ["mmdebstrap", "--variant=minbase", "--format=tar",
             f"--customize-hook=mkdir -p \"$1/etc/ssl\" && cp {HOST_CA} \"$1/etc/ssl/host-ca.crt\"",
             "bookworm", str(partial)], capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stderr[-3000:]
        partial.rename(tarball)
    engine.docker("import", "--change", "ENV PIP_CERT=/etc/ssl/host-ca.crt",
                  "--change", 'CMD ["bash"]', str(tarball), BASE)
    return BASE


def build(engine: Engine) -> str:
    """The repository's Dockerfile, as shipped, on the Debian-built base."""
    engine.docker("build", "--network", "host", "--build-arg", f"BASE_IMAGE={base_image(engine)}",
                  "-t", IMAGE, str(files.ROOT), timeout=1500)
    return IMAGE


def redis_image(engine: Engine) -> str:
    """Debian's redis-server on the same base, to run compose.yaml's Redis command line."""
    if not engine.has_image(REDIS):
        dockerfile = (f"FROM {base_image(engine)}\n"
                      "RUN apt-get update && apt-get install -y --no-install-recommends "
                      "redis-server && rm -rf /var/lib/apt/lists/* && mkdir /data "
                      "&& chown redis:redis /data\nUSER redis\nWORKDIR /data\n")
        engine.docker("build", "--network", "host", "-t", REDIS, "-", input_text=dockerfile)
    return REDIS
