"""compose.yaml held to what questbot needs, read as Compose reads it (PyYAML: anchors, merges).

No engine is needed for these: they check the file against questbot's own settings model
(``bot.settings.process``), the Dockerfile and the Procfile, so a renamed setting, a port that
moved, a key handed over as a variable or a Redis without ``appendfsync always`` fails here before a
self-hoster meets it. ``test_image.py`` runs the same file's settings on an engine.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from bot.settings.process import Config, load_config
from bot.settings.process.problems import ConfigError
from tests.deploy import files

QUESTBOT = ("web", "worker")
ROLE = {"web": "serve", "worker": "worker"}


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    return files.compose()


def service(spec: dict[str, Any], name: str) -> dict[str, Any]:
    found = spec["services"][name]
    assert isinstance(found, dict)
    return found


def settings_aliases() -> set[str]:
    return {str(f.validation_alias) for f in Config.model_fields.values()}


def key_file(tmp_path: Path) -> Path:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    path = tmp_path / "github-app-key.pem"
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                       serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    return path


def environment_of(spec: dict[str, Any], name: str, key: Path,
                   fill: dict[str, str] | None = None) -> dict[str, str]:
    """What the service's process sees: the env file's example (its blanks filled by ``fill``)
    under the service's ``environment`` (which Compose lays over ``env_file``), with the
    secret's mount point moved to ``key``."""
    svc = service(spec, name)
    assert svc["env_file"] == "deploy/questbot.env"
    values, _offered = files.env_file(files.ENV_EXAMPLE)
    values = {**values, **{k: v for k, v in (fill or {}).items() if not values.get(k)}}
    environ = {k: v for k, v in {**values, **svc["environment"]}.items() if v}
    secret_path = environ["GITHUB_PRIVATE_KEY_PATH"]
    assert secret_path == f"/run/secrets/{svc['secrets'][0]}"
    environ["GITHUB_PRIVATE_KEY_PATH"] = str(key)
    return environ


def test_web_and_worker_are_the_procfiles_two_commands_from_one_image(
        spec: dict[str, Any]) -> None:
    """Both run the image built from this repository, and what runs in each is exactly the
    Procfile's line for it: the Dockerfile's entrypoint after tini, then the service's
    command. The image's own default command is the web process, as Heroku's first line."""
    instructions = files.dockerfile()
    entrypoint = files.only(instructions, "ENTRYPOINT").exec_form()
    assert entrypoint[:2] == ["tini", "--"]
    procfile = files.procfile()
    assert set(procfile) == set(QUESTBOT)
    for name in QUESTBOT:
        svc = service(spec, name)
        assert svc["build"] == "."
        assert svc["image"] == service(spec, "web")["image"]
        assert entrypoint[2:] + svc["command"] == procfile[name], name
        assert "entrypoint" not in svc
    assert entrypoint[2:] + files.only(instructions, "CMD").exec_form() == procfile["web"]


def test_the_settings_are_whole_once_the_app_id_and_secret_are_filled_in(
        spec: dict[str, Any], tmp_path: Path) -> None:
    """The example env file and compose.yaml's wiring together pass questbot's own check of
    its settings (the one each process runs before it starts) — except for exactly the two
    values only the App's owner has, which the example leaves blank so a copy that was not
    filled in refuses to start, saying which."""
    key = key_file(tmp_path)
    for name in QUESTBOT:
        with pytest.raises(ConfigError) as refused:
            load_config(environment_of(spec, name, key))
        problems = str(refused.value)
        assert "GITHUB_APP_ID" in problems and "GITHUB_WEBHOOK_SECRET" in problems, problems
        assert len(refused.value.problems) == 2, problems
        config = load_config(environment_of(
            spec, name, key, {"GITHUB_APP_ID": "12345",
                              "GITHUB_WEBHOOK_SECRET": "compose-test-webhook-secret"}))
        assert config.redis_url == "redis://redis:6379/0"
        assert config.github_private_key_path == key


def test_every_variable_named_is_one_questbot_reads(spec: dict[str, Any]) -> None:
    """A misspelt setting is silently ignored by a process (its default applies), so every
    name the example offers, set or commented out, and every name compose.yaml sets, must be
    one of questbot's settings."""
    values, offered = files.env_file(files.ENV_EXAMPLE)
    named = set(values) | offered
    for name in QUESTBOT:
        named |= set(service(spec, name)["environment"])
    unknown = {n for n in named if n not in settings_aliases() and not n.startswith("AGENT_")}
    assert not unknown, f"not questbot settings: {sorted(unknown)}"
    required = {str(f.validation_alias) for f in Config.model_fields.values()
                if f.is_required()}
    assert required <= set(values), "a required setting is missing from the example"


def test_the_app_key_is_a_secret_file_never_a_variable(spec: dict[str, Any]) -> None:
    """Variables show in ``docker inspect`` and in every child process's environment; the key
    is mounted as a file (``/run/secrets``), read by path, and kept out of git and of the
    image's build context."""
    values, offered = files.env_file(files.ENV_EXAMPLE)
    assert "GITHUB_PRIVATE_KEY" not in set(values) | offered
    declared = spec["secrets"]
    for name in QUESTBOT:
        svc = service(spec, name)
        assert "GITHUB_PRIVATE_KEY" not in svc["environment"]
        (secret,) = svc["secrets"]
        assert svc["environment"]["GITHUB_PRIVATE_KEY_PATH"] == f"/run/secrets/{secret}"
        source = declared[secret]["file"]
        assert not files.dockerignore_allows(source)
        ignored = (files.ROOT / ".gitignore").read_text().split()
        assert f"/{source}" in ignored
        assert "/deploy/questbot.env" in ignored


def published(svc: dict[str, Any]) -> dict[int, str]:
    """container port → the host address:port it is published on."""
    out = {}
    for entry in svc.get("ports", []):
        host, _, container = str(entry).rpartition(":")
        out[int(container)] = host
    return out


def test_ports_and_health_checks_are_where_each_process_serves(spec: dict[str, Any]) -> None:
    """The web process serves ``/webhook`` and ``/healthz`` on ``PORT``, the worker ``/metrics``
    and ``/healthz`` on ``QUESTBOT_METRICS_PORT``: each service publishes that port, checks its
    health there, and the image exposes both defaults (its own HEALTHCHECK runs without
    compose.yaml's variables). The worker's metrics stay on the host's loopback."""
    web, worker = service(spec, "web"), service(spec, "worker")
    web_port = int(web["environment"]["PORT"])
    metrics_port = int(worker["environment"]["QUESTBOT_METRICS_PORT"])
    assert web_port in published(web)
    assert published(worker) == {metrics_port: "127.0.0.1:9100"}
    assert web["healthcheck"]["test"] == ["CMD", "questbot-healthcheck", "serve"]
    assert worker["healthcheck"]["test"] == ["CMD", "questbot-healthcheck", "worker"]
    instructions = files.dockerfile()
    exposed = {int(p) for p in files.only(instructions, "EXPOSE").args.split()}
    defaults = {Config.model_fields["port"].default, Config.model_fields["metrics_port"].default}
    assert exposed == defaults == {web_port, metrics_port}
    assert files.only(instructions, "HEALTHCHECK").exec_form() == ["questbot-healthcheck"]


def test_redis_keeps_every_acknowledged_write_on_disk(spec: dict[str, Any]) -> None:
    """docs/operations.md's deployment: AOF with ``appendfsync always``, on a named volume,
    a pinned version; questbot's processes start only once it answers, and find it by the
    service's name."""
    redis = service(spec, "redis")
    command = redis["command"]
    assert command[0] == "redis-server"
    options = dict(zip(command[1::2], command[2::2], strict=True))
    assert options["--appendonly"] == "yes"
    assert options["--appendfsync"] == "always"
    volume, _, mounted = redis["volumes"][0].partition(":")
    assert mounted == options["--dir"] == "/data"
    assert volume in spec["volumes"]
    assert re.fullmatch(r"redis:\d+\.\d+\.\d+-\w+", redis["image"])
    assert redis["healthcheck"]["test"] == ["CMD", "redis-cli", "ping"]
    assert "ports" not in redis
    for name in QUESTBOT:
        svc = service(spec, name)
        assert svc["depends_on"] == {"redis": {"condition": "service_healthy"}}
        assert svc["environment"]["REDIS_URL"].startswith("redis://redis:6379/")


SANDBOX_NEEDS = {"seccomp=unconfined", "apparmor=unconfined", "systempaths=unconfined"}


def test_only_the_worker_gets_what_bubblewrap_needs_and_nothing_runs_as_root(
        spec: dict[str, Any]) -> None:
    """The worker's container may make namespaces and mount a /proc (what bubblewrap needs,
    measured in test_image.py); the web process runs no repository code and keeps Docker's
    defaults. Neither overrides the image's user, gains privileges or keeps a capability."""
    web, worker = service(spec, "web"), service(spec, "worker")
    assert set(worker["security_opt"]) >= SANDBOX_NEEDS
    assert not SANDBOX_NEEDS & set(web["security_opt"])
    for svc in (web, worker):
        assert "no-new-privileges:true" in svc["security_opt"]
        assert svc["cap_drop"] == ["ALL"]
        assert "cap_add" not in svc and not svc.get("privileged")
        assert "user" not in svc
        assert svc["restart"] == "unless-stopped"
    assert web["read_only"] is True
