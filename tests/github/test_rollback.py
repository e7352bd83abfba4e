"""The revert is merged at the head questbot made: a push to its branch in between is never
merged unseen."""

from __future__ import annotations

import pytest

from bot.core import EffectType
from bot.github.forge import Forge
from bot.journal import PermanentError
from tests.github.conftest import REPO, Died, World, dies_after, last
from tests.github.test_once_effects import regressed, reverts


async def test_a_push_to_the_revert_branch_stops_the_merge(
        world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    b, _ = await regressed(world)
    effect = last(b, EffectType.ROLLBACK)
    dies_after(monkeypatch, Forge, "create_pull")  # the revert is open, not yet merged
    with pytest.raises(Died):
        await world.effects.reverter.rollback(effect)
    (revert,) = reverts(world)
    made = revert.head_sha
    main = world.main_sha
    await world.fake.push(REPO, revert.head_ref, {"app.py": "x = 3\n"}, user="mallory")
    with pytest.raises(PermanentError, match="someone pushed to its branch"):
        await world.effects.reverter.rollback(effect)
    (revert,) = reverts(world)
    assert not revert.merged and revert.head_sha != made
    assert world.main_sha == main  # nothing was merged
    assert [c for c in world.fake.calls("pulls/merge") if c.json.get("sha") != made
            and c.path.endswith(f"/{revert.number}/merge")] == []
