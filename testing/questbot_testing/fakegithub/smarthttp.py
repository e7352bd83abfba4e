"""git's smart HTTP for every repository of the fake, where github.com serves it:
``<fake url>/<owner>/<name>.git``.

Real git answers: ``git http-backend`` (git's own CGI) runs over a bare repository the fake
keeps per repository, so a client's fetch, clone and push speak the real protocol, shallow and
partial ones included. The fake's own store (``Repository.git`` and ``refs``) stays the one
truth, so the REST API and git see the same repository:

1. **before each request** the objects the fake made since the last one (blobs, trees and
   commits hashed as git hashes them, ``fakegithub.gitstore``) are written into the bare
   repository as loose objects, and its refs are set to the fake's;
2. **a push** runs ``git-receive-pack`` with a pre-receive hook that lists the paths each ref
   update changes and asks the fake (over loopback HTTP, ``SmartHTTP.hook``) which GitHub
   refuses (``rules.push_refusal``: protected default branch, workflow files without the
   ``workflows`` permission, deleting the default branch), so a refused push changes
   nothing. GitHub names the rule as the ref's rejection reason; here the hook prints it
   (git shows it as ``remote: …``) and git's reason reads ``pre-receive hook declined``;
3. **after a push** the objects it brought are read back (``git cat-file --batch``) into the
   fake's store, the refs it moved are moved in the fake, and each sends what GitHub sends
   for a push (``ref_moved``: the ``push`` webhook, ``synchronize`` for an open pull request).

Authentication is GitHub's (``rules``, BEHAVIOUR §12): HTTP basic with an installation token as
the password. A private repository wants a token of the installation that holds it (401
without one, an unknown or expired token 401, another installation's 404); a public one is read
by anyone and pushed to only with such a token (401 without, 403 for another installation's or
one without ``contents: write``). Only the smart endpoints are served (GitHub has no dumb HTTP).

Every request is logged in ``FakeGitHub.git_requests``, apart from the REST calls in
``FakeGitHub.requests``: what costs API rate limit and what costs a git transfer are counted
separately.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import itertools
import os
import re
import secrets
import shutil
import struct
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from aiohttp import web

from questbot_testing.fakegithub import rules
from questbot_testing.fakegithub.permissions import READ, WRITE, covers
from questbot_testing.fakegithub.state import Repository, Token

if TYPE_CHECKING:
    from questbot_testing.fakegithub.server import Exchange, FakeGitHub

ZERO = "0" * 40
PATH = re.compile(r"^/(?P<owner>[^/]+)/(?P<name>[^/]+?)\.git/(?P<rest>info/refs|git-upload-pack"
                  r"|git-receive-pack)$")
SERVICES = {"info/refs": "git/info-refs", "git-upload-pack": "git/upload-pack",
            "git-receive-pack": "git/receive-pack"}
HOOK_ENV = "FAKEGITHUB_PUSH_HOOK"
HOOK_PATH = "/_fake/git-hook/"
HOOK = f"""#!/bin/sh
exec '{sys.executable}' -SE '{Path(__file__).with_name("pre_receive.py")}'
"""
"""The bare repositories' pre-receive hook: ``questbot_testing/fakegithub/pre_receive.py``, run
without the site packages (it imports the standard library only, once per push)."""


@dataclass
class _Push:
    """What the hook of one push is judged by."""

    repo: Repository
    workflows: bool


@dataclass
class _Mirror:
    """The bare repository that serves one of the fake's repositories, and what of the fake's
    store it holds already."""

    path: Path
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    blobs: int = 0
    trees: int = 0
    commits: int = 0
    refs: dict[str, str] = field(default_factory=dict)
    """The refs as last written from the fake."""


class GitAnswer(Exception):
    """A refusal before git runs: the status and GitHub's text."""

    def __init__(self, status: int, text: str, *, challenge: bool = False) -> None:
        super().__init__(text)
        self.status, self.text, self.challenge = status, text, challenge

    def response(self) -> web.Response:
        headers = {"WWW-Authenticate": rules.GIT_REALM} if self.challenge else {}
        return web.Response(status=self.status, text=self.text, headers=headers)


class SmartHTTP:
    """The git endpoints of one ``FakeGitHub``."""

    def __init__(self, fake: FakeGitHub) -> None:
        self.fake = fake
        self._root: Path | None = None
        self._mirrors: dict[str, _Mirror] = {}
        self._pushes: dict[str, _Push] = {}
        """Pushes under way, by the nonce their hook calls back with."""

    @staticmethod
    def serves(raw_path: str) -> bool:
        return raw_path.endswith((".git/info/refs", ".git/git-upload-pack",
                                  ".git/git-receive-pack"))

    def close(self) -> None:
        if self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)
            self._root = None
            self._mirrors.clear()

    # -- one request -----------------------------------------------------------------------

    async def hook(self, request: web.Request) -> web.Response:
        """The pre-receive hook's question: which of a push's ref updates GitHub refuses."""
        push = self._pushes.get(request.path.removeprefix(HOOK_PATH))
        if push is None:
            return web.Response(status=404)
        repo, refusals = push.repo, []
        for update in await request.json():
            why = rules.push_refusal(
                update["ref"], update["old"], update["new"], update["paths"],
                default_ref=f"refs/heads/{repo.default_branch}",
                protection=list(repo.required_checks), merge_queue=repo.merge_queue,
                workflows=push.workflows)
            if why is not None:
                refusals.append(why)
        return web.json_response({"refusals": refusals})

    async def handle(self, request: web.Request, exchange: Exchange) -> web.StreamResponse:
        exchange.operation_id = "git"
        try:
            response = await self._handle(request, exchange)
        except GitAnswer as answer:
            response = answer.response()
        exchange.status = response.status
        return response

    async def _handle(self, request: web.Request, exchange: Exchange) -> web.Response:
        found = PATH.match(request.path)
        if found is None:
            raise GitAnswer(404, "Not Found\n")
        rest = found["rest"]
        exchange.operation_id = SERVICES[rest]
        service = request.query.get("service") if rest == "info/refs" else rest
        if service not in ("git-upload-pack", "git-receive-pack"):
            raise GitAnswer(403, "Dumb HTTP is not supported; use git's smart protocol.\n")
        if (rest == "info/refs") != (request.method == "GET"):
            raise GitAnswer(405, "Method Not Allowed\n")
        repo = self.fake.world.repository(f"{found['owner']}/{found['name']}")
        if repo is None:
            raise GitAnswer(404, rules.GIT_NOT_FOUND)
        token = self._token(request)
        login = self._allow(repo, token, push=service == "git-receive-pack")
        if repo.archived and service == "git-receive-pack":  # BEHAVIOUR §23
            raise GitAnswer(403, "This repository was archived so it is read-only.\n")
        body = await request.read()
        mirror = await self._mirror(repo)
        async with mirror.lock:
            await self._export(repo, mirror)
            status, headers, payload = await self._backend(
                request, mirror, repo, rest, body, login, token)
            if service == "git-receive-pack" and rest != "info/refs":
                await self._import(repo, mirror, pusher=login)
        return web.Response(status=status, body=payload, headers=headers)

    def _token(self, request: web.Request) -> Token | None:
        """The installation token of the request's basic credentials; ``None`` without any;
        401 for one GitHub does not know or that expired."""
        header = request.headers.get("Authorization", "")
        scheme, _, credential = header.partition(" ")
        if not credential:
            return None
        if scheme.lower() != "basic":
            raise GitAnswer(401, rules.GIT_BAD_CREDENTIALS, challenge=True)
        try:
            user, _, password = base64.b64decode(credential, validate=True).decode().partition(
                ":")
        except (binascii.Error, UnicodeDecodeError) as exc:
            raise GitAnswer(401, rules.GIT_BAD_CREDENTIALS, challenge=True) from exc
        token = self.fake.world.tokens.get(password or user)
        if token is None or token.expires_at < time.time():
            raise GitAnswer(401, rules.GIT_BAD_CREDENTIALS, challenge=True)
        return token

    def _allow(self, repo: Repository, token: Token | None, *, push: bool) -> str:
        """Who acts, if the token may read (and for a push, write) ``repo``; else GitHub's
        refusal."""
        login = f"{self.fake.world.app_slug}[bot]"
        ours = token is not None and token.installation_id == repo.installation_id
        if ours and token is not None and not covers(token.permissions, "contents", READ):
            ours = False  # an installation token without Contents sees no code
        if not ours and (repo.private or (push and token is None)):
            if token is None:
                raise GitAnswer(401, rules.GIT_BAD_CREDENTIALS, challenge=True)
            raise GitAnswer(404, rules.GIT_NOT_FOUND)
        if push and not (ours and token is not None
                         and covers(token.permissions, "contents", WRITE)):
            raise GitAnswer(403, rules.git_push_denied(repo.full_name, login))
        return login

    async def _backend(self, request: web.Request, mirror: _Mirror, repo: Repository,
                       rest: str, body: bytes, login: str,
                       token: Token | None) -> tuple[int, dict[str, str], bytes]:
        """Run ``git http-backend`` for the request; its status, headers and body."""
        assert self._root is not None
        nonce = secrets.token_hex(16)
        self._pushes[nonce] = _Push(repo, token is not None
                                    and covers(token.permissions, "workflows", WRITE))
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self._root),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_PROJECT_ROOT": str(self._root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "GIT_HTTP_MAX_REQUEST_BUFFER": str(200 * 1024 * 1024),
            "PATH_INFO": f"/{mirror.path.name}/{rest}",
            "REQUEST_METHOD": request.method,
            "QUERY_STRING": request.query_string,
            "CONTENT_TYPE": request.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_USER": login,
            "REMOTE_ADDR": request.remote or "127.0.0.1",
            HOOK_ENV: f"{self.fake.host} {self.fake.port} {HOOK_PATH}{nonce}",
        }
        if "Git-Protocol" in request.headers:
            env["GIT_PROTOCOL"] = request.headers["Git-Protocol"]
        try:
            process = await asyncio.create_subprocess_exec(
                "git", "http-backend", env=env, stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
            out, err = await process.communicate(body)
        finally:
            del self._pushes[nonce]
        head, sep, payload = out.partition(b"\r\n\r\n")
        if not sep:
            head, _, payload = out.partition(b"\n\n")
        status, headers = 200, {}
        for line in head.decode(errors="replace").splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                headers[name.strip()] = value.strip()
        if process.returncode != 0 and status == 200 and not payload:
            status, payload = 500, err  # git died before answering; what it sent is git's
        return status, headers, payload

    # -- the bare repository ---------------------------------------------------------------

    async def _mirror(self, repo: Repository) -> _Mirror:
        key = repo.full_name.lower()
        found = self._mirrors.get(key)
        if found is not None:
            return found
        if self._root is None:
            self._root = Path(tempfile.mkdtemp(prefix="fakegithub-git-"))
        path = self._root / (key.replace("/", "--") + ".git")
        mirror = self._mirrors[key] = _Mirror(path)
        await _git(self._root, "init", "-q", "--bare", str(path))
        for name, value in (("uploadpack.allowAnySHA1InWant", "true"),
                            ("uploadpack.allowFilter", "true"), ("http.receivepack", "true"),
                            ("receive.fsckObjects", "true"), ("gc.auto", "0"),
                            ("receive.autogc", "false"), ("core.logAllRefUpdates", "false"),
                            ("pack.window", "0")):  # no delta search: the fake's speed only
            await _git(path, "config", name, value)
        hook = path / "hooks" / "pre-receive"
        hook.write_text(HOOK)
        hook.chmod(0o755)
        return mirror

    async def _export(self, repo: Repository, mirror: _Mirror) -> None:
        """Write what the fake made since the last request into the bare repository: a few
        objects loose, many (a repository's first request) as one pack."""
        store = repo.git
        new: list[tuple[str, str, bytes]] = []
        for table, attr in ((store.blobs, "blobs"), (store.trees, "trees"),
                            (store.commits, "commits")):
            for sha in itertools.islice(table, getattr(mirror, attr), None):
                new.append((sha, *store.raw(sha)))
            setattr(mirror, attr, len(table))
        if len(new) >= _PACK_FROM:
            await _git_bytes(mirror.path, "index-pack", "--stdin", stdin=_pack(new))
        else:
            for sha, kind, body in new:
                target = mirror.path / "objects" / sha[:2] / sha[2:]
                if not target.exists():
                    target.parent.mkdir(exist_ok=True)
                    target.write_bytes(zlib.compress(f"{kind} {len(body)}\0".encode() + body, 1))
        for ref in set(mirror.refs) - set(repo.refs):
            gone = mirror.path / ref
            gone.unlink(missing_ok=True)
            for parent in gone.parents:  # a branch ``a`` may follow a deleted ``a/b``
                if parent.name in ("heads", "tags") or any(parent.iterdir()):
                    break
                parent.rmdir()
        for ref, sha in repo.refs.items():
            if mirror.refs.get(ref) != sha:
                target = mirror.path / ref
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(sha + "\n")
        mirror.refs = dict(repo.refs)
        (mirror.path / "HEAD").write_text(f"ref: refs/heads/{repo.default_branch}\n")

    async def _import(self, repo: Repository, mirror: _Mirror, *, pusher: str) -> None:
        """Take a push into the fake: its objects, then its ref updates with their webhooks."""
        listing = await _git(mirror.path, "for-each-ref", "--format=%(objectname) %(refname)")
        now = dict(reversed(line.split(" ", 1)) for line in listing.splitlines() if line)
        moved = {ref: (mirror.refs.get(ref, ZERO), now.get(ref, ZERO))
                 for ref in set(now) | set(mirror.refs) if now.get(ref) != mirror.refs.get(ref)}
        if not moved:
            return
        new = sorted({after for _, after in moved.values() if after != ZERO})
        known = sorted(set(mirror.refs.values()))
        if new:
            names = await _git(mirror.path, "rev-list", "--objects", *new, "--not", *known)
            wanted = [line[:40] for line in names.splitlines() if line[:40] not in
                      repo.git.blobs and line[:40] not in repo.git.trees
                      and line[:40] not in repo.git.commits]
            if wanted:  # none when a push only names commits the fake has
                raw = await _git_bytes(mirror.path, "cat-file", "--batch",
                                       stdin="\n".join(wanted).encode() + b"\n")
                _take(repo, raw)
        for ref, (_, after) in sorted(moved.items()):
            if after == ZERO:
                repo.refs.pop(ref, None)
            else:
                repo.refs[ref] = after
        mirror.refs = dict(repo.refs)
        for ref, (before, after) in sorted(moved.items()):
            if after in repo.git.commits:  # a deletion, or an annotated tag, sends no push here
                await self.fake.ref_moved(repo, ref, before, after, pusher=pusher)


_PACK_FROM = 64
_TYPES = {"commit": 1, "tree": 2, "blob": 3}


def _pack(objects: list[tuple[str, str, bytes]]) -> bytes:
    """A git pack (version 2, no deltas) of ``(sha, type, body)`` objects."""
    parts = [b"PACK", struct.pack(">II", 2, len(objects))]
    for _sha, kind, body in objects:
        size = len(body)
        head = bytearray([(_TYPES[kind] << 4) | (size & 0x0F)])
        size >>= 4
        while size:
            head[-1] |= 0x80
            head.append(size & 0x7F)
            size >>= 7
        parts += [bytes(head), zlib.compress(body, 1)]
    data = b"".join(parts)
    return data + hashlib.sha1(data, usedforsecurity=False).digest()


def _take(repo: Repository, batch: bytes) -> None:
    """Objects from ``git cat-file --batch`` output into the fake's store."""
    at = 0
    while at < len(batch):
        newline = batch.index(b"\n", at)
        sha, kind, size = batch[at:newline].decode().split()
        body = batch[newline + 1:newline + 1 + int(size)]
        at = newline + 1 + int(size) + 1
        if kind != "tag":
            made = repo.git.add_raw(kind, body)
            assert made == sha, f"{kind} {sha} hashed to {made}"


async def _git_bytes(cwd: Path, *args: str, stdin: bytes | None = None) -> bytes:
    process = await asyncio.create_subprocess_exec(
        "git", *args, cwd=cwd, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                                    "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd)},
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await process.communicate(stdin)
    if process.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {err.decode(errors='replace')}")
    return out


async def _git(cwd: Path, *args: str) -> str:
    return (await _git_bytes(cwd, *args)).decode()
