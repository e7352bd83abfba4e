#!/usr/bin/env python3
"""The image's health check: GET the process's own ``/healthz`` on loopback, exit 0 on a 200.

One image runs two processes, each serving ``/healthz`` on its own port: the web process on
``PORT`` (default 8080), the worker on ``QUESTBOT_METRICS_PORT`` (default 9100). A Dockerfile
has one ``HEALTHCHECK``, so the check finds out which process this container runs — from its
argument (``serve`` or ``worker``, as compose.yaml passes it), else from the command line of
PID 1 (``tini -- python -m bot worker``) — and asks that one.

Exit 0 only on a 200; 1 on anything else, with the answer on stdout, which the engine keeps in
``docker inspect``'s health log: the worker's 503 ``degraded`` names the Redis error and since
when, the web process's 503 says Redis did not answer ``PING`` (``bot/worker/http.py``,
``bot/web/app.py``). It imports nothing of questbot's and only the standard library, so it
answers in well under the check's timeout even while questbot is busy starting.
"""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path

TIMEOUT_S = 4.0
"""Below the Dockerfile's ``--timeout=5s``, so a hung process is reported, not killed."""


def role(argv: list[str], cmdline: Path = Path("/proc/1/cmdline")) -> str:
    """``worker`` or ``serve``: the argument if one was given, else what PID 1 runs."""
    if argv:
        return argv[0]
    try:
        words = cmdline.read_bytes().split(b"\0")
    except OSError:
        return "serve"
    return "worker" if b"worker" in words else "serve"


def port(which: str, environ: Mapping[str, str] = os.environ) -> int:
    """The port the process serves ``/healthz`` on, from the variables questbot reads."""
    if which == "worker":
        return int(environ.get("QUESTBOT_METRICS_PORT") or 9100)
    if which == "serve":
        return int(environ.get("PORT") or 8080)
    raise SystemExit(f"questbot-healthcheck: unknown process {which!r} (serve or worker)")


def check(url: str) -> tuple[bool, str]:
    """Whether ``url`` answered 200, and what it said."""
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as answer:  # noqa: S310 - loopback
            return answer.status == 200, answer.read(2000).decode(errors="replace")
    except urllib.error.HTTPError as exc:
        return False, f"{exc.code} {exc.read(2000).decode(errors='replace')}"
    except (urllib.error.URLError, OSError) as exc:
        return False, f"no answer from {url}: {exc}"


def main(argv: list[str] | None = None) -> int:
    which = role(sys.argv[1:] if argv is None else argv)
    url = f"http://127.0.0.1:{port(which)}/healthz"
    healthy, said = check(url)
    print(f"{which}: {said.strip()}")
    return 0 if healthy else 1


if __name__ == "__main__":
    sys.exit(main())
