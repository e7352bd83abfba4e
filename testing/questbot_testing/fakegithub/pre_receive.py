"""The fake GitHub's pre-receive hook (``fakegithub.smarthttp``), a script, not a module.

git runs it in the bare repository with the push's ref updates on stdin (``old new ref`` a
line) and the pushed objects reachable through its quarantine. It lists the paths each update
changes and asks the fake — which holds the repository's protection and the token's
permissions — what GitHub refuses (``questbot_testing.fakegithub.rules.push_refusal``, applied in
``SmartHTTP.hook``), over loopback HTTP at the address in ``FAKEGITHUB_PUSH_HOOK``. What it
prints git shows as ``remote: …``; exiting 1 refuses the whole push. Standard library only: it
starts once per push.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

ZERO = "0" * 40


def changed(old: str, new: str) -> list[str]:
    """The paths the commits new to the repository between ``old`` and ``new`` change."""
    wanted = [new] + ([] if old == ZERO else ["--not", old])
    commits = subprocess.run(["git", "rev-list", *wanted, "--not", "--all"], check=True,
                             capture_output=True, text=True).stdout.split()
    paths: set[str] = set()
    for commit in commits:
        out = subprocess.run(["git", "diff-tree", "-r", "-m", "--root", "--no-commit-id",
                              "--name-only", "-z", commit], check=True,
                             capture_output=True).stdout
        paths.update(p.decode() for p in out.split(b"\0") if p)
    return sorted(paths)


def ask(updates: list[dict[str, object]]) -> list[str]:
    host, port, path = os.environ["FAKEGITHUB_PUSH_HOOK"].split(" ")
    body = json.dumps(updates).encode()
    with socket.create_connection((host, int(port)), timeout=60) as fake:
        fake.sendall(f"POST {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n"
                     f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
                     .encode() + body)
        answer = b""
        while chunk := fake.recv(65536):
            answer += chunk
    refusals: list[str] = json.loads(answer.partition(b"\r\n\r\n")[2])["refusals"]
    return refusals


def main() -> int:
    updates: list[dict[str, object]] = []
    for line in sys.stdin:
        old, new, ref = line.split()
        updates.append({"old": old, "new": new, "ref": ref,
                        "paths": [] if new == ZERO else changed(old, new)})
    refusals = ask(updates)
    for why in refusals:
        for text in why.splitlines():
            print(f"error: {text}", file=sys.stderr)
    return 1 if refusals else 0


if __name__ == "__main__":
    sys.exit(main())
