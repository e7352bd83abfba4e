"""Saving a new App's credentials: the private key in a file of its own, the rest in ``.env``.

The key goes to ``KEY_DIR/<slug>.private-key.pem`` (GitHub's own download is named
``<slug>.<date>.private-key.pem``), mode 0600 from the moment it exists: it signs for the App.
``.env`` gets ``GITHUB_APP_ID``, ``GITHUB_APP_SLUG``, ``GITHUB_WEBHOOK_SECRET`` and
``GITHUB_PRIVATE_KEY_PATH`` (absolute, so the processes may start from anywhere), plus
``GITHUB_API_URL`` when it is not github.com's; a ``GITHUB_PRIVATE_KEY`` already there is
removed, since the two key variables together are refused. Everything else in ``.env`` stays.
Probot puts the PEM itself in ``.env``, quoted; a file of its own is simpler to rotate and to
keep out of a process's environment.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bot.github.manifest import API_URL, Registration
from bot.register.errors import RegistrationError
from bot.settings.process.envfile import update_env_file, write_private


@dataclass(frozen=True)
class Saved:
    """Where a registration's credentials went, and where the App is installed from."""

    registration: Registration
    env_file: Path
    key_path: Path

    @property
    def install_url(self) -> str:
        """GitHub's page for installing the App on accounts and repositories."""
        return f"{self.registration.html_url.rstrip('/')}/installations/new"


def save_registration(registration: Registration, *, env_file: Path, key_dir: Path,
                      api_url: str) -> Saved:
    """Write the key file and ``.env``; a ``RegistrationError`` if GitHub sent no webhook
    secret (questbot refuses to run without one)."""
    secret = registration.webhook_secret
    if secret is None or not secret.get_secret_value():
        raise RegistrationError(
            f"GitHub made the App {registration.slug} without a webhook secret; set one on "
            f"{registration.html_url} (App settings, Webhook) and put it in GITHUB_WEBHOOK_SECRET")
    key_path = (key_dir / f"{registration.slug}.private-key.pem").resolve()
    write_private(key_path, registration.pem.get_secret_value())
    updates = {
        "GITHUB_APP_ID": str(registration.id),
        "GITHUB_APP_SLUG": registration.slug,
        "GITHUB_WEBHOOK_SECRET": secret.get_secret_value(),
        "GITHUB_PRIVATE_KEY_PATH": str(key_path),
    }
    if api_url.rstrip("/") != API_URL:
        updates["GITHUB_API_URL"] = api_url.rstrip("/")
    update_env_file(env_file, updates, remove=("GITHUB_PRIVATE_KEY",))
    return Saved(registration, env_file, key_path)
