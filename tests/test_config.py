"""Process configuration: defaults, every variable's problems listed at once, secrets hidden."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from bot.agent.model.endpoint import endpoint_from
from bot.settings.process import Config, load_config
from bot.settings.process.problems import ConfigError

SECRET = "webhook-secret-value"


def pem(key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    ).decode()


@pytest.fixture(scope="module")
def key_pem() -> str:
    return pem(rsa.generate_private_key(public_exponent=65537, key_size=2048))


@pytest.fixture
def env(key_pem: str) -> dict[str, str]:
    return {"GITHUB_APP_ID": "123", "GITHUB_PRIVATE_KEY": key_pem, "GITHUB_WEBHOOK_SECRET": SECRET}


def problems(environ: dict[str, str], env_file: Path | None = None) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_config(environ, env_file=env_file)
    return list(caught.value.problems)


def only_problem(environ: dict[str, str], env_file: Path | None = None) -> str:
    [problem] = problems(environ, env_file)
    return problem


# --- good configurations -----------------------------------------------------------------------


def test_defaults(env: dict[str, str], key_pem: str) -> None:
    config = load_config(env)
    assert config.github_app_id == "123"
    assert config.github_private_key.get_secret_value() == key_pem
    assert config.github_webhook_secret.get_secret_value() == SECRET
    assert config.redis_url == "redis://127.0.0.1:6379/0"
    assert config.github_api_url == "https://api.github.com"
    assert config.port == 8080
    assert config.durable_acks is True


@pytest.mark.parametrize("url", ["redis+cluster://10.0.0.1:7000",
                                 "rediss+cluster://u:pw@a.internal:7000,b.internal:7001/0"])
def test_a_redis_cluster_url_is_taken(env: dict[str, str], url: str) -> None:
    env["REDIS_URL"] = url
    assert load_config(env).redis_url == url


def test_every_variable_is_read(env: dict[str, str]) -> None:
    env |= {
        "REDIS_URL": "rediss://cache.internal:6380/2",
        "GITHUB_API_URL": "https://ghe.example.com/api/v3/",
        "PORT": "9000",
        "QUESTBOT_DURABLE_ACKS": "false",
        "UNRELATED": "ignored",
    }
    config = load_config(env)
    assert config.redis_url == "rediss://cache.internal:6380/2"
    assert config.github_api_url == "https://ghe.example.com/api/v3"
    assert config.port == 9000
    assert config.durable_acks is False


def test_key_from_a_file(env: dict[str, str], key_pem: str, tmp_path: Path) -> None:
    path = tmp_path / "app.pem"
    path.write_text(key_pem)
    del env["GITHUB_PRIVATE_KEY"]
    config = load_config(env | {"GITHUB_PRIVATE_KEY_PATH": str(path)})
    assert config.github_private_key.get_secret_value() == key_pem
    assert config.github_private_key_path == path


def test_key_with_escaped_newlines(env: dict[str, str], key_pem: str) -> None:
    escaped = key_pem.strip().replace("\n", "\\n")
    config = load_config(env | {"GITHUB_PRIVATE_KEY": escaped})
    assert config.github_private_key.get_secret_value() == key_pem.strip()


def test_client_id_is_an_app_id(env: dict[str, str]) -> None:
    assert load_config(env | {"GITHUB_APP_ID": "Iv23liABC.def"}).github_app_id == "Iv23liABC.def"


@pytest.mark.parametrize(
    ("written", "value"),
    [("true", True), ("1", True), ("YES", True), ("on", True), ("False", False), ("0", False)],
)
def test_durable_acks_flag(env: dict[str, str], written: str, value: bool) -> None:
    assert load_config(env | {"QUESTBOT_DURABLE_ACKS": written}).durable_acks is value


def test_empty_means_unset(env: dict[str, str]) -> None:
    config = load_config(env | {"PORT": "", "REDIS_URL": "", "GITHUB_PRIVATE_KEY_PATH": ""})
    assert (config.port, config.redis_url) == (8080, "redis://127.0.0.1:6379/0")


def test_reads_the_process_environment_by_default(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in (env | {"PORT": "7000"}).items():
        monkeypatch.setenv(name, value)
    assert load_config().port == 7000
    assert Config().port == 7000


def test_a_given_environment_ignores_the_process_one(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert len(problems({})) == 3


# --- problems -----------------------------------------------------------------------------------


def test_nothing_set_lists_every_required_variable() -> None:
    assert problems({}) == [
        "GITHUB_APP_ID is not set; set it to the App's numeric ID (or client ID) from the "
        "App's settings page (python -m bot register writes it to .env)",
        "neither GITHUB_PRIVATE_KEY nor GITHUB_PRIVATE_KEY_PATH is set; put the PEM text of "
        "the App's private key in GITHUB_PRIVATE_KEY, or the path of its .pem file in "
        "GITHUB_PRIVATE_KEY_PATH (python -m bot register writes the file, and its path to "
        ".env)",
        "GITHUB_WEBHOOK_SECRET is not set; set it to the webhook secret configured on the "
        "GitHub App; questbot refuses to run without one, since it could not tell GitHub's "
        "deliveries from anyone else's (python -m bot register writes it to .env)",
    ]


@pytest.mark.parametrize("value", [None, "", "   "])
def test_the_webhook_secret_is_required(env: dict[str, str], value: str | None) -> None:
    del env["GITHUB_WEBHOOK_SECRET"]
    if value is not None:
        env["GITHUB_WEBHOOK_SECRET"] = value
    assert only_problem(env).startswith("GITHUB_WEBHOOK_SECRET")


@pytest.mark.parametrize("value", ["x", "s3cret", "fifteen-chars!!"])
def test_a_short_webhook_secret_is_refused(env: dict[str, str], value: str) -> None:
    """A secret is guessed the shorter it is, and the log redaction, replacing it wherever it
    appears, would blank a one-letter secret in every line: 16 characters at least."""
    env["GITHUB_WEBHOOK_SECRET"] = value
    problem = only_problem(env)
    length = "1 character" if len(value) == 1 else f"{len(value)} characters"
    assert problem.startswith(f"GITHUB_WEBHOOK_SECRET: is {length} long")
    assert "at least 16" in problem and "fifteen-chars!!" not in problem  # never quoted
    env["GITHUB_WEBHOOK_SECRET"] = "sixteen-chars!!!"
    assert load_config(env).github_webhook_secret.get_secret_value() == "sixteen-chars!!!"


def test_key_path_not_found(env: dict[str, str]) -> None:
    del env["GITHUB_PRIVATE_KEY"]
    assert only_problem(env | {"GITHUB_PRIVATE_KEY_PATH": "/x"}) == (
        "GITHUB_PRIVATE_KEY_PATH=/x: file not found; set it to the path of the App's .pem "
        "file, or put the PEM text in GITHUB_PRIVATE_KEY"
    )


def test_key_path_is_a_directory(env: dict[str, str], tmp_path: Path) -> None:
    del env["GITHUB_PRIVATE_KEY"]
    problem = only_problem(env | {"GITHUB_PRIVATE_KEY_PATH": str(tmp_path)})
    assert problem.startswith(f"GITHUB_PRIVATE_KEY_PATH={tmp_path}: is a directory, not a file;")


@pytest.mark.parametrize("content", ["hello", "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n"])
def test_key_file_that_is_not_a_key(env: dict[str, str], tmp_path: Path, content: str) -> None:
    path = tmp_path / "app.pem"
    path.write_text(content)
    del env["GITHUB_PRIVATE_KEY"]
    problem = only_problem(env | {"GITHUB_PRIVATE_KEY_PATH": str(path)})
    assert problem.startswith(
        f"GITHUB_PRIVATE_KEY_PATH={path}: does not hold an RSA private key in PEM form;"
    )


def test_key_file_with_a_non_rsa_key(env: dict[str, str], tmp_path: Path) -> None:
    path = tmp_path / "ec.pem"
    path.write_text(pem(ec.generate_private_key(ec.SECP256R1())))
    del env["GITHUB_PRIVATE_KEY"]
    assert "does not hold an RSA private key" in only_problem(
        env | {"GITHUB_PRIVATE_KEY_PATH": str(path)}
    )


def test_malformed_key_text_is_not_quoted(env: dict[str, str]) -> None:
    problem = only_problem(env | {"GITHUB_PRIVATE_KEY": "sekrit-material"})
    assert problem == (
        "GITHUB_PRIVATE_KEY: does not parse as an RSA private key in PEM form; put the PEM "
        "text of the App's private key in it, or unset it and put the path of the .pem file "
        "in GITHUB_PRIVATE_KEY_PATH"
    )


def test_both_key_variables(env: dict[str, str], tmp_path: Path) -> None:
    assert only_problem(env | {"GITHUB_PRIVATE_KEY_PATH": str(tmp_path / "k.pem")}) == (
        "GITHUB_PRIVATE_KEY and GITHUB_PRIVATE_KEY_PATH are both set; keep only one: the PEM "
        "text, or the path of the .pem file"
    )


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("GITHUB_APP_ID", "abc", "GITHUB_APP_ID=abc: is not an App ID"),
        ("GITHUB_APP_ID", "0", "GITHUB_APP_ID=0: is not an App ID"),
        ("REDIS_URL", "localhost:6379", "REDIS_URL=localhost:6379: is not a redis://"),
        ("GITHUB_API_URL", "api.github.com", "GITHUB_API_URL=api.github.com: is not an http(s)"),
        ("PORT", "http", "PORT=http: is not a port number; set it to a TCP port from 1 to 65535"),
        ("PORT", "0", "PORT=0: is not a port number"),
        ("PORT", "65536", "PORT=65536: is not a port number"),
        ("QUESTBOT_DURABLE_ACKS", "maybe", "QUESTBOT_DURABLE_ACKS=maybe: is not true or false"),
    ],
)
def test_malformed_values(env: dict[str, str], name: str, value: str, expected: str) -> None:
    assert only_problem(env | {name: value}).startswith(expected)


def test_every_problem_at_once(env: dict[str, str]) -> None:
    found = problems(
        {
            "GITHUB_PRIVATE_KEY_PATH": "/nowhere.pem",
            "PORT": "x",
            "REDIS_URL": "mysql://db",
            "GITHUB_API_URL": "ftp://x",
            "QUESTBOT_DURABLE_ACKS": "perhaps",
        }
    )
    assert [problem.split(" ", 1)[0].split("=", 1)[0].rstrip(":") for problem in found] == [
        "GITHUB_APP_ID",
        "GITHUB_PRIVATE_KEY_PATH",
        "GITHUB_WEBHOOK_SECRET",
        "REDIS_URL",
        "GITHUB_API_URL",
        "PORT",
        "QUESTBOT_DURABLE_ACKS",
    ]


def test_error_text_lists_every_problem() -> None:
    with pytest.raises(ConfigError) as caught:
        load_config({})
    text = str(caught.value)
    assert text.startswith("questbot cannot start; fix the environment:\n- GITHUB_APP_ID")
    assert text.count("\n- ") == 3


# --- secrets ------------------------------------------------------------------------------------


def test_secrets_do_not_show(
    env: dict[str, str], key_pem: str, caplog: pytest.LogCaptureFixture
) -> None:
    config = load_config(env)
    logging.getLogger("test").warning("config: %r %s", config, config)
    key_body = key_pem.splitlines()[1]
    for text in (repr(config), str(config), config.model_dump_json(), caplog.text):
        assert SECRET not in text
        assert key_body not in text
    assert "**********" in repr(config)


def test_config_errors_do_not_quote_or_chain_secrets(env: dict[str, str]) -> None:
    env |= {"GITHUB_PRIVATE_KEY": "sekrit-material", "PORT": "x"}
    with pytest.raises(ConfigError) as caught:
        load_config(env)
    assert "sekrit-material" not in str(caught.value)
    assert SECRET not in str(caught.value)
    assert caught.value.__cause__ is None
    assert caught.value.__suppress_context__


def test_config_is_frozen(env: dict[str, str]) -> None:
    config = load_config(env)
    with pytest.raises(ValueError, match="frozen"):
        config.port = 1  # type: ignore[misc]


# --- the sandbox -------------------------------------------------------------------------------


def test_the_sandbox_is_on_unless_the_operator_says_unsafe_off(
        env: dict[str, str], tmp_path: Path) -> None:
    from bot.agent.sandbox import SandboxMode
    from bot.settings.process.sandbox import load_sandbox_config

    config = load_config(env)
    assert config.sandbox is SandboxMode.BUBBLEWRAP and config.sandbox_policy().confined
    assert config.sandbox_policy().memory_bytes == 4096 * 1024 * 1024
    off = load_config({**env, "QUESTBOT_SANDBOX": "unsafe-off",
                       "QUESTBOT_SANDBOX_READONLY": f"{tmp_path}:{tmp_path}",
                       "QUESTBOT_SANDBOX_MEMORY_MB": "512"})
    assert off.sandbox_policy().mode is SandboxMode.UNSAFE_OFF
    assert off.sandbox_policy().readonly == (tmp_path, tmp_path)
    assert off.sandbox_policy().memory_bytes == 512 * 1024 * 1024
    assert config.sandbox_policy().processes == 1024
    assert load_config({**env, "QUESTBOT_SANDBOX_PROCESSES": "64"}).sandbox_policy(
        ).processes == 64
    alone = load_sandbox_config({"QUESTBOT_SANDBOX": "unsafe-off"})  # no App needed
    assert alone.sandbox is SandboxMode.UNSAFE_OFF


def test_a_plain_off_is_not_the_opt_out(env: dict[str, str], tmp_path: Path) -> None:
    problem = only_problem({**env, "QUESTBOT_SANDBOX": "off"})
    assert problem.startswith("QUESTBOT_SANDBOX=off: is not one of bubblewrap, unsafe-off")
    assert "unconfined" in problem
    listed = problems({**env, "QUESTBOT_SANDBOX_READONLY": "relative/dir",
                       "QUESTBOT_SANDBOX_MEMORY_MB": "lots", "QUESTBOT_SANDBOX_PROCESSES": "3"})
    assert any("QUESTBOT_SANDBOX_READONLY" in p and "relative" in p for p in listed)
    assert any("QUESTBOT_SANDBOX_MEMORY_MB" in p for p in listed)
    assert any("QUESTBOT_SANDBOX_PROCESSES=3" in p and "at least 16" in p for p in listed)


# --- every setting checked (issue 13, item 7) ---------------------------------------------------


def test_the_worker_and_redelivery_settings(env: dict[str, str]) -> None:
    config = load_config(env)
    assert (config.metrics_port, config.redelivery, config.redelivery_interval_s,
            config.redelivery_hours, config.redelivery_max) == (9100, True, 300, 24, 50)
    config = load_config(env | {"QUESTBOT_METRICS_PORT": "9200", "QUESTBOT_REDELIVERY": "off",
                                "QUESTBOT_REDELIVERY_INTERVAL": "60",
                                "QUESTBOT_REDELIVERY_HOURS": "72", "QUESTBOT_REDELIVERY_MAX": "5",
                                "GITHUB_APP_SLUG": "my-questbot"})
    assert (config.metrics_port, config.redelivery, config.redelivery_interval_s,
            config.redelivery_hours, config.redelivery_max) == (9200, False, 60, 72, 5)
    assert config.github_app_slug == "my-questbot"


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("QUESTBOT_METRICS_PORT", "99999", "QUESTBOT_METRICS_PORT=99999: is not a port number; "
         "set it to a TCP port from 1 to 65535, or unset it for 9100"),
        ("QUESTBOT_METRICS_PORT", "-1", "QUESTBOT_METRICS_PORT=-1: is not a port number"),
        ("GITHUB_API_URL", "https://", "GITHUB_API_URL=https://: has no host"),
        ("GITHUB_API_URL", "https://ghe.example.com:99999/api/v3",
         "GITHUB_API_URL=https://ghe.example.com:99999/api/v3: has a port that is not a number"),
        ("GITHUB_API_URL", "https://ghe.example.com:0", "GITHUB_API_URL=https://ghe.example.com:0"
         ": has a port that is not"),
        ("GITHUB_API_URL", "https://api.github.com?x=1", "GITHUB_API_URL=https://api.github.com?x"
         "=1: has a query or fragment"),
        ("GITHUB_API_URL", "https://user:pw@api.github.com", "GITHUB_API_URL=https://user:***@"
         "api.github.com: has a user name or password in it"),
        ("GITHUB_API_URL", "https://api.github .com", "GITHUB_API_URL=https://api.github .com: "
         "has a space or a line break in it"),
        ("REDIS_URL", "redis://", "REDIS_URL=redis://: has no host"),
        ("REDIS_URL", "redis://cache:65536/0", "REDIS_URL=redis://cache:65536/0: has a port that"),
        ("REDIS_URL", "redis://cache:6379/zero", "REDIS_URL=redis://cache:6379/zero: has a "
         "database that is not a number"),
        ("REDIS_URL", "unix://", "REDIS_URL=unix://: has no socket path"),
        ("REDIS_URL", "redis+cluster://a:6379/1", "REDIS_URL=redis+cluster://a:6379/1: names a "
         "database other than 0"),
        ("REDIS_URL", "redis+cluster://a:6379,b:99999/0", "REDIS_URL=redis+cluster://a:6379,"
         "b:99999/0: has a port that"),
        ("QUESTBOT_REDELIVERY", "sometimes", "QUESTBOT_REDELIVERY=sometimes: is not true or false"),
        ("QUESTBOT_REDELIVERY_INTERVAL", "5", "QUESTBOT_REDELIVERY_INTERVAL=5: is not between 10 "
         "and 86400"),
        ("QUESTBOT_REDELIVERY_INTERVAL", "1m", "QUESTBOT_REDELIVERY_INTERVAL=1m: is not a whole "
         "number"),
        ("QUESTBOT_REDELIVERY_HOURS", "96", "QUESTBOT_REDELIVERY_HOURS=96: is not between 1 and "
         "72; set it to how many hours back"),
        ("QUESTBOT_REDELIVERY_MAX", "0", "QUESTBOT_REDELIVERY_MAX=0: is not between 1 and 1000"),
        ("GITHUB_APP_SLUG", "my app", "GITHUB_APP_SLUG=my app: is not an App slug"),
        ("QUESTBOT_COMPACT_AFTER_HOURS", "1e3", "QUESTBOT_COMPACT_AFTER_HOURS=1e3: is not a "
         "number"),
        ("QUESTBOT_COMPACT_AFTER_HOURS", "nan", "QUESTBOT_COMPACT_AFTER_HOURS=nan: is not a "
         "number"),
        ("QUESTBOT_COMPACT_AFTER_HOURS", "-1", "QUESTBOT_COMPACT_AFTER_HOURS=-1: is not a "
         "number"),
        ("QUESTBOT_COMPACT_AFTER_HOURS", "1.2.3", "QUESTBOT_COMPACT_AFTER_HOURS=1.2.3: is not a "
         "number"),
        ("QUESTBOT_COMPACT_AFTER_HOURS", "0.0001", "QUESTBOT_COMPACT_AFTER_HOURS=0.0001: is below "
         "0.001 hours"),
        ("QUESTBOT_COMPACT_AFTER_HOURS", "90000", "QUESTBOT_COMPACT_AFTER_HOURS=90000: is not "
         "between 0 and 87600"),
        ("QUESTBOT_EXPORT_AFTER_DAYS", "1e3", "QUESTBOT_EXPORT_AFTER_DAYS=1e3: is not a number"),
        ("QUESTBOT_EXPORT_AFTER_DAYS", "0", "QUESTBOT_EXPORT_AFTER_DAYS=0: is below 0.0001 days"),
        ("QUESTBOT_EXPORT_AFTER_DAYS", "40000", "QUESTBOT_EXPORT_AFTER_DAYS=40000: is not "
         "between 0 and 36500"),
        ("QUESTBOT_RESTORED_CHECK_S", "59", "QUESTBOT_RESTORED_CHECK_S=59: is not between 60 "
         "and 86400"),
        ("QUESTBOT_RESTORED_CHECK_S", "90000", "QUESTBOT_RESTORED_CHECK_S=90000: is not "
         "between 60 and 86400"),
        ("QUESTBOT_RESTORED_CHECK_S", "6e2", "QUESTBOT_RESTORED_CHECK_S=6e2: is not a number"),
    ],
)
def test_malformed_settings(env: dict[str, str], name: str, value: str, expected: str) -> None:
    assert only_problem(env | {name: value}).startswith(expected)


@pytest.mark.parametrize(("value", "hours"), [("72", 72.0), ("0", 0.0), ("0.05", 0.05),
                                              (".5", 0.5), ("2.", 2.0)])
def test_compaction_takes_a_fraction_of_an_hour(env: dict[str, str], value: str,
                                                hours: float) -> None:
    """A soak of minutes (``scripts/soak.py``) compacts the quests it ends: ``0.05`` hours."""
    assert load_config(env | {"QUESTBOT_COMPACT_AFTER_HOURS": value}).compact_after_hours == hours


@pytest.mark.parametrize(("value", "days"), [("30", 30.0), ("0.0104", 0.0104), ("2.", 2.0)])
def test_export_takes_a_fraction_of_a_day(env: dict[str, str], value: str, days: float) -> None:
    """A soak of minutes exports the quests it compacted: ``0.0104`` days, 15 minutes of its
    fast clock."""
    assert load_config(env | {"QUESTBOT_EXPORT_AFTER_DAYS": value}).export_after_days == days


@pytest.mark.parametrize("url", ["redis://:hunter2@cache:99999/0", "rediss://u:hunter2@c/x"])
def test_a_redis_password_is_never_quoted(env: dict[str, str], url: str) -> None:
    problem = only_problem(env | {"REDIS_URL": url})
    assert "hunter2" not in problem
    assert ":***@" in problem


@pytest.mark.parametrize("url", ["redis://:pw@cache.internal:6380/3", "unix:///run/redis.sock",
                                 "redis://[::1]:6379", "rediss://cache?ssl_cert_reqs=none"])
def test_well_formed_redis_urls(env: dict[str, str], url: str) -> None:
    assert load_config(env | {"REDIS_URL": url}).redis_url == url


def test_every_new_problem_at_once(env: dict[str, str]) -> None:
    found = problems(env | {"QUESTBOT_METRICS_PORT": "99999", "PORT": "0",
                            "GITHUB_API_URL": "https://", "QUESTBOT_REDELIVERY_MAX": "x"})
    assert [problem.split("=", 1)[0] for problem in found] == [
        "GITHUB_API_URL", "PORT", "QUESTBOT_METRICS_PORT", "QUESTBOT_REDELIVERY_MAX"]


# --- .env ---------------------------------------------------------------------------------------


def test_env_file_is_read_under_the_environment(
    env: dict[str, str], key_pem: str, tmp_path: Path
) -> None:
    key = tmp_path / "app.private-key.pem"
    key.write_text(key_pem)
    dotenv = tmp_path / ".env"
    dotenv.write_text(f"# written by hand\nGITHUB_APP_ID=777\nGITHUB_PRIVATE_KEY_PATH={key}\n"
                      f"export GITHUB_WEBHOOK_SECRET='from the file, long enough'\nPORT=7000\n")
    config = load_config({}, env_file=dotenv)
    assert (config.github_app_id, config.port) == ("777", 7000)
    assert config.github_webhook_secret.get_secret_value() == "from the file, long enough"
    assert config.github_private_key.get_secret_value() == key_pem
    # the environment wins, variable by variable; an empty one lets the file's show through
    config = load_config({"PORT": "9000", "GITHUB_APP_ID": ""}, env_file=dotenv)
    assert (config.github_app_id, config.port) == ("777", 9000)


def test_the_environment_key_wins_over_the_file_key_whole(
    env: dict[str, str], key_pem: str, tmp_path: Path
) -> None:
    dotenv = tmp_path / ".env"
    dotenv.write_text(f"GITHUB_PRIVATE_KEY_PATH={tmp_path / 'gone.pem'}\n")
    config = load_config(env, env_file=dotenv)  # env holds GITHUB_PRIVATE_KEY: no "both set"
    assert config.github_private_key.get_secret_value() == key_pem


def test_a_bad_value_from_the_file_says_so(env: dict[str, str], tmp_path: Path) -> None:
    dotenv = tmp_path / ".env"
    dotenv.write_text("QUESTBOT_METRICS_PORT=99999\nthis line is no setting\n")
    assert problems(env, env_file=dotenv) == [
        f"{dotenv} line 2 is not NAME=value; write it as NAME=value (quote a value with "
        "spaces), or start it with # to keep it as a comment",
        f"QUESTBOT_METRICS_PORT=99999 (from {dotenv}): is not a port number; set it to a TCP "
        "port from 1 to 65535, or unset it for 9100",
    ]


def test_an_unreadable_env_file_is_a_problem(env: dict[str, str], tmp_path: Path) -> None:
    assert only_problem(env, env_file=tmp_path).startswith(f"{tmp_path} cannot be read")
    assert load_config(env, env_file=tmp_path / "absent").port == 8080


def test_process_environment_over_dot_env_in_the_working_directory(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / ".env").write_text("PORT=7100\nQUESTBOT_METRICS_PORT=7200\n")
    monkeypatch.chdir(tmp_path)
    for name in os.environ.copy():
        if name.startswith(("GITHUB_", "QUESTBOT_")) or name in ("PORT", "REDIS_URL"):
            monkeypatch.delenv(name)
    for name, value in (env | {"QUESTBOT_METRICS_PORT": "7300"}).items():
        monkeypatch.setenv(name, value)
    config = load_config()
    assert (config.port, config.metrics_port) == (7100, 7300)
    other = tmp_path / "other.env"
    other.write_text("PORT=7400\n")
    monkeypatch.setenv("QUESTBOT_ENV_FILE", str(other))
    assert load_config().port == 7400


# --- the model agent's endpoint ----------------------------------------------------------------


def test_no_model_unless_one_is_named(env: dict[str, str]) -> None:
    assert endpoint_from(load_config(env)) is None


def test_the_model_endpoint_comes_from_the_environment(env: dict[str, str]) -> None:
    config = load_config({**env, "QUESTBOT_MODEL": "claude-sonnet-4-5",
                          "QUESTBOT_MODEL_PROTOCOL": "Anthropic",
                          "QUESTBOT_MODEL_URL": "http://127.0.0.1:9000",
                          "QUESTBOT_MODEL_API_KEY": "sk-ant-model-key",
                          "QUESTBOT_MODEL_PRICES": "3, 15"})
    endpoint = endpoint_from(config)
    assert endpoint is not None
    assert (endpoint.wire.value, endpoint.base_url, endpoint.model) == (
        "anthropic", "http://127.0.0.1:9000", "claude-sonnet-4-5")
    assert endpoint.api_key is not None
    assert endpoint.api_key.get_secret_value() == "sk-ant-model-key"
    assert endpoint.prices is not None and endpoint.prices.cost(1_000_000, 0) == 3
    assert "sk-ant-model-key" not in repr(config) and "sk-ant-model-key" not in repr(endpoint)


def test_a_local_model_needs_no_key(env: dict[str, str]) -> None:
    endpoint = endpoint_from(load_config({**env, "QUESTBOT_MODEL": "llama3.1",
                                          "QUESTBOT_MODEL_URL": "http://ollama:11434/v1"}))
    assert endpoint is not None and endpoint.api_key is None
    assert endpoint.wire.value == "openai"


def test_a_real_deployments_model_settings(env: dict[str, str]) -> None:
    """Issue 25: the request timeout, the output limit, the context window, the retries and
    a stage's deadline come from the environment (a small llama.cpp server here)."""
    config = load_config({**env, "QUESTBOT_MODEL": "qwen2.5-coder",
                          "QUESTBOT_MODEL_URL": "http://127.0.0.1:8080/v1",
                          "QUESTBOT_MODEL_TIMEOUT": "120", "QUESTBOT_MODEL_MAX_TOKENS": "2048",
                          "QUESTBOT_MODEL_CONTEXT_WINDOW": "32768",
                          "QUESTBOT_MODEL_RETRIES": "2", "QUESTBOT_MODEL_STAGE_SECONDS": "900",
                          "QUESTBOT_MODEL_PROBE": "false"})
    endpoint = endpoint_from(config)
    assert endpoint is not None and not config.model_probe
    assert (endpoint.request_timeout_seconds, endpoint.max_tokens, endpoint.context_window,
            endpoint.retries, endpoint.stage_seconds) == (120, 2048, 32768, 2, 900)
    assert endpoint.chosen.context_window == 32768
    assert endpoint.chosen.limit_field(endpoint.base_url) == "max_tokens"
    defaults = endpoint_from(load_config({**env, "QUESTBOT_MODEL": "gpt-4.1-mini"}))
    assert defaults is not None
    assert (defaults.request_timeout_seconds, defaults.max_tokens, defaults.context_window,
            defaults.retries, defaults.stage_seconds) == (300, 8192, None, 4, 1800)
    assert defaults.chosen.limit_field(defaults.base_url) == "max_completion_tokens"


@pytest.mark.parametrize(("extra", "expected"), [
    ({"QUESTBOT_MODEL_API_KEY": "sk-x"}, "QUESTBOT_MODEL is not set, but"),
    ({"QUESTBOT_MODEL": "m", "QUESTBOT_MODEL_TIMEOUT": "0"},
     "QUESTBOT_MODEL_TIMEOUT=0"),
    ({"QUESTBOT_MODEL": "m", "QUESTBOT_MODEL_MAX_TOKENS": "lots"},
     "QUESTBOT_MODEL_MAX_TOKENS=lots: is not a whole number"),
    ({"QUESTBOT_MODEL": "m", "QUESTBOT_MODEL_CONTEXT_WINDOW": "100"},
     "QUESTBOT_MODEL_CONTEXT_WINDOW=100: is not between 1024"),
    ({"QUESTBOT_MODEL": "m", "QUESTBOT_MODEL_RETRIES": "99"},
     "QUESTBOT_MODEL_RETRIES=99: is not between 0 and 20"),
    ({"QUESTBOT_MODEL": "m", "QUESTBOT_MODEL_STAGE_SECONDS": "5"},
     "QUESTBOT_MODEL_STAGE_SECONDS=5"),
    ({"QUESTBOT_MODEL": "m", "QUESTBOT_MODEL_PROBE": "maybe"},
     "QUESTBOT_MODEL_PROBE=maybe: is not true or false"),
    ({"QUESTBOT_MODEL": "m", "QUESTBOT_MODEL_PROTOCOL": "gemini"},
     "QUESTBOT_MODEL_PROTOCOL=gemini: is not openai or anthropic"),
    ({"QUESTBOT_MODEL": "m", "QUESTBOT_MODEL_URL": "ftp://x"},
     "QUESTBOT_MODEL_URL=ftp://x: is not an http(s) URL"),
    ({"QUESTBOT_MODEL": "m", "QUESTBOT_MODEL_PRICES": "3"}, "is not two numbers of zero or more"),
    ({"QUESTBOT_MODEL": "m", "QUESTBOT_MODEL_PRICES": "a,b"}, "is not two numbers"),
])
def test_model_problems_say_what_to_do(env: dict[str, str], extra: dict[str, str],
                                       expected: str) -> None:
    problem = only_problem({**env, **extra})
    assert expected in problem
    assert "sk-x" not in problem


def test_the_tools_read_redis_url_as_the_processes_do(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``python -m bot status`` and ``review`` need Redis and none of the App's settings:
    ``redis_url`` is the environment's, else ``./.env``'s, else the default."""
    from bot.settings.process.environment import REDIS_DEFAULT, redis_url

    dotenv = tmp_path / ".env"
    monkeypatch.setenv("QUESTBOT_ENV_FILE", str(dotenv))
    monkeypatch.delenv("REDIS_URL", raising=False)
    assert redis_url() == REDIS_DEFAULT
    dotenv.write_text("REDIS_URL=redis://file-host:6380/2\n")
    assert redis_url() == "redis://file-host:6380/2"
    monkeypatch.setenv("REDIS_URL", "redis+cluster://env-host:7000/0")
    assert redis_url() == "redis+cluster://env-host:7000/0"


def test_the_look_for_restored_repositories_is_every_ten_minutes_unless_set(
        env: dict[str, str]) -> None:
    """``bot.repository.restorable``: at most 50 repositories a look, so 300 requests an hour
    at the default; a minute is the shortest (3,000 an hour at most)."""
    assert load_config(env).restored_check_s == 600.0
    assert load_config(env | {"QUESTBOT_RESTORED_CHECK_S": "60"}).restored_check_s == 60.0
