"""Global node ids: the ``node_id`` of a REST object is the ``id`` GraphQL takes.

GitHub's node ids are opaque strings with a type prefix (``PR_kwDO…`` for a pull request,
``I_kwDO…`` for an issue); a client reads them from a REST answer's ``node_id`` and passes
them to a mutation's ``pullRequestId`` or to ``node(id:)``. The fake's are the same shape — a
prefix, then the repository id and number, base64url-encoded — so they can be decoded back
without a table, and an id the fake never handed out decodes to nothing, which GraphQL
answers with ``NOT_FOUND`` as GitHub does.
"""

from __future__ import annotations

import base64
import binascii

PULL_REQUEST = "PR"
ISSUE = "I"


def node_id(kind: str, repo_id: int, number: int) -> str:
    raw = f"{repo_id}:{number}".encode()
    return f"{kind}_kw" + base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode(node: str) -> tuple[str, int, int] | None:
    """``(kind, repository id, number)`` of a node id the fake made, else ``None``."""
    kind, sep, rest = node.partition("_kw")
    if not sep or not rest:
        return None
    try:
        raw = base64.urlsafe_b64decode(rest + "=" * (-len(rest) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    repo_id, colon, number = raw.partition(":")
    if not colon or not repo_id.isdigit() or not number.isdigit():
        return None
    return kind, int(repo_id), int(number)
