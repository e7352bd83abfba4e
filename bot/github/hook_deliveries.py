"""The App's webhook delivery log on GitHub: what GitHub tried to deliver, and asking it again.

GitHub never redelivers a failed delivery by itself (BEHAVIOUR.md §14). It keeps a log of
every attempt, which the App reads with its JWT: ``GET /app/hook/deliveries`` lists attempts
newest first, 100 a page at most, the next page's ``cursor`` in the ``Link`` header (gidgethub's
``getiter`` follows it); ``POST /app/hook/deliveries/{id}/attempts`` asks for one more attempt,
answered 202 — the redelivery itself comes later, with the same ``X-GitHub-Delivery`` GUID. A
delivery can be redelivered for three days on github.com.

``bot.worker.redelivery`` decides what to ask for; this module only reads and asks.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from gidgethub.abc import GitHubAPI
from pydantic import AwareDatetime, BaseModel, ConfigDict, ValidationError

log = logging.getLogger(__name__)

PER_PAGE = 100
"""GitHub's largest page: the fewest requests for a window."""


class HookDelivery(BaseModel):
    """One attempt, as GitHub lists it (``hook-delivery-item``), the fields questbot reads."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: int
    guid: str
    delivered_at: AwareDatetime
    redelivery: bool
    status: str
    status_code: int
    event: str
    action: str | None = None

    @property
    def ok(self) -> bool:
        """GitHub counts the attempt as delivered (its own test: ``status`` is ``OK``)."""
        return self.status == "OK"


class AppHooks:
    """The two operations, authenticated as the App (``jwt`` makes a fresh JWT per call)."""

    def __init__(self, gh: GitHubAPI, jwt: Callable[[], str]) -> None:
        self.gh = gh
        self.jwt = jwt

    async def since(self, oldest: datetime, *, max_pages: int) -> tuple[list[HookDelivery], bool]:
        """The attempts made at ``oldest`` or later, newest first, reading at most
        ``max_pages`` pages; and whether the pages ran out before ``oldest`` was reached (the
        window held more than that)."""
        found: list[HookDelivery] = []
        read = 0
        async for item in self.gh.getiter(f"/app/hook/deliveries?per_page={PER_PAGE}",
                                          jwt=self.jwt()):
            read += 1
            try:
                delivery = HookDelivery.model_validate(item)
            except ValidationError as exc:
                log.warning("skipped a webhook delivery GitHub listed in a shape questbot does "
                            "not read: %s", exc.errors(include_url=False)[:1])
                continue
            if delivery.delivered_at < oldest:
                return found, False
            found.append(delivery)
            if read >= max_pages * PER_PAGE:
                return found, True
        return found, False

    async def redeliver(self, delivery_id: int) -> None:
        """Ask GitHub to send the delivery again (202; it arrives later)."""
        await self.gh.post(f"/app/hook/deliveries/{int(delivery_id)}/attempts", data=b"",
                           jwt=self.jwt())
