"""People editing and deleting comments, and accounts of a type their login does not suggest.

``issue_comment`` ``edited`` carries the comment as it is now, what its body was in
``changes.body.from``, and the person who edited it as ``sender`` (on GitHub a person with write
access may edit anyone's comment); ``deleted`` carries the comment as it was, and the comment is
gone from the API (reactions on it answer 404). Shapes from
GitHub's examples ``issue_comment/{edited,deleted}.payload.json``.

``comment_by`` comments as an account whose ``type`` is given, not derived from its login: the
fake's other helpers call any ``…[bot]`` login a Bot, as GitHub does; a User whose login ends
in ``[bot]`` cannot exist on GitHub, and is what a test needs to show that questbot trusts the
type and not the name.
"""

from __future__ import annotations

from typing import Any

from questbot_testing.fakegithub.server import FakeGitHub
from questbot_testing.fakegithub.state import Comment, Repository, iso
from questbot_testing.fakegithub.webhooks import (
    DeliveryResult,
    build_delivery,
    build_payload,
    deep_merge,
)


def _comment_json(comment: Comment, user_type: str) -> dict[str, Any]:
    return {"id": comment.id, "body": comment.body,
            "user": {"login": comment.user, "type": user_type},
            "created_at": comment.created_at, "updated_at": comment.updated_at}


async def _deliver(fake: FakeGitHub, repo: Repository, action: str,
                   overrides: dict[str, Any], sender: str, sender_type: str) -> DeliveryResult:
    payload = build_payload("issue_comment", action, installation_id=repo.installation_id,
                            user=sender, user_type=sender_type)
    payload = deep_merge(payload, {"repository": fake._webhook_repo(repo), **overrides})
    delivery = build_delivery("issue_comment", payload, fake.webhook_secret,
                              target_id=fake.world.app_id)
    return await fake._send(delivery)


async def comment_by(fake: FakeGitHub, full_name: str, number: int, body: str, *, user: str,
                     user_type: str) -> Comment:
    """``comment`` as ``user`` with the account ``type`` given (``User`` or ``Bot``)."""
    repo = fake.repo(full_name)
    issue = repo.issues[number]
    comment = fake.add_comment(repo, issue, body, user)
    await _deliver(fake, repo, "created", {
        "issue": fake._webhook_issue(repo, issue),
        "comment": _comment_json(comment, user_type)}, user, user_type)
    return comment


def _kind(login: str) -> str:
    return "Bot" if login.endswith("[bot]") else "User"


async def edit_comment(fake: FakeGitHub, full_name: str, comment_id: int, body: str, *,
                       user: str | None = None) -> Comment:
    """``user`` (the author unless given) edits a comment; sends ``issue_comment`` ``edited``."""
    repo = fake.repo(full_name)
    comment = repo.comments[comment_id]
    before, comment.body, comment.updated_at = comment.body, body, iso()
    editor = user or comment.user
    await _deliver(fake, repo, "edited", {
        "changes": {"body": {"from": before}},
        "issue": fake._webhook_issue(repo, repo.issues[comment.issue_number]),
        "comment": _comment_json(comment, _kind(comment.user))}, editor, _kind(editor))
    return comment


async def delete_comment(fake: FakeGitHub, full_name: str, comment_id: int, *,
                         user: str | None = None, deliver: bool = True) -> Comment:
    """``user`` (the author unless given) deletes a comment; sends ``issue_comment``
    ``deleted`` unless ``deliver`` is false (the webhook is then only recorded)."""
    repo = fake.repo(full_name)
    comment = repo.comments.pop(comment_id)
    issue = repo.issues[comment.issue_number]
    issue.comments.remove(comment_id)
    remover = user or comment.user
    url, fake.webhook_url = fake.webhook_url, (fake.webhook_url if deliver else None)
    try:
        await _deliver(fake, repo, "deleted", {
            "issue": fake._webhook_issue(repo, issue),
            "comment": _comment_json(comment, _kind(comment.user))}, remover, _kind(remover))
    finally:
        fake.webhook_url = url
    return comment
