"""What happens to a repository itself, read into intents with no I/O.

GitHub tells an App about its repositories' lives in three events (docs:
webhook-events-and-payloads): ``repository`` (``archived``, ``unarchived``, ``renamed``,
``transferred``, ``privatized``, ``publicized``, ``deleted``, ``edited`` with
``changes.default_branch``),
``installation`` (``deleted``, ``suspend``, ``unsuspend``: the whole installation) and
``installation_repositories`` (``removed``, ``added``: some of its repositories). A push that
deletes a ``quest/…`` branch (``deleted: true``, an all-zero ``after``) is read here too: the
quest's branch is gone under it. Each becomes a ``RepositoryChanged`` naming the repositories
it is about; what that does to their quests is ``bot.repository.intake``'s.
``bot.intake.routes`` routes these with the rest.
"""

from __future__ import annotations

from dataclasses import dataclass

from gidgethub import routing, sansio

from bot.github.payloads import Sink, ident, is_bot, items, login_of, obj, repo_of, text
from bot.quests.branches import QUEST_BRANCH_PREFIX, quest_of_branch
from bot.words.repository import Change


@dataclass(frozen=True, slots=True)
class RepositoryChanged:
    """``repos`` (full names as GitHub sent them) changed as ``change`` says; ``old`` is the
    name before a rename or transfer, ``branch`` the deleted branch or the new default
    branch, ``actor`` who did it (empty: GitHub or an unknown account)."""

    change: Change
    repos: tuple[str, ...]
    actor: str = ""
    installation_id: int | None = None
    old: str = ""
    branch: str = ""
    ids: tuple[tuple[str, int], ...] = ()
    """Each repository's GitHub id, where the webhook gave one: a repository deleted and
    restored keeps its id, one made since under its name has another."""

    def id_of(self, repo: str) -> int | None:
        return next((rid for name, rid in self.ids if name.lower() == repo.lower()), None)


_REPOSITORY = {"archived": Change.ARCHIVED, "unarchived": Change.UNARCHIVED,
               "renamed": Change.RENAMED, "transferred": Change.TRANSFERRED,
               "privatized": Change.PRIVATIZED, "deleted": Change.DELETED}
_INSTALLATION = {"created": Change.ADDED, "deleted": Change.UNINSTALLED,
                 "suspend": Change.SUSPENDED, "unsuspend": Change.UNSUSPENDED}

lives = routing.Router()


def _actor(data: dict[str, object]) -> str:
    sender = data.get("sender")
    return "" if is_bot(sender) else login_of(sender)


@lives.register("repository")
async def _repository(event: sansio.Event, out: Sink) -> None:
    data = event.data
    repo, action = repo_of(data), text(data.get("action"))
    if repo is None:
        return
    changes = obj(data.get("changes"))
    if action == "edited":
        before = text(obj(obj(changes.get("default_branch"))).get("from"))
        now = text(obj(data.get("repository")).get("default_branch"))
        if before and now and before != now:
            out.items.append(RepositoryChanged(Change.DEFAULT_BRANCH, (repo,), _actor(data),
                                               old=before, branch=now))
        return
    change = _REPOSITORY.get(action)
    if change is None:
        return
    old = ""
    if change is Change.RENAMED:
        name = text(obj(obj(changes.get("repository")).get("name")).get("from"))
        old = f"{repo.split('/', 1)[0]}/{name}" if name else ""
    elif change is Change.TRANSFERRED:
        owner = obj(obj(changes.get("owner")).get("from"))
        login = login_of(owner.get("user")) or login_of(owner.get("organization"))
        old = f"{login}/{repo.split('/', 1)[1]}" if login else ""
    inst = ident(obj(data.get("installation")).get("id"))
    out.items.append(RepositoryChanged(change, (repo,), _actor(data), inst, old=old,
                                       ids=_ids([obj(data.get("repository"))])))


def _ids(listed: list[dict[str, object]]) -> tuple[tuple[str, int], ...]:
    return tuple((name, rid) for r in listed
                 if (name := text(r.get("full_name"))) and (rid := ident(r.get("id"))))


@lives.register("installation")
async def _installation(event: sansio.Event, out: Sink) -> None:
    data = event.data
    change = _INSTALLATION.get(text(data.get("action")))
    inst = ident(obj(data.get("installation")).get("id"))
    if change is None or inst is None:
        return
    listed = items(data.get("repositories"))
    repos = tuple(name for r in listed if (name := text(r.get("full_name"))))
    out.items.append(RepositoryChanged(change, repos, _actor(data), inst, ids=_ids(listed)))


@lives.register("installation_repositories")
async def _installation_repositories(event: sansio.Event, out: Sink) -> None:
    data = event.data
    inst = ident(obj(data.get("installation")).get("id"))
    action = text(data.get("action"))
    if inst is None or action not in {"removed", "added"}:
        return
    listed = items(data.get(f"repositories_{action}"))
    repos = tuple(name for r in listed if (name := text(r.get("full_name"))))
    if repos:
        change = Change.REMOVED if action == "removed" else Change.ADDED
        out.items.append(RepositoryChanged(change, repos, _actor(data), inst,
                                           ids=_ids(listed)))


@lives.register("push")
async def _push(event: sansio.Event, out: Sink) -> None:
    data = event.data
    repo, ref, after = repo_of(data), text(data.get("ref")), text(data.get("after"))
    if (repo is None or data.get("deleted") is not True or not ref.startswith("refs/heads/")
            or not after or set(after) - {"0"}):
        return  # a deletion has an all-zero ``after``
    branch = ref.removeprefix("refs/heads/")
    if branch.startswith(QUEST_BRANCH_PREFIX) and quest_of_branch(branch):
        sender = data.get("sender")
        if is_bot(sender) and login_of(sender) == out.app.bot_login:
            return  # questbot's own clean-up of a merged or reverted branch
        out.items.append(RepositoryChanged(Change.BRANCH_DELETED, (repo,), _actor(data),
                                           branch=branch))
