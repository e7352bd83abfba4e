"""A repository's life on the fake GitHub: archived, renamed, removed from the App's
installation, the App suspended or uninstalled, a branch deleted — each changing what GitHub
answers from then on, and sending the webhooks GitHub sends for it (BEHAVIOUR.md §23).

* **Archived:** every write to the repository is answered 403 ``Repository was archived so
  is read-only.``; reads go on. ``repository`` ``archived`` / ``unarchived``.
* **Renamed:** the repository keeps its id; its old name is answered with a redirect to
  ``/repositories/<id>/…`` — 301 for ``GET`` and ``HEAD``, 307 for other methods, so a
  client repeats a write there. ``repository`` ``renamed`` with ``changes.repository.name``.
* **Removed from the installation:** the installation's tokens no longer cover it (404, as
  for a repository that is not there) and ``GET /repos/{o}/{r}/installation`` answers 404.
  ``installation_repositories`` ``removed``; ``added`` when it is given back.
* **Uninstalled:** the installation is gone: its tokens are refused (401), a new one 404.
  ``installation`` ``deleted``; ``created`` when it is installed again.
* **Suspended:** a new token is refused 403 ``This installation has been suspended``, and so
  is every request with a token of it. ``installation`` ``suspend`` / ``unsuspend``.
* **The default branch renamed:** its commits and protection move to the new name, open
  pull requests into it are retargeted there; ``repository`` ``edited`` with
  ``changes.default_branch.from``.
* **Deleted:** the repository is gone: every API request for it answers 404 ``Not Found``,
  git over HTTP 404 ``Repository not found.``, and its old names redirect nowhere. GitHub's
  docs say an App is not sent ``repository`` ``deleted``; an App's author who deleted a
  repository received both it and ``installation_repositories`` ``removed``
  (https://github.com/github/docs/issues/36991, acknowledged by GitHub's docs team;
  atlassian/github-for-jira#767 relies on the former), in no documented order — so the fake
  sends both, in the order a test asks for.
* **Restored:** an owner may restore a deleted repository for 90 days (docs:
  repositories/creating-and-managing-repositories/restoring-a-deleted-repository). It comes
  back under its name with its id, issues and pull requests. GitHub documents no webhook for
  it — the ``repository`` schemas have no such action and the REST description no endpoint —
  so the fake sends none. On an installation on selected repositories, since the App was told
  the repository was removed, its tokens reach it only once it is given access again
  (``installation_repositories`` ``added``); on one on *all* repositories (every repository of
  the account, "current and future") they reach it at once, and still nothing is sent — the
  App finds it only by asking (``GET /repositories/{id}``, ``server._by_name``).
* **A branch deleted:** ``push`` with ``deleted: true`` and an all-zero ``after``; an open
  pull request from it is closed by GitHub (``pull_request`` ``closed``, sent by whoever
  deleted the branch).

Mixed into :class:`~.server.FakeGitHub` under :class:`~.actions.Actions`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from questbot_testing.fakegithub.sending import ZERO_SHA, Sending, kind_of
from questbot_testing.fakegithub.state import Installation, Repository, iso
from questbot_testing.fakegithub.webhooks import (
    DeliveryResult,
    build_delivery,
    build_payload,
    deep_merge,
)


class Lives(Sending):
    """What happens to repositories and installations, with GitHub's webhooks for it."""

    if TYPE_CHECKING:
        def repo(self, full_name: str) -> Repository: ...  # Actions's

    # -- archived -------------------------------------------------------------------------

    async def archive(self, full_name: str, *, user: str, archived: bool = True) -> None:
        repo = self.repo(full_name)
        repo.archived = archived
        await self.deliver(repo, "repository", "privatized.payload.json",
                           {"action": "archived" if archived else "unarchived",
                            "repository": {**self._webhook_repo(repo), "archived": archived}},
                           sender=user)

    async def unarchive(self, full_name: str, *, user: str) -> None:
        await self.archive(full_name, user=user, archived=False)

    # -- renamed --------------------------------------------------------------------------

    async def rename(self, full_name: str, name: str, *, user: str) -> Repository:
        """Rename ``full_name`` to ``owner/name``: its old name redirects from now on."""
        repo = self.repo(full_name)
        old = repo.name
        del self.world.repositories[full_name.lower()]
        repo.name = name
        self.world.repositories[repo.full_name.lower()] = repo
        self.world.renamed[full_name.lower()] = repo.id
        await self.deliver(repo, "repository", "renamed.payload.json",
                           {"changes": {"repository": {"name": {"from": old}}}}, sender=user)
        return repo

    async def transfer(self, full_name: str, owner: str, *, user: str) -> Repository:
        """Transfer ``full_name`` to ``owner``'s account, where the App is installed (one
        installation per account, made if need be): the old name redirects from now on."""
        repo = self.repo(full_name)
        old = repo.owner
        del self.world.repositories[full_name.lower()]
        repo.owner = owner
        repo.installation_id = self.world.installation_for(owner).id
        self.world.repositories[repo.full_name.lower()] = repo
        self.world.renamed[full_name.lower()] = repo.id
        await self.deliver(repo, "repository", "transferred.with-installation.payload.json",
                           {"changes": {"owner": {"from": {"user": {"login": old}}}}},
                           sender=user)
        return repo

    # -- the installation -----------------------------------------------------------------

    async def remove_from_installation(self, full_name: str, *, user: str) -> None:
        repo = self.repo(full_name)
        installation = self.world.installations[repo.installation_id]
        repo.installation_id = 0
        await self._about_installation(
            "installation_repositories", "removed.payload.json", installation,
            {"repositories_removed": [self._listed(repo)], "repositories_added": [],
             "repository_selection": installation.repository_selection}, sender=user)

    async def add_to_installation(self, full_name: str, installation_id: int, *,
                                  user: str) -> None:
        repo = self.repo(full_name)
        repo.installation_id = installation_id
        await self._about_installation(
            "installation_repositories", "added.payload.json",
            self.world.installations[installation_id],
            {"repositories_added": [self._listed(repo)], "repositories_removed": [],
             "repository_selection":
                 self.world.installations[installation_id].repository_selection},
            sender=user)

    async def uninstall(self, installation_id: int, *, user: str) -> None:
        installation = self.world.installations.pop(installation_id)
        repos = [r for r in self.world.repositories.values()
                 if r.installation_id == installation_id]
        for repo in repos:
            repo.installation_id = 0
        self.world.revoked.update({t: held for t, held in self.world.tokens.items()
                                   if held.installation_id == installation_id})
        for token in self.world.revoked:
            self.world.tokens.pop(token, None)
        await self._about_installation(
            "installation", "deleted.payload.json", installation,
            {"repositories": [self._listed(r) for r in repos]}, sender=user)

    async def install(self, account: str, repos: list[str], *, user: str) -> int:
        """Install the App on ``account`` again, on ``repos`` (selected): a new installation
        with a new id, and ``installation`` ``created`` listing them. Its id."""
        installation = Installation(self.world.new_id(), account)
        self.world.installations[installation.id] = installation
        for name in repos:
            self.repo(name).installation_id = installation.id
        await self._about_installation(
            "installation", "created.payload.json", installation,
            {"repositories": [self._listed(self.repo(name)) for name in repos]}, sender=user)
        return installation.id

    async def suspend(self, installation_id: int, *, user: str, suspended: bool = True) -> None:
        installation = self.world.installations[installation_id]
        installation.suspended_at = iso() if suspended else None
        await self._about_installation(
            "installation", "suspend.payload.json" if suspended else "unsuspend.payload.json",
            installation, {"installation": {"suspended_at": installation.suspended_at,
                                            "suspended_by": {"login": user} if suspended
                                            else None}}, sender=user)

    async def unsuspend(self, installation_id: int, *, user: str) -> None:
        await self.suspend(installation_id, user=user, suspended=False)

    # -- the default branch renamed ----------------------------------------------------------

    async def rename_default_branch(self, full_name: str, name: str, *, user: str) -> None:
        """Rename the default branch: its commits stay, open pull requests into it are
        retargeted to the new name, and ``repository`` ``edited`` says so."""
        repo = self.repo(full_name)
        old = repo.default_branch
        repo.refs[f"refs/heads/{name}"] = repo.refs.pop(f"refs/heads/{old}")
        repo.default_branch = name
        for pr in repo.pulls.values():
            if pr.base_ref == old and repo.issues[pr.number].state == "open":
                pr.base_ref = name
        await self.deliver(repo, "repository", "edited.with-default_branch-edit.payload.json",
                           {"changes": {"default_branch": {"from": old}}}, sender=user)

    # -- deleted ---------------------------------------------------------------------------

    async def delete_repository(self, full_name: str, *, user: str,
                                removed_first: bool = False) -> None:
        """A person deletes ``full_name`` outright: it answers 404 from now on, and the App
        is sent ``repository`` ``deleted`` and ``installation_repositories`` ``removed``
        (``removed_first``: that one first; GitHub documents no order)."""
        repo = self.repo(full_name)
        del self.world.repositories[full_name.lower()]
        self.world.deleted[repo.id] = repo
        for old in [n for n, rid in self.world.renamed.items() if rid == repo.id]:
            del self.world.renamed[old]  # a deleted repository's old names redirect nowhere
        installation = self.world.installations.get(repo.installation_id)
        sends = [self._deleted(repo, user), self._removed(repo, installation, user)]
        for send in reversed(sends) if removed_first else sends:
            await send

    async def _deleted(self, repo: Repository, user: str) -> None:
        await self.deliver(repo, "repository", "privatized.payload.json",
                           {"action": "deleted"}, sender=user)

    async def _removed(self, repo: Repository, installation: Installation | None,
                       user: str) -> None:
        if installation is None:
            return  # the App did not cover it: nothing to remove
        await self._about_installation(
            "installation_repositories", "removed.payload.json", installation,
            {"repositories_removed": [self._listed(repo)], "repositories_added": [],
             "repository_selection": installation.repository_selection}, sender=user)

    def restore_repository(self, full_name: str, *, user: str) -> Repository:
        """An owner restores the deleted ``full_name``: it is back, id and all; nothing is sent
        (GitHub documents no event for a restore). An installation on all of the account's
        repositories covers it again at once; one on selected repositories only once it is
        added again. ``user`` is who restored it, for the reader."""
        del user  # GitHub tells the App nothing, so nobody is named anywhere
        if self.world.repository(full_name) is not None:
            raise ValueError(f"{full_name} exists: GitHub restores no repository over another")
        (repo,) = [r for r in self.world.deleted.values()
                   if r.full_name.lower() == full_name.lower()]
        del self.world.deleted[repo.id]
        every = [i for i in self.world.installations.values()
                 if i.account.lower() == repo.owner.lower() and i.repository_selection == "all"]
        # the App was sent ``removed``: an installation on selected repositories covers it no
        # more; one on all of them covers every repository the account has
        repo.installation_id = every[0].id if every else 0
        self.world.repositories[repo.full_name.lower()] = repo
        return repo

    # -- a branch deleted -----------------------------------------------------------------

    async def delete_branch(self, full_name: str, branch: str, *, user: str) -> None:
        """A person deletes ``branch``: the push GitHub sends, then the close of every open
        pull request from it."""
        repo = self.repo(full_name)
        before = repo.refs.pop(f"refs/heads/{branch}")
        await self.deliver(repo, "push", "with-installation.payload.json",
                           {"ref": f"refs/heads/{branch}", "before": before, "after": ZERO_SHA,
                            "created": False, "deleted": True, "forced": False,
                            "commits": [], "head_commit": None, "base_ref": None,
                            "pusher": {"name": user, "email": f"{user}@example.com"}},
                           sender=user)
        for pr in list(repo.pulls.values()):
            issue = repo.issues[pr.number]
            if pr.head_ref == branch and not pr.head_repo and issue.state == "open":
                issue.state = "closed"
                await self.deliver(repo, "pull_request", "closed",
                                   {"number": pr.number,
                                    "pull_request": self._webhook_pull(repo, pr)},
                                   sender=user)

    # -- payloads ---------------------------------------------------------------------------

    def _listed(self, repo: Repository) -> dict[str, Any]:
        """A repository as ``installation`` events list it."""
        return {"id": repo.id, "node_id": f"R_{repo.id}", "name": repo.name,
                "full_name": repo.full_name, "private": repo.private}

    async def _about_installation(self, event: str, example: str, installation: Installation,
                                  overrides: dict[str, Any], *, sender: str) -> DeliveryResult:
        payload = build_payload(event, example, user=sender, user_type=kind_of(sender))
        payload["installation"] = deep_merge(payload["installation"], {
            "id": installation.id,
            "account": {"login": installation.account, "type": installation.account_type},
            "app_id": self.world.app_id, "app_slug": self.world.app_slug})
        delivery = build_delivery(event, deep_merge(payload, overrides), self.webhook_secret,
                                  target_id=self.world.app_id)
        return await self._send(delivery)
