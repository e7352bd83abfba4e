"""What a configuration problem says: the variable, the problem, and what to do (a part of
``bot.settings.process``).

Each variable has a hint, the fix in a sentence. A problem names the variable and the value it
holds, and says so when the value came from ``.env`` (``PORT=x (from .env)``) — but never
quotes a secret, nor a password inside a URL (``checks.shown_url``). A validator whose message
is a whole sentence, hint included (``_Whole``, ``model.WholeSentence``), is printed as it is.
``ConfigError`` lists every problem at once: fixing a deployment one restart per variable is
slow and discouraging.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bot.errors import ConfigurationError
from bot.settings.process import checks
from bot.settings.process.model import MODEL_HINTS, MODEL_SECRETS, WholeSentence

_HINTS = {
    "GITHUB_APP_ID": "set it to the App's numeric ID (or client ID) from the App's settings page",
    "GITHUB_PRIVATE_KEY": "put the PEM text of the App's private key in it, or unset it and "
    "put the path of the .pem file in GITHUB_PRIVATE_KEY_PATH",
    "GITHUB_PRIVATE_KEY_PATH": "set it to the path of the App's .pem file, or put the PEM "
    "text in GITHUB_PRIVATE_KEY",
    "GITHUB_WEBHOOK_SECRET": "set it to the webhook secret configured on the GitHub App; "
    "questbot refuses to run without one, since it could not tell GitHub's deliveries from "
    "anyone else's",
    "GITHUB_APP_SLUG": "set it to the App's slug (the last part of https://github.com/apps/"
    "SLUG), or unset it",
    "REDIS_URL": "set it to a redis://, rediss://, unix:// or redis+cluster:// URL, or unset "
    "it for "
    "redis://127.0.0.1:6379/0",
    "GITHUB_API_URL": "set it to the REST API root (https://api.github.com, or "
    "https://HOST/api/v3 for GitHub Enterprise Server), or unset it",
    "PORT": "set it to a TCP port from 1 to 65535, or unset it for 8080",
    "QUESTBOT_METRICS_PORT": "set it to a TCP port from 1 to 65535, or unset it for 9100",
    "QUESTBOT_DURABLE_ACKS": "set it to true or false, or unset it for true",
    "QUESTBOT_SANDBOX": "set it to bubblewrap (the default), or to unsafe-off to run "
    "repository code and agents unconfined, as the worker's user, with its files and network",
    "QUESTBOT_SANDBOX_READONLY": "set it to absolute directory paths separated by ':', or "
    "unset it",
    "QUESTBOT_SANDBOX_MEMORY_MB": "set it to a whole number of MiB (at least 64), or unset it "
    "for 4096",
    "QUESTBOT_SANDBOX_PROCESSES": "set it to how many processes and threads a check may have "
    "at once (at least 16), or unset it for 1024",
    "QUESTBOT_REDELIVERY": "set it to true or false, or unset it for true",
    "QUESTBOT_REDELIVERY_INTERVAL": "set it to the seconds between two redelivery passes, "
    "from 10 to 86400, or unset it for 300",
    "QUESTBOT_REDELIVERY_HOURS": "set it to how many hours back a redelivery pass looks, "
    "from 1 to 72 (GitHub keeps deliveries three days), or unset it for 24",
    "QUESTBOT_REDELIVERY_MAX": "set it to the most redeliveries one pass asks for, from 1 to "
    "1000, or unset it for 50",
    "QUESTBOT_PUBLIC_URL": "set it to the web process's address as reviewers reach it "
    "(https://HOST, no path), or unset it",
}
_HINTS.update(MODEL_HINTS)
_SECRET = frozenset({"GITHUB_PRIVATE_KEY", "GITHUB_WEBHOOK_SECRET"}) | MODEL_SECRETS
_URLS = frozenset({"REDIS_URL", "GITHUB_API_URL"})
_REGISTERED = frozenset({"GITHUB_APP_ID", "GITHUB_WEBHOOK_SECRET"})


class ConfigError(ConfigurationError):
    """The environment cannot configure questbot; ``problems`` lists each variable to fix."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = tuple(problems)
        listed = "\n".join(f"- {problem}" for problem in self.problems)
        super().__init__(f"questbot cannot start; fix the environment:\n{listed}")


class _Whole(ValueError):
    """A validator's message that is a whole sentence, hint included: print it as it is."""


def describe(error: Any, environ: Mapping[str, str], origins: Mapping[str, Path]) -> str:
    """The line of ``ConfigError`` for one of pydantic's ``error``s: the variable, what is
    wrong and its hint, ``environ`` the values read and ``origins`` those from a file."""
    name = str(error["loc"][0]) if error["loc"] else "environment"
    hint = _HINTS.get(name, "check its value")
    value = environ.get(name) or None
    where = f" (from {origins[name]})" if name in origins else ""
    if error["type"] == "missing":
        registered = " (python -m bot register writes it to .env)" if name in _REGISTERED else ""
        return f"{name} is not set; {hint}{registered}"
    cause = error.get("ctx", {}).get("error")
    if isinstance(cause, _Whole | WholeSentence):
        return str(cause)
    problem = str(cause) if cause is not None else error["msg"].lower()
    if name in _SECRET or value is None:
        shown = name
    else:
        shown = f"{name}={_cut(checks.shown_url(value) if name in _URLS else value)}"
    return f"{shown}{where}: {problem}; {hint}"


def _cut(value: str, limit: int = 80) -> str:
    return value if len(value) <= limit else value[: limit - 1] + "…"
