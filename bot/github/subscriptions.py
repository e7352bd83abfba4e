"""The webhook events questbot acts on: the web process stores these and no others, and the
worker's redelivery reconciler asks GitHub again only for these."""

from __future__ import annotations

from typing import Final

SUBSCRIBED_EVENTS: Final = frozenset({
    "check_run", "check_suite", "workflow_run", "issues", "issue_comment", "pull_request",
    "pull_request_review", "push", "installation", "installation_repositories",
})
"""``app.yml`` subscribes to these; GitHub sends the two ``installation`` events to every App."""
