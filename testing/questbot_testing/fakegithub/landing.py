"""What GitHub does to pull requests through GraphQL or on its own, for the fake: draft state,
reverts, auto-merge and the merge queue (``fakegithub.graphql_resolvers`` calls these);
and what people do to a pull request besides commenting: review it, close it, reopen it.

Auto-merge and the merge queue act on their own, as on GitHub: ``settle_merges`` runs after
every completed check run and every review (BEHAVIOUR §6).

Mixed into :class:`~.server.FakeGitHub` beside
:class:`~.actions.Actions`, whose webhooks and merges it uses.
"""

from __future__ import annotations

from typing import Any

from questbot_testing.fakegithub.gitstore import three_way
from questbot_testing.fakegithub.sending import ZERO_SHA
from questbot_testing.fakegithub.state import PullRequest, Repository, Review, iso

_METHODS = {"MERGE": "merge", "SQUASH": "squash", "REBASE": "rebase"}
_REVIEW_STATES = {"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED",
                  "COMMENT": "COMMENTED"}


class Landing:
    """Draft state, reverts, auto-merge and the merge queue."""

    deliver: Any
    ref_moved: Any
    add_pull: Any
    merge_pull: Any
    repo: Any
    world: Any
    render: Any
    _webhook_pull: Any

    async def set_draft(self, repo: Repository, pr: PullRequest, draft: bool, *,
                        user: str) -> None:
        """Mark ``pr`` a draft or ready for review (GraphQL); sends ``pull_request``
        ``converted_to_draft`` or ``ready_for_review``."""
        pr.draft = draft
        await self.deliver(
            repo, "pull_request", "converted_to_draft" if draft else "ready_for_review",
            {"number": pr.number, "pull_request": self._webhook_pull(repo, pr)}, sender=user)

    async def revert_pull(self, repo: Repository, pr: PullRequest, *, user: str,
                          title: str | None, body: str | None, draft: bool) -> PullRequest:
        """``revertPullRequest``: a branch ``revert-<n>-<head>`` with one commit undoing the
        merge on the base's current head (what others merged since stays), and a pull
        request from it; 422-like ``ValueError`` when the undo conflicts."""
        assert pr.merge_commit_sha is not None
        merge = repo.git.commits[pr.merge_commit_sha]
        base_head = repo.refs[f"refs/heads/{pr.base_ref}"]
        files = three_way(repo.git.entries(merge.sha), repo.git.entries(base_head),
                          repo.git.entries(merge.parents[0]))
        if files is None:
            raise ValueError(f"reverting #{pr.number} conflicts with {pr.base_ref}")
        issue = repo.issues[pr.number]
        commit = repo.git.put_commit(
            repo.git.write_entries(files), [base_head],
            f'Revert "{issue.title}"\n\nThis reverts commit {merge.sha}.', author=user,
            date=iso())
        branch = f"revert-{pr.number}-{pr.head_ref}"
        before = repo.refs.get(f"refs/heads/{branch}", ZERO_SHA)
        repo.refs[f"refs/heads/{branch}"] = commit.sha
        await self.ref_moved(repo, f"refs/heads/{branch}", before, commit.sha, pusher=user)
        revert = self.add_pull(repo, branch, pr.base_ref, title or f'Revert "{issue.title}"',
                               body or f"Reverts {repo.full_name}#{pr.number}", user,
                               draft=draft)
        await self.deliver(repo, "pull_request", "opened",
                           {"number": revert.number,
                            "pull_request": self._webhook_pull(repo, revert)}, sender=user)
        return revert

    async def settle_merges(self, full_name: str) -> list[int]:
        """What GitHub does on its own once a pull request can merge: auto-merge fires, and
        the merge queue merges its entries in order (each pinned to the head it was queued
        at; one whose head moved is dropped). Call it after a check completes; returns the
        numbers merged."""
        repo = self.repo(full_name)
        merged = []
        queue = sorted((pr for pr in repo.pulls.values() if pr.queued is not None),
                       key=lambda pr: pr.queued.id if pr.queued else 0)
        waiting = [pr for pr in repo.pulls.values() if pr.auto_merge is not None]
        for pr in [*waiting, *queue]:
            pinned = pr.queued.expected_head if pr.queued else (
                pr.auto_merge.expected_head if pr.auto_merge else None)
            if pr.merged or repo.missing_checks(pr) or repo.missing_approvals(pr) or pr.draft:
                continue
            if pinned is not None and pinned != pr.head_sha:
                pr.queued = pr.auto_merge = None
                continue
            method = "merge" if pr.queued else _METHODS[pr.auto_merge.method if pr.auto_merge
                                                         else "MERGE"]
            user = (pr.queued.enqueued_by if pr.queued else
                    pr.auto_merge.enabled_by if pr.auto_merge else "github-merge-queue[bot]")
            pr.queued = pr.auto_merge = None
            await self.merge_pull(repo, pr, user, method, None)
            merged.append(pr.number)
        return merged

    # -- what people do ----------------------------------------------------------------------

    async def review(self, full_name: str, number: int, event: str, *, user: str,
                     body: str = "", commit_id: str | None = None) -> Review:
        """``user`` submits a review (``APPROVE``, ``REQUEST_CHANGES`` or ``COMMENT``) of
        ``commit_id`` (the head by default); sends ``pull_request_review`` ``submitted``, whose
        ``review.state`` is lowercase (``approved``), then lets auto-merge act."""
        repo = self.repo(full_name)
        pr = repo.pulls[number]
        review = Review(self.world.new_id(), user, _REVIEW_STATES[event], body,
                        commit_id or pr.head_sha, iso())
        pr.reviews.append(review)
        # a requested reviewer who reviews is no longer requested
        # (OA pulls/list-requested-reviewers)
        pr.requested_reviewers = [r for r in pr.requested_reviewers if r.lower() != user.lower()]
        rendered = self.render.review(repo, number, review)
        await self.deliver(
            repo, "pull_request_review", "submitted",
            {"review": {**rendered, "state": review.state.lower(), "body": body or None},
             "pull_request": self._webhook_pull(repo, pr)}, sender=user)
        await self.settle_merges(full_name)
        return review

    async def close_pull(self, full_name: str, number: int, *, user: str) -> None:
        """``user`` closes the pull request without merging it; sends ``pull_request``
        ``closed`` with ``merged: false``."""
        await self.set_pull_state(self.repo(full_name), self.repo(full_name).pulls[number],
                                  "closed", user=user)

    async def reopen_pull(self, full_name: str, number: int, *, user: str) -> None:
        """``user`` reopens it; sends ``pull_request`` ``reopened``."""
        await self.set_pull_state(self.repo(full_name), self.repo(full_name).pulls[number],
                                  "open", user=user)

    async def set_pull_state(self, repo: Repository, pr: PullRequest, state: str, *,
                             user: str) -> None:
        """Close or reopen (the web page or ``pulls/update``); a change sends its webhook."""
        issue = repo.issues[pr.number]
        if issue.state == state or pr.merged:
            return
        issue.state = state
        if state == "closed":
            pr.auto_merge = pr.queued = None  # GitHub drops both when a pull request closes
        await self.deliver(repo, "pull_request", "closed" if state == "closed" else "reopened",
                           {"number": pr.number, "pull_request": self._webhook_pull(repo, pr)},
                           sender=user)
