"""The image built and run on a container engine: the Dockerfile as shipped (on a base made from
Debian's packages, ``engine.py``), its two processes and Redis run with compose.yaml's settings,
the demo's webhook delivered, ``/healthz`` green — and what the worker's container must be
allowed for bubblewrap to confine repository code, each allowance shown necessary.

compose.yaml is read and its services' settings handed to ``docker run`` one by one
(``run_args``): security options, capabilities, read-only root, tmpfs, environment, env file,
the key as a read-only file at ``/run/secrets``, health check, command. What differs from
``docker compose up`` on purpose, because every container here uses the host's network (no
traffic leaves loopback): ``REDIS_URL`` names 127.0.0.1 and a free port instead of the
service ``redis``, ``PORT`` and ``QUESTBOT_METRICS_PORT`` are free ports, ``GITHUB_API_URL``
is the fake GitHub, and health is checked every second instead of every 30.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from redis.exceptions import RedisError

from bot.core import State
from bot.journal import Journal
from bot.journal.wire import plain_client
from questbot_testing.stack import free_port
from tests.deploy import engine as engines
from tests.deploy import files, story

pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400)]

PROBE = ("import json; from bot.agent.sandbox.policy import SandboxPolicy; "
         "from bot.agent.sandbox.probe import status; s = status(SandboxPolicy()); "
         "print(json.dumps({'confined': s.confined, 'bounded': s.processes_bounded, "
         "'detail': s.detail}))")
"""What the worker asks at start (``bot.agent.sandbox.probe``): can bubblewrap confine a
command here, with the very command line a check gets."""
SANDBOX_NEEDS = ("seccomp=unconfined", "systempaths=unconfined")
"""The worker's allowances this machine can show necessary; ``apparmor=unconfined`` matters
only where the host runs AppArmor, which this one does not (docs/deploy.md)."""


@pytest.fixture(scope="module")
def engine() -> Iterator[engines.Engine]:
    why = engines.missing()
    if why is not None:
        pytest.skip(f"no container engine can be started: {why}")
    with engines.started() as started:
        yield started


@pytest.fixture(scope="module")
def image(engine: engines.Engine) -> str:
    return engines.build(engine)


def compose_service(name: str) -> dict[str, Any]:
    svc = files.compose()["services"][name]
    assert isinstance(svc, dict)
    return svc


def run_args(name: str, env_file: Path, key: Path, **environment: str) -> list[str]:
    """``docker run`` options for compose.yaml's service ``name``, with ``environment`` laid
    over its own (the loopback differences the module docstring lists)."""
    svc = compose_service(name)
    args = ["--network", "host", "--env-file", str(env_file)]
    for option in svc.get("security_opt", []):
        args += ["--security-opt", option]
    for cap in svc.get("cap_drop", []):
        args += ["--cap-drop", cap]
    if svc.get("read_only"):
        args.append("--read-only")
    for path in svc.get("tmpfs", []):
        args += ["--tmpfs", path]
    for variable, value in {**svc.get("environment", {}), **environment}.items():
        args += ["-e", f"{variable}={value}"]
    for secret in svc.get("secrets", []):
        args += ["-v", f"{key}:/run/secrets/{secret}:ro"]
    test = svc["healthcheck"]["test"]
    assert test[0] == "CMD"
    args += ["--health-cmd", shlex.join(test[1:]), "--health-interval", "1s",
             "--health-timeout", "5s", "--health-retries", "3"]
    return args


def probe(engine: engines.Engine, image: str, *options: str) -> dict[str, Any]:
    done = engine.docker("run", "--rm", "--network", "host", *options, "--entrypoint",
                         "python", image, "-c", PROBE, timeout=120)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert isinstance(found, dict)
    return found


def worker_options() -> list[str]:
    svc = compose_service("worker")
    options = [f"--security-opt={o}" for o in svc["security_opt"]]
    return options + [f"--cap-drop={c}" for c in svc["cap_drop"]]


def test_the_worker_container_confines_with_compose_settings_and_not_without_each(
        engine: engines.Engine, image: str) -> None:
    """With compose.yaml's worker settings bubblewrap confines commands and their processes
    are bounded (the image's user is not root); under Docker's defaults it cannot, and
    without either of ``seccomp=unconfined`` and ``systempaths=unconfined`` it cannot either:
    seccomp refuses the namespaces, the masked /proc refuses a new /proc."""
    confined = probe(engine, image, *worker_options())
    assert confined["confined"] and confined["bounded"], confined
    assert "at most 1024 processes each" in confined["detail"]
    default = probe(engine, image)
    assert not default["confined"], default
    assert "No permissions to create new namespace" in default["detail"], default
    for needed, said in (("seccomp=unconfined", "create new namespace"),
                         ("systempaths=unconfined", "Can't mount proc")):
        without = [o for o in worker_options() if o != f"--security-opt={needed}"]
        assert len(without) == len(worker_options()) - 1
        found = probe(engine, image, *without)
        assert not found["confined"] and said in found["detail"], (needed, found)


def test_under_dockers_defaults_the_worker_says_at_start_it_runs_no_repository_code(
        engine: engines.Engine, image: str, tmp_path: Path) -> None:
    """What a self-hoster who left out the worker's security options sees: the worker starts
    (it has GitHub's side of its quests to keep), and its first word about the sandbox is an
    error saying it refuses to run repository code and why."""
    key = tmp_path / "key.pem"
    key.write_text(rsa_pem())
    os.chown(key, 10001, 10001)
    key.chmod(0o400)
    name = f"questbot-test-defaults-{os.getpid()}"
    engine.docker("run", "-d", "--name", name, "--network", "host",
                  "-e", "GITHUB_APP_ID=1", "-e", f"GITHUB_WEBHOOK_SECRET={story.SECRET}",
                  "-e", "GITHUB_PRIVATE_KEY_PATH=/run/secrets/github_app_key",
                  "-e", f"GITHUB_API_URL=http://127.0.0.1:{free_port()}",
                  "-e", f"QUESTBOT_METRICS_PORT={free_port()}",
                  "-v", f"{key}:/run/secrets/github_app_key:ro", image, "worker")
    try:
        log = tmp_path / "worker.log"
        deadline = time.monotonic() + 60
        while True:
            log.write_text(engine.docker("logs", name).stderr)
            if story.said(log, "sandbox:") or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        records = [r for r in story.log_lines(log)
                   if str(r.get("message", "")).startswith("sandbox:")]
        assert len(records) == 1, log.read_text()[-3000:]
        assert records[0]["level"] == "error"
        assert str(records[0]["message"]).startswith(
            "sandbox: unavailable, so this worker refuses to run repository code")
        assert "No permissions to create new namespace" in str(records[0]["message"])
        state = engine.inspect(name)["State"]
        assert isinstance(state, dict) and state["Running"]
    finally:
        engine.docker("rm", "-f", name, check=False)


def rsa_pem() -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


DOCKER_DEFAULT_PROFILE = engines.CACHE / "docker-default-seccomp.json"
"""The engine's own default profile: scripts/setup-engine takes it from the Debian source package of
the same Docker (``golang-github-docker-docker-dev``)."""


def test_the_stricter_seccomp_profile_confines_and_each_added_call_is_needed(
        engine: engines.Engine, image: str, tmp_path: Path) -> None:
    """deploy/seccomp.py on the engine's own default profile: with it
    in place of ``seccomp=unconfined`` bubblewrap confines; without any one of the six calls it
    adds, it does not — so the profile allows nothing bubblewrap does not use."""
    if not DOCKER_DEFAULT_PROFILE.exists():
        pytest.skip(f"{DOCKER_DEFAULT_PROFILE} is missing (scripts/setup-engine takes it from "
                    "Debian's golang-github-docker-docker-dev)")
    import importlib.util

    spec = importlib.util.spec_from_file_location("seccomp", files.ROOT / "deploy" /
                                                  "seccomp.py")
    assert spec is not None and spec.loader is not None
    seccomp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(seccomp)
    default = json.loads(DOCKER_DEFAULT_PROFILE.read_text())
    others = [o for o in worker_options() if o != "--security-opt=seccomp=unconfined"]

    def with_calls(calls: tuple[str, ...]) -> str:
        profile = seccomp.with_bubblewrap(default)
        profile["syscalls"][-1]["names"] = list(calls)
        path = tmp_path / f"{len(calls)}-{'-'.join(calls)}.json"
        path.write_text(json.dumps(profile))
        return f"--security-opt=seccomp={path}"

    found = probe(engine, image, with_calls(seccomp.BUBBLEWRAP_SYSCALLS), *others)
    assert found["confined"], found
    for dropped in seccomp.BUBBLEWRAP_SYSCALLS:
        calls = tuple(c for c in seccomp.BUBBLEWRAP_SYSCALLS if c != dropped)
        found = probe(engine, image, with_calls(calls), *others)
        assert not found["confined"], (dropped, found)


async def test_compose_services_run_the_demo_from_the_image(
        engine: engines.Engine, image: str) -> None:
    """Redis with compose.yaml's command line, then the web process and the worker from the
    image with compose.yaml's settings: both health checks report healthy, the worker says
    bubblewrap confines, the demo's quest goes from the failing check through C, ``docker
    stop`` (SIGTERM to tini) ends both with exit 0, Redis keeps its AOF in the volume, and
    docs/deploy.md's backup of that volume restores the quest."""
    work = Path(tempfile.mkdtemp(prefix="questbot-image-"))
    names = {role: f"questbot-test-{role}-{os.getpid()}" for role in ("redis", "web", "worker")}
    volume = f"questbot-test-redis-data-{os.getpid()}"
    redis_port = free_port()
    redis = compose_service("redis")
    engine.docker("run", "-d", "--name", names["redis"], "--network", "host",
                  "-v", f"{volume}:/data", engines.redis_image(engine),
                  *redis["command"], "--port", str(redis_port))
    scene = await story.scene(f"redis://127.0.0.1:{redis_port}/0", "/usr/bin/python3.11")
    try:
        key = work / "github-app-key.pem"
        key.write_text(scene.fake.keys.private_pem)
        os.chown(key, 10001, 10001)  # as docs/deploy.md tells: the image's user reads it
        key.chmod(0o400)
        settings = scene.settings("/run/secrets/github_app_key")
        env_file = work / "questbot.env"
        wiring = {"REDIS_URL", "GITHUB_PRIVATE_KEY_PATH", "PORT", "QUESTBOT_METRICS_PORT"}
        env_file.write_text("".join(f"{k}={v}\n" for k, v in settings.items()
                                    if k not in wiring))
        loopback = {"REDIS_URL": settings["REDIS_URL"], "PORT": settings["PORT"],
                    "QUESTBOT_METRICS_PORT": settings["QUESTBOT_METRICS_PORT"]}
        for role in ("web", "worker"):
            svc = compose_service(role)
            engine.docker("run", "-d", "--name", names[role],
                          *run_args(role, env_file, key, **loopback), image, *svc["command"])

        def alive() -> str | None:
            for role in ("web", "worker"):
                state = engine.inspect(names[role])["State"]
                assert isinstance(state, dict)
                if not state["Running"]:
                    return f"{role} exited {state['ExitCode']}:\n" + logs(role)
            return None

        def logs(role: str) -> str:
            done = engine.docker("logs", names[role], check=False)
            return (done.stdout + done.stderr)[-4000:]

        async def healthy() -> bool:
            states = []
            for role in ("web", "worker"):
                state = engine.inspect(names[role])["State"]
                assert isinstance(state, dict)
                states.append(state.get("Health", {}).get("Status"))
            return states == ["healthy", "healthy"]

        try:
            await story.until("both containers healthy", healthy, alive, seconds=180)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n--- web\n{logs('web')}\n--- worker\n{logs('worker')}"
                                 ) from None
        assert story.healthz(scene.web_port)[0] == 200
        assert story.healthz(scene.metrics_port)[0] == 200
        worker_log = work / "worker.log"
        worker_log.write_text(engine.docker("logs", names["worker"]).stderr)
        sandbox = story.said(worker_log, "sandbox:")
        assert len(sandbox) == 1 and "confines commands" in sandbox[0], sandbox

        quest_id = await story.tell(scene, alive)

        for role in ("web", "worker"):
            await asyncio.to_thread(engine.docker, "stop", "-t", "30", names[role])
            state = engine.inspect(names[role])["State"]
            assert isinstance(state, dict)
            assert state["ExitCode"] == 0, logs(role)
        listed = engine.docker("exec", names["redis"], "ls", "/data/appendonlydir").stdout
        assert ".aof" in listed, listed
        await backed_up_and_restored(engine, names["redis"], volume, work, quest_id)
    finally:
        for name in names.values():
            engine.docker("rm", "-f", name, check=False)
        for name in (volume, f"{volume}-restored"):
            engine.docker("volume", "rm", "-f", name, check=False)
        await scene.close()


async def backed_up_and_restored(engine: engines.Engine, redis_name: str, volume: str,
                                 work: Path, quest_id: str) -> None:
    """docs/deploy.md's cold backup, as written there: Redis stopped, the volume tarred by a
    container of Redis's image, Redis started; then the archive untarred into a new volume
    and a Redis with compose.yaml's command line on it holds the quest as it was."""
    image = engines.redis_image(engine)
    engine.docker("stop", redis_name)
    engine.docker("run", "--rm", "--user", "0", "-v", f"{volume}:/data:ro",
                  "-v", f"{work}:/backup", "--entrypoint", "tar", image,
                  "-C", "/data", "-czf", "/backup/questbot-redis.tgz", ".")
    engine.docker("start", redis_name)
    restored = f"{volume}-restored"
    engine.docker("run", "--rm", "--user", "0", "-v", f"{restored}:/data",
                  "-v", f"{work}:/backup", "--entrypoint", "tar", image,
                  "-C", "/data", "-xzf", "/backup/questbot-redis.tgz")
    port = free_port()
    name = f"{redis_name}-restored"
    engine.docker("run", "-d", "--name", name, "--network", "host", "-v", f"{restored}:/data",
                  image, *compose_service("redis")["command"], "--port", str(port))
    client = plain_client(f"redis://127.0.0.1:{port}/0")
    try:
        async def answers() -> bool:
            try:
                return bool(await client.ping())
            except (OSError, RedisError):
                return False

        await story.until("the restored Redis answered", answers, lambda: None, seconds=30)
        _v, quest = await Journal(client).snapshot(quest_id)
        assert quest is not None and quest.state is State.WATCHING, quest
    finally:
        await client.aclose()
        engine.docker("rm", "-f", name, check=False)
