"""What ``python -m bot register`` is told, checked whole like the processes' ``Config``.

``GITHUB_URL`` (default ``https://github.com``; a GitHub Enterprise Server's ``https://HOST``)
says where the App is made; ``GITHUB_API_URL`` where the code is exchanged (default: derived
from ``GITHUB_URL``). Both are read from the environment over ``.env``, like every setting.
The command line says the rest: where GitHub should send webhooks, an organization to own the
App, the App's name, the local page's address, and where the credentials go.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TypeVar

from bot.github.manifest import GITHUB_URL, api_url_for
from bot.settings.process import checks
from bot.settings.process.environment import settings_values
from bot.settings.process.problems import ConfigError

T = TypeVar("T")


@dataclass(frozen=True)
class RegisterOptions:
    github_url: str = GITHUB_URL
    api_url: str | None = None
    """``None``: ``bot.github.manifest.api_url_for(github_url)``."""
    manifest: Path = Path("app.yml")
    webhook_url: str | None = None
    """``None``: the one in ``app.yml``."""
    name: str | None = None
    org: str | None = None
    host: str = "127.0.0.1"
    port: int = 3000
    """0: any free port (tests)."""
    env_file: Path = Path(".env")
    key_dir: Path = Path(".")

    @property
    def rest_url(self) -> str:
        return self.api_url or api_url_for(self.github_url)


def register_options(
    *, webhook_url: str | None = None, name: str | None = None, org: str | None = None,
    host: str = "127.0.0.1", port: str | int = 3000, manifest: Path = Path("app.yml"),
    env_file: Path = Path(".env"), key_dir: Path = Path("."),
    environ: Mapping[str, str] | None = None,
) -> RegisterOptions:
    """The options, or a ``ConfigError`` listing every bad one with its fix. ``environ``
    (default: the process environment over ``env_file``) gives ``GITHUB_URL`` and
    ``GITHUB_API_URL``."""
    values, origins, problems = settings_values(
        environ, None if environ is not None else env_file)

    def checked(label: str, fix: str, check: Callable[[], T], default: T) -> T:
        try:
            return check()
        except ValueError as exc:
            problems.append(f"{label}: {exc}; {fix}")
            return default

    github_url, api_url = values.get("GITHUB_URL"), values.get("GITHUB_API_URL")
    if github_url:
        github_url = checked(
            _shown("GITHUB_URL", github_url, origins), "set it to GitHub's address "
            "(https://github.com, or https://HOST for GitHub Enterprise Server), or unset it",
            partial(checks.http_url, github_url, path_allowed=False), github_url)
    if api_url:
        api_url = checked(
            _shown("GITHUB_API_URL", api_url, origins), "set it to the REST API root "
            "(https://api.github.com, or https://HOST/api/v3), or unset it",
            partial(checks.http_url, api_url), api_url)
    if webhook_url is not None:
        webhook_url = checked(
            f"--webhook-url {webhook_url}", "give the https:// address GitHub should send "
            "webhooks to, ending in /webhook", partial(checks.http_url, webhook_url), webhook_url)
    number = checked(f"--port {port}", "give a TCP port from 1 to 65535 (or 0 for any free one)",
                     lambda: 0 if str(port).strip() == "0" else checks.port(port), 0)
    if org is not None and not org.replace("-", "").isalnum():
        problems.append(f"--org {org}: is not an organization's login; give the login as it "
                        "is in https://github.com/LOGIN")
    if problems:
        raise ConfigError(problems)
    return RegisterOptions(github_url=github_url or GITHUB_URL, api_url=api_url or None,
                           manifest=manifest, webhook_url=webhook_url, name=name, org=org,
                           host=host, port=number, env_file=env_file, key_dir=key_dir)


def _shown(name: str, value: str, origins: Mapping[str, Path]) -> str:
    where = f" (from {origins[name]})" if name in origins else ""
    return f"{name}={value}{where}"
