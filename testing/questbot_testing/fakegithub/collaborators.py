"""``GET /repos/{owner}/{repo}/collaborators/{username}/permission`` as GitHub answers it.

GitHub's description of the endpoint: "The ``permission`` attribute provides the legacy base
roles of ``admin``, ``write``, ``read``, and ``none``, where the ``maintain`` role is mapped to
``write`` and the ``triage`` role is mapped to ``read``. The ``role_name`` attribute provides the
name of the assigned role" (``rest/api.github.com.json``, operation
``repos/get-collaborator-permission-level``). The user's ``permissions`` flags are those of
``GET .../collaborators`` (``recorded/add-and-remove-repository-collaborator.json``): each role
has its own flag and every flag below it.

Everyone can read a public repository, so there a person who is no collaborator at all is
answered ``read`` (observed: https://github.com/aws-ia/cloudformation-github-resource-providers/pull/14,
"the permission was always 'read' assigned to every user" on public repositories); on a private
one, ``none``.
"""

from __future__ import annotations

from typing import Any

from questbot_testing.fakegithub.calls import Call, Reply
from questbot_testing.fakegithub.state import Permission, Repository

ROLES = (Permission.READ, Permission.TRIAGE, Permission.WRITE, Permission.MAINTAIN,
         Permission.ADMIN)
"""Lowest first."""
LEGACY = {Permission.MAINTAIN: Permission.WRITE, Permission.TRIAGE: Permission.READ}
FLAGS = {Permission.READ: "pull", Permission.TRIAGE: "triage", Permission.WRITE: "push",
         Permission.MAINTAIN: "maintain", Permission.ADMIN: "admin"}


def role_of(repo: Repository, login: str) -> Permission:
    """The role GitHub reports for ``login``: a collaborator's own, else what anyone has."""
    role = repo.permission(login)
    if role is Permission.NONE and not repo.private:
        return Permission.READ
    return role


def permission_answer(repo: Repository, login: str) -> dict[str, Any]:
    """The parts of the answer that depend on the role: ``permission``, ``role_name`` and the
    user's ``permissions`` flags."""
    role = role_of(repo, login)
    rank = ROLES.index(role) if role in ROLES else -1
    flags = {FLAGS[level]: index <= rank for index, level in enumerate(ROLES)}
    legacy = LEGACY.get(role, role)
    return {"permission": legacy.value, "role_name": role.value, "permissions": flags}


async def get_permission_level(call: Call) -> Reply:
    repo = call.repository
    login = call.params["username"]
    answer = permission_answer(repo, login)
    body = call.render.api.example(
        "repository-collaborator-permission-response-if-user-has-admin-permissions"
    )
    user = call.render.user(login)
    user.update(role_name=answer["role_name"], permissions=answer["permissions"])
    body.update(permission=answer["permission"], role_name=answer["role_name"], user=user)
    return Reply(200, body)
