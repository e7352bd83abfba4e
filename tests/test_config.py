"""Process configuration: defaults, every variable's problems listed at once, secrets hidden."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from bot.config import Config, ConfigError, load_config

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


def problems(environ: dict[str, str]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_config(environ)
    return list(caught.value.problems)


def only_problem(environ: dict[str, str]) -> str:
    [problem] = problems(environ)
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
        "App's settings page",
        "neither GITHUB_PRIVATE_KEY nor GITHUB_PRIVATE_KEY_PATH is set; put the PEM text of "
        "the App's private key in GITHUB_PRIVATE_KEY, or the path of its .pem file in "
        "GITHUB_PRIVATE_KEY_PATH",
        "GITHUB_WEBHOOK_SECRET is not set; set it to the webhook secret configured on the "
        "GitHub App; questbot refuses to run without one, since it could not tell GitHub's "
        "deliveries from anyone else's",
    ]


@pytest.mark.parametrize("value", [None, "", "   "])
def test_the_webhook_secret_is_required(env: dict[str, str], value: str | None) -> None:
    del env["GITHUB_WEBHOOK_SECRET"]
    if value is not None:
        env["GITHUB_WEBHOOK_SECRET"] = value
    assert only_problem(env).startswith("GITHUB_WEBHOOK_SECRET")


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


# --- the model agent's endpoint ----------------------------------------------------------------


def test_no_model_unless_one_is_named(env: dict[str, str]) -> None:
    assert load_config(env).model_endpoint is None


def test_the_model_endpoint_comes_from_the_environment(env: dict[str, str]) -> None:
    config = load_config({**env, "QUESTBOT_MODEL": "claude-sonnet-4-5",
                          "QUESTBOT_MODEL_PROTOCOL": "Anthropic",
                          "QUESTBOT_MODEL_URL": "http://127.0.0.1:9000",
                          "QUESTBOT_MODEL_API_KEY": "sk-ant-model-key",
                          "QUESTBOT_MODEL_PRICES": "3, 15"})
    endpoint = config.model_endpoint
    assert endpoint is not None
    assert (endpoint.wire.value, endpoint.base_url, endpoint.model) == (
        "anthropic", "http://127.0.0.1:9000", "claude-sonnet-4-5")
    assert endpoint.api_key is not None
    assert endpoint.api_key.get_secret_value() == "sk-ant-model-key"
    assert endpoint.prices is not None and endpoint.prices.cost(1_000_000, 0) == 3
    assert "sk-ant-model-key" not in repr(config) and "sk-ant-model-key" not in repr(endpoint)


def test_a_local_model_needs_no_key(env: dict[str, str]) -> None:
    endpoint = load_config({**env, "QUESTBOT_MODEL": "llama3.1",
                            "QUESTBOT_MODEL_URL": "http://ollama:11434/v1"}).model_endpoint
    assert endpoint is not None and endpoint.api_key is None
    assert endpoint.wire.value == "openai"


@pytest.mark.parametrize(("extra", "expected"), [
    ({"QUESTBOT_MODEL_API_KEY": "sk-x"}, "QUESTBOT_MODEL is not set, but"),
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
