"""GitHub's secondary limit on content creation, enforced: at most 80 content-creating requests
a minute and 500 an hour per installation (BEHAVIOUR.md §15). A request past either is answered
403 with GitHub's secondary-limit message and a ``retry-after``; the primary limit's headers
stay as they were (``x-ratelimit-remaining`` above zero), as GitHub sends them.

Which requests create content GitHub does not list; the fake counts every mutating REST request
and every GraphQL mutation an installation token makes — each of a document's mutations —,
which is the stricter reading. A refused
request is not counted. ``hits`` records each refusal: questbot's pacing
(``bot.journal.pacing``) should never meet one, and ``FakeGitHub.assert_clean`` says so.
Time is the fake's clock, which a test may share with questbot's pacing so that neither waits.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from questbot_testing.fakegithub.calls import GitHubError
from questbot_testing.fakegithub.faults import SECONDARY, SECONDARY_DOCS

WINDOWS = ((60.0, 80), (3600.0, 500))
"""(seconds, content-creating requests allowed in any such window)."""
RETRY_AFTER = 60


@dataclass
class ContentLimits:
    clock: Callable[[], float]
    windows: tuple[tuple[float, int], ...] = WINDOWS
    retry_after: int | None = RETRY_AFTER
    """GitHub's ``retry-after``, which it often leaves out (§15): ``None`` leaves it out."""
    hits: list[str] = field(default_factory=list)
    _seen: dict[int, deque[float]] = field(default_factory=dict)

    def take(self, installation_id: int, what: str, count: int = 1) -> None:
        """Count one content-creating request carrying ``count`` writes (a GraphQL document's
        mutations: GitHub does not say whether it counts them once or each, and the fake takes
        the stricter reading), or refuse it whole as GitHub does."""
        now = self.clock()
        seen = self._seen.setdefault(installation_id, deque())
        longest = max(span for span, _ in self.windows)
        while seen and seen[0] <= now - longest:
            seen.popleft()
        for span, allowed in self.windows:
            if sum(1 for at in seen if at > now - span) + count > allowed:
                self.hits.append(f"{what}: more than {allowed} content-creating requests in "
                                 f"{span:.0f} s")
                headers = {} if self.retry_after is None else {
                    "retry-after": str(self.retry_after)}
                raise GitHubError(403, SECONDARY, headers=headers,
                                  documentation_url=SECONDARY_DOCS)
        seen.extend([now] * count)
