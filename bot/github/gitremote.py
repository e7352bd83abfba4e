"""A repository over git's smart HTTP with the installation token: the ``GitHost`` the agent
works through.

Why git and not the REST Git Data API? Over REST a checkout costs a request per blob and a push
a request per changed file, so a quest's cost grew with the repository; executables, symlinks,
submodules and files past what the workspace could rebuild by hand did not survive. Over git a
checkout is one shallow fetch and a push one ``git push`` of a real commit, whatever the
repository's size, and none of it counts against the REST rate limit.

* ``fetch(into, commits)`` — ``git fetch --depth 1`` of each commit not in ``into`` yet, named
  by SHA (GitHub serves any commit it has), kept under ``refs/questbot/fetched/<sha>`` so the
  next fetch into the same repository tells the server what it has and gets only the rest.
* ``branch_head(branch)`` — ``git ls-remote``.
* ``push(into, commit, branch, force=…)`` — ``git push`` of ``commit`` to ``refs/heads/<branch>``.

**The token.** GitHub takes an installation token as the password of HTTP basic
authentication (user ``x-access-token``, BEHAVIOUR §12). It is handed to git as an
``http.<url>.extraHeader`` through git's ``GIT_CONFIG_COUNT`` environment variables of the one
git process that needs it — never on a command line (``ps`` shows those), never in a URL or in
the repository's ``.git/config`` (the checkout's own code runs in that directory later), and cut
out of everything git prints (``bot.gitrun``). The header is scoped to the repository's URL,
so git sends it nowhere else. The token comes from ``InstallationTokens`` for each command; a
401 (revoked, the App reinstalled) has it renewed and the command run once more.

**Failures.** A refusal (403, 404, a rejected push, a commit GitHub does not have) is a
``GitHostError``: permanent, with git's words. A network fault, a 5xx, a timeout or a 401 is
``GitTransportError``: retried with back-off like any GitHub call that may succeed shortly
(a 401 only when a renewed token is refused too).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from bot.adapters import GitHostError
from bot.errors import RetryLater
from bot.github.errors import GitHubAdapterError
from bot.gitrun import GitRun, run_git

FETCHED = "refs/questbot/fetched/"
"""Where a fetched commit is kept in the local repository, so later fetches negotiate."""
_TRANSIENT = re.compile(
    r"returned error: 5\d\d|Could not resolve host|Failed to connect|Connection refused|"
    r"Connection reset|Operation timed out|timed out|early EOF|RPC failed|"
    r"unexpected disconnect|the remote end hung up|Empty reply|SSL|killed after", re.I)
_UNAUTHORISED = re.compile(r"returned error: 401|Authentication failed|"
                           r"Invalid username or (token|password)|"
                           r"could not read (Username|Password)", re.I)
"""How git says the server answered 401 (with an ``extraHeader`` git asks for credentials
next, and finds none)."""


class GitTransportError(GitHubAdapterError, RetryLater):
    """git could not reach GitHub, or GitHub could not answer it now; try again shortly."""


def git_base_url(api_url: str) -> str:
    """Where GitHub serves git for the API at ``api_url``: ``https://github.com`` for
    ``https://api.github.com``, ``https://<host>`` for a GitHub Enterprise Server's
    ``https://<host>/api/v3``, and the same address for anything else (a local fake, or a proxy
    that serves both)."""
    url = api_url.rstrip("/")
    if re.fullmatch(r"https://api\.github\.com", url, re.I):
        return "https://github.com"
    return re.sub(r"/api/v3$", "", url)


class GitRemote:
    """One repository over git's smart HTTP (``GitHost``)."""

    def __init__(self, repo: str, *, base_url: str, token: Callable[[], Awaitable[str]],
                 renew: Callable[[str], Awaitable[str]] | None = None) -> None:
        self._repo = repo
        self.url = f"{base_url.rstrip('/')}/{repo}.git"
        self._token = token
        self._renew = renew

    def __repr__(self) -> str:
        return f"GitRemote({self.url!r})"

    @property
    def repo(self) -> str:
        return self._repo

    async def _with(self, token: str, cwd: Path, *args: str) -> GitRun:
        header = "Authorization: Basic " + base64.b64encode(
            f"x-access-token:{token}".encode()).decode()
        env = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": f"http.{self.url}.extraHeader",
               "GIT_CONFIG_VALUE_0": header}
        return await run_git(cwd, *args, env=env, secrets=(token, header.split()[-1]))

    async def _git(self, cwd: Path, what: str, *args: str) -> GitRun:
        """Run one git command against the repository with the token — once more with a new
        token if GitHub answers 401 to it — and classify a failure."""
        token = await self._token()
        run = await self._with(token, cwd, *args)
        if not run.ok and _UNAUTHORISED.search(run.err) and self._renew is not None:
            run = await self._with(await self._renew(token), cwd, *args)
        if run.ok:
            return run
        detail = run.err[-2_000:] or f"git exited with {run.code}"
        if _UNAUTHORISED.search(run.err):
            raise GitTransportError(f"GitHub refused the installation token to {what} "
                                    f"{self.repo}, and a new one too; retrying later: {detail}")
        if run.code is None or _TRANSIENT.search(run.err):
            raise GitTransportError(f"git could not {what} {self.repo}; retrying later: "
                                    f"{detail}")
        raise GitHostError(f"{self.repo}: git could not {what} it: {detail}")

    async def fetch(self, into: Path, commits: Sequence[str]) -> None:
        missing = []
        for sha in dict.fromkeys(commits):
            present = await run_git(into, "cat-file", "-e", f"{sha}^{{commit}}")
            if not present.ok:
                missing.append(sha)
        if not missing:
            return
        await self._git(into, f"fetch {', '.join(s[:12] for s in missing)} from", "fetch",
                        "--quiet", "--no-tags", "--no-recurse-submodules", "--depth", "1",
                        self.url, *(f"+{sha}:{FETCHED}{sha}" for sha in missing))

    async def branch_head(self, branch: str) -> str | None:
        run = await self._git(Path("/"), f"read branch {branch} of", "ls-remote", "--heads",
                              self.url, f"refs/heads/{branch}")
        for line in run.text.splitlines():
            sha, _, ref = line.partition("\t")
            if ref == f"refs/heads/{branch}":
                return sha
        return None

    async def push(self, into: Path, commit: str, branch: str, *,
                   replacing: str | None = None) -> None:
        """Push ``commit`` to ``branch``: forward only (git refuses a push that is not a
        fast-forward), or, with ``replacing``, over exactly that head and no other
        (``--force-with-lease``), so a commit someone pushed since is never dropped."""
        lease = ([f"--force-with-lease=refs/heads/{branch}:{replacing}"]
                 if replacing is not None else [])
        await self._git(into, f"push {commit[:12]} to {branch} of", "push", "--quiet",
                        "--no-verify", "--no-recurse-submodules", *lease, self.url,
                        f"{commit}:refs/heads/{branch}")
