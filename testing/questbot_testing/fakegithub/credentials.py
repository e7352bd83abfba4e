"""Who is asking the fake GitHub, and what they may do: the App's JWT and its installation
tokens — minted, revoked and expired as GitHub does them (BEHAVIOUR.md §13) — and each token's
permissions checked against what the operation needs (``fakegithub.permissions``)."""

from __future__ import annotations

import secrets
import time
from typing import TYPE_CHECKING

from aiohttp import web

from questbot_testing.fakegithub import permissions
from questbot_testing.fakegithub.calls import SUSPENDED, GitHubError
from questbot_testing.fakegithub.keys import JWTRejected, KeyPair, verify_app_jwt
from questbot_testing.fakegithub.state import Repository, Token, World

if TYPE_CHECKING:
    from questbot_testing.fakegithub.server import Exchange


class Credentials:
    """Mixed into :class:`~.server.FakeGitHub`."""

    world: World
    keys: KeyPair
    violations: list[str]
    denied: list[str]

    def installation_token(self, installation_id: int, *, lifetime: float = 3600,
                           permissions: dict[str, str] | None = None) -> str:
        """Mint an installation token directly, for tests that do not exercise the JWT flow;
        it may do what the App may (``world.app_permissions``) unless ``permissions`` narrow
        it."""
        token = "ghs_" + secrets.token_urlsafe(27)[:36]
        granted = dict(self.world.app_permissions if permissions is None else permissions)
        self.world.tokens[token] = Token(token, installation_id, time.time() + lifetime,
                                         granted)
        return token

    def revoke_tokens(self, installation_id: int | None = None) -> int:
        """Revoke every installation token (of one installation, when given), as GitHub does
        when the App is reinstalled or a token is revoked: each is answered 401 ``Bad
        credentials`` from now on (BEHAVIOUR.md §13). How many were revoked."""
        gone = [t for t, held in self.world.tokens.items()
                if installation_id is None or held.installation_id == installation_id]
        for token in gone:
            self.world.revoked[token] = self.world.tokens.pop(token)
        return len(gone)

    def expire_tokens(self, installation_id: int | None = None) -> None:
        """Make the installation tokens expire now, whatever ``expires_at`` said (a clock
        ahead of GitHub's, an hour that passed): they are answered 401 (§13)."""
        for held in self.world.tokens.values():
            if installation_id is None or held.installation_id == installation_id:
                held.expires_at = time.time() - 1

    def _token(self, request: web.Request) -> Token | None:
        return self.world.tokens.get(request.headers.get("Authorization", "").partition(" ")[2])

    def _permitted(self, request: web.Request, exchange: Exchange, operation: str,
                   repo: Repository | None, params: dict[str, str]) -> None:
        """403 ``Resource not accessible by integration`` unless the token's permissions
        cover ``operation`` (BEHAVIOUR.md §13, §17; ``fakegithub.permissions``)."""
        token = self._token(request)
        assert token is not None  # authenticated as an installation
        if operation in permissions.THREAD:
            need = permissions.thread_need(operation, _on_pull_request(repo, params))
        elif operation in permissions.OPERATIONS:
            need = permissions.OPERATIONS[operation]
        else:
            self.violations.append(f"{exchange.method} {exchange.path}: the fake does not know "
                                   f"which permission {operation} needs")
            return
        met = permissions.used(token.permissions, need)
        if met is None:
            self.denied.append(f"{exchange.method} {exchange.path} ({operation}) needs "
                               f"{_wording(need)}")
            raise GitHubError(403, permissions.NOT_ACCESSIBLE)
        exchange.permissions = met

    def _authenticate(self, request: web.Request, raw_path: str) -> int | None:
        """Check credentials; returns the installation id a token belongs to (None for JWTs)."""
        header = request.headers.get("Authorization", "")
        scheme, _, credential = header.partition(" ")
        needs_jwt = (
            raw_path == "/app"
            or raw_path.startswith("/app/")
            or (raw_path.startswith("/repos/") and raw_path.endswith("/installation"))
        )
        if raw_path.startswith("/app-manifests/"):
            return None
        if not credential:
            raise GitHubError(401, "Requires authentication")
        if needs_jwt:
            if scheme.lower() != "bearer":
                raise GitHubError(401, "A JSON web token could not be decoded")
            try:
                public = self.keys.public_pem
                verify_app_jwt(credential, app_id=self.world.app_id, public_pem=public)
            except JWTRejected as exc:
                raise GitHubError(401, str(exc)) from exc
            return None
        token = self.world.tokens.get(credential)
        if scheme.lower() not in ("token", "bearer") or token is None:
            raise GitHubError(401, "Bad credentials")
        if token.expires_at < time.time():
            raise GitHubError(401, "Bad credentials")
        installation = self.world.installations.get(token.installation_id)
        if installation is not None and installation.suspended_at:
            raise GitHubError(403, SUSPENDED)  # BEHAVIOUR §23
        return token.installation_id


def _on_pull_request(repo: Repository | None, params: dict[str, str]) -> bool:
    """Whether an issue-thread operation is on a pull request's thread."""
    if repo is None:
        return False
    number = params.get("issue_number")
    if number is None and "comment_id" in params:
        comment = repo.comments.get(int(params["comment_id"]))
        number = str(comment.issue_number) if comment is not None else None
    issue = repo.issues.get(int(number)) if number is not None and number.isdigit() else None
    return issue is not None and issue.is_pull_request


def _wording(need: permissions.Need) -> str:
    return " and ".join(" or ".join(f"{p}: {lvl}" for p, lvl in clause) for clause in need)
