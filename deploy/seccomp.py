#!/usr/bin/env python3
"""Docker's default seccomp profile plus the six system calls bubblewrap needs, and nothing more.

``compose.yaml`` runs the worker with ``seccomp=unconfined``: it works on every Docker, but it
lifts the whole syscall filter from the worker and from the repository code it runs. This
writes the stricter alternative: the engine's own default profile (its allow-list, its
argument checks) with one rule added that allows exactly what bubblewrap calls to build the
sandbox, each measured necessary on Docker 20.10 (docs/deploy.md, "The sandbox in a
container"): ``clone`` and ``unshare`` with namespace flags (user, mount, PID, network, IPC,
UTS, cgroup), ``mount``, ``umount2`` and ``pivot_root`` (the new root), and ``sethostname``
(the sandbox's own hostname). Docker's default allows these only to a container given
``CAP_SYS_ADMIN``, which questbot's worker is not and need not be.

The default profile is not shipped here (it is Docker's, and it changes with Docker's version):
take the one of the engine you run, from moby's repository at its tag
(``profiles/seccomp/default.json``) or Debian's ``golang-github-docker-docker-dev`` package
(``/usr/share/gocode/src/github.com/docker/docker/profiles/seccomp/default.json``):

    python3 deploy/seccomp.py default.json > deploy/seccomp-bubblewrap.json

and in compose.yaml's worker replace ``seccomp=unconfined`` by
``seccomp=deploy/seccomp-bubblewrap.json``. ``systempaths=unconfined`` stays: no seccomp
profile lets the kernel mount a new ``/proc`` over Docker's masked one.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

BUBBLEWRAP_SYSCALLS = ("clone", "unshare", "mount", "umount2", "pivot_root", "sethostname")
COMMENT = "questbot: what bubblewrap calls to build its sandbox (deploy/seccomp.py)"


def with_bubblewrap(profile: dict[str, Any]) -> dict[str, Any]:
    """``profile`` with one rule appended that allows ``BUBBLEWRAP_SYSCALLS``; every other
    rule, and the default action, as they were. Refuses a profile that is no allow-list
    (its default action allows), since adding to it would mean nothing."""
    if profile.get("defaultAction") in (None, "SCMP_ACT_ALLOW", "SCMP_ACT_LOG"):
        raise ValueError("this profile allows what it does not list (defaultAction "
                         f"{profile.get('defaultAction')!r}); give Docker's default profile")
    rules = [rule for rule in profile.get("syscalls", []) if rule.get("comment") != COMMENT]
    rules.append({"names": list(BUBBLEWRAP_SYSCALLS), "action": "SCMP_ACT_ALLOW",
                  "comment": COMMENT})
    return {**profile, "syscalls": rules}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: seccomp.py DOCKER_DEFAULT_PROFILE.json > seccomp-bubblewrap.json",
              file=sys.stderr)
        return 2
    profile = json.loads(Path(args[0]).read_text())
    try:
        json.dump(with_bubblewrap(profile), sys.stdout, indent=1)
    except ValueError as exc:
        print(f"seccomp.py: {exc}", file=sys.stderr)
        return 1
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
