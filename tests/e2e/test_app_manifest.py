"""``app.yml`` asks for exactly the permissions and events questbot uses.

Every end-to-end flow runs with the App registered from ``app.yml`` (``Stack.start``): a request
its permissions do not cover is refused 403 by the fake, as GitHub refuses it, and fails the
test at teardown (``FakeGitHub.denied``), so nothing questbot does needs more than the manifest
asks for. The other way round is this module: the longest flow — a red CI run to a quest, its
pull request through A, B and C, the watch, a regression confirmed by questbot's re-run, the
revert and the fresh start — uses every permission the manifest asks for, at the level it asks
for, and nothing else. Which permission each request used is the fake's table
(``questbot_testing/fakegithub/permissions.py``, from GitHub's own permission data); an event needs
read access to the permission behind it. The events are the ones ``bot.intake.routes`` reads.
"""

from __future__ import annotations

from bot.core import State
from bot.intake.routes import EVENTS_READ
from questbot_testing.fakegithub import ci
from questbot_testing.fakegithub.manifest import load_manifest
from questbot_testing.fakegithub.permissions import ALWAYS_SENT, EVENTS, LEVELS, READ
from questbot_testing.scenario import RED, REPO, landed
from questbot_testing.stack import MANIFEST, Stack


def _highest(pairs: list[tuple[str, str]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for permission, level in pairs:
        if LEVELS[level] > LEVELS.get(out.get(permission, ""), 0):
            out[permission] = level
    return out


def test_app_yml_subscribes_to_exactly_the_events_questbot_reads() -> None:
    manifest = load_manifest(MANIFEST)
    assert set(manifest["default_events"]) == EVENTS_READ - ALWAYS_SENT


async def test_app_yml_asks_for_exactly_the_permissions_questbot_uses(stack: Stack) -> None:
    story, _ = await landed(stack)
    merge_sha = str(stack.fake.repo(REPO).branch_sha("main"))
    run = ci.actions_run(stack.fake, REPO, merge_sha, RED)
    ci.script_rerun(run, RED)
    await ci.deliver(stack.fake, ci.completed(stack.fake, REPO, run))
    await story.step("CI failed on the merge commit; its re-run failed too; reverted",
                     State.HYPOTHESISED, 2)
    used = [pair for exchange in stack.fake.requests for pair in exchange.permissions]
    used += [(EVENTS[e], READ) for e in EVENTS_READ if e in EVENTS]
    used.append(("metadata", READ))
    manifest = load_manifest(MANIFEST)
    assert _highest(used) == manifest["default_permissions"]
