"""What people (and the world) do to the fake GitHub, with the webhooks GitHub would send.

Tests and the demo script arrange a scene with these: a repository with files, a push, a pull
request, a comment with a slash command, a CI check that fails. Each helper changes the state
and — when ``webhook_url`` is set — delivers the signed event the real GitHub would deliver to
the App (``fakegithub.sending``); CI's results are in ``fakegithub.ci_results``.
"""

from __future__ import annotations

from questbot_testing.fakegithub.ci_results import CiResults
from questbot_testing.fakegithub.gitstore import FILE_MODE, Commit
from questbot_testing.fakegithub.lives import Lives
from questbot_testing.fakegithub.sending import ZERO_SHA, kind_of
from questbot_testing.fakegithub.state import (
    Comment,
    Issue,
    Permission,
    PullRequest,
    Repository,
    iso,
)


class Actions(Lives, CiResults):
    """Scene-setting helpers mixed into :class:`~.server.FakeGitHub`."""

    # -- state only ------------------------------------------------------------------------

    def create_repository(
        self,
        full_name: str,
        files: dict[str, str | bytes] | None = None,
        *,
        default_branch: str = "main",
        private: bool = False,
        installation_id: int | None = None,
        modes: dict[str, str] | None = None,
    ) -> Repository:
        """A repository whose default branch holds one commit with ``files`` (each ``100644``
        unless ``modes`` names another: ``100755``, or ``120000`` with the link's target as
        the content).

        The App is installed on the owner's account (one installation per account) unless an
        ``installation_id`` is given; read it back as ``repo.installation_id``.
        """
        owner, name = full_name.split("/", 1)
        if installation_id is None:
            installation_id = self.world.installation_for(owner).id
        repo = Repository(
            self.world.new_id(), owner, name, default_branch, installation_id, private=private
        )
        self.world.repositories[full_name.lower()] = repo
        blobs = {p: repo.git.put_blob(_bytes(c)) for p, c in (files or {}).items()}
        commit = repo.git.put_commit(
            repo.git.write_files(blobs, modes), [], "Initial commit", author=owner
        )
        repo.refs[f"refs/heads/{default_branch}"] = commit.sha
        return repo

    def repo(self, full_name: str) -> Repository:
        """The repository named ``owner/name``; KeyError if the fake has none."""
        found = self.world.repository(full_name)
        if found is None:
            raise KeyError(f"no repository {full_name!r} in the fake")
        return found

    def set_permission(self, full_name: str, login: str, permission: Permission | str) -> None:
        """Make ``login`` a collaborator with a role: ``admin``, ``maintain``, ``write``,
        ``triage`` or ``read`` (or ``none``)."""
        self.repo(full_name).permissions[login] = Permission(permission)

    def add_comment(self, repo: Repository, issue: Issue, body: str, user: str) -> Comment:
        now = iso()
        comment = Comment(self.world.new_id(), issue.number, body, user, now, now)
        repo.comments[comment.id] = comment
        issue.comments.append(comment.id)
        return comment

    def fork(self, full_name: str, owner: str) -> Repository:
        """``owner``'s fork of ``full_name``: the same objects and branches, in a repository
        of its own (``owner/<name>``; the App installed on ``owner``'s account, as
        ``create_repository`` does)."""
        source = self.repo(full_name)
        fork = self.create_repository(f"{owner}/{source.name}",
                                      default_branch=source.default_branch)
        fork.git.blobs.update(source.git.blobs)
        fork.git.trees.update(source.git.trees)
        fork.git.commits.update(source.git.commits)
        fork.refs = {ref: sha for ref, sha in source.refs.items()
                     if ref.startswith("refs/heads/")}
        return fork

    def add_pull(
        self,
        repo: Repository,
        head: str,
        base: str,
        title: str,
        body: str | None,
        user: str,
        *,
        draft: bool = False,
        head_repo: str = "",
    ) -> PullRequest:
        """A pull request into ``repo`` from its branch ``head`` — or, with ``head_repo``, from
        that fork's branch, whose commits GitHub then also keeps in the base repository."""
        number = repo.take_number()
        repo.issues[number] = Issue(number, title, body, user, iso(), is_pull_request=True)
        source = self.repo(head_repo) if head_repo else repo
        head_sha, base_sha = source.refs[f"refs/heads/{head}"], repo.refs[f"refs/heads/{base}"]
        if source is not repo:
            _fetch(source, repo)
        pr = PullRequest(number, head, base, head_sha, base_sha, draft=draft,
                         head_repo=source.full_name if source is not repo else "")
        repo.pulls[number] = pr
        return pr

    # -- what people do --------------------------------------------------------------------

    async def push(
        self,
        full_name: str,
        branch: str,
        files: dict[str, str | bytes | None],
        *,
        user: str = "octocat",
        message: str = "Update files",
        modes: dict[str, str] | None = None,
    ) -> Commit:
        """Commit ``files`` (``None`` deletes a path) on ``branch`` as ``user`` and push it; a
        changed file keeps its mode unless ``modes`` gives one.

        A missing branch starts from the default branch. Sends ``push`` and, for an open pull
        request with this head, ``pull_request`` ``synchronize``.
        """
        repo = self.repo(full_name)
        ref = f"refs/heads/{branch}"
        before = repo.refs.get(ref, ZERO_SHA)
        parent = repo.refs.get(ref) or repo.refs[f"refs/heads/{repo.default_branch}"]
        tree = repo.git.entries(parent)
        for path, content in files.items():
            if content is None:
                tree.pop(path, None)
            else:
                mode = (modes or {}).get(path) or tree.get(path, (FILE_MODE, ""))[0]
                tree[path] = (mode, repo.git.put_blob(_bytes(content)))
        commit = repo.git.put_commit(
            repo.git.write_entries(tree),
            [parent],
            message,
            author=user,
            email=f"{user}@example.com",
            date=iso(),
        )
        repo.refs[ref] = commit.sha
        await self.ref_moved(repo, ref, before, commit.sha, pusher=user)
        return commit

    async def open_pull_request(
        self,
        full_name: str,
        head: str,
        *,
        base: str | None = None,
        title: str = "A change",
        body: str | None = None,
        user: str = "octocat",
        draft: bool = False,
        head_repo: str = "",
    ) -> PullRequest:
        """Open a pull request from ``head`` as ``user`` — from the fork ``head_repo``'s branch,
        when given; sends ``pull_request`` ``opened`` (to the base repository)."""
        repo = self.repo(full_name)
        pr = self.add_pull(repo, head, base or repo.default_branch, title, body, user, draft=draft,
                           head_repo=head_repo)
        await self.deliver(
            repo,
            "pull_request",
            "opened",
            {"number": pr.number, "pull_request": self._webhook_pull(repo, pr)},
            sender=user,
        )
        return pr

    async def open_issue(
        self,
        full_name: str,
        title: str,
        body: str | None = None,
        *,
        user: str = "octocat",
        labels: list[str] | None = None,
    ) -> Issue:
        """Open an issue as ``user``; sends ``issues`` ``opened``."""
        repo = self.repo(full_name)
        issue = Issue(repo.take_number(), title, body, user, iso(), labels=list(labels or []))
        repo.issues[issue.number] = issue
        await self.deliver(
            repo, "issues", "opened", {"issue": self._webhook_issue(repo, issue)}, sender=user
        )
        return issue

    async def comment(
        self, full_name: str, number: int, body: str, *, user: str = "octocat"
    ) -> Comment:
        """Comment on an issue or pull request as ``user``; sends ``issue_comment`` ``created``."""
        repo = self.repo(full_name)
        issue = repo.issues[number]
        comment = self.add_comment(repo, issue, body, user)
        payload_issue = self._webhook_issue(repo, issue)
        await self.deliver(
            repo,
            "issue_comment",
            "created",
            {
                "issue": payload_issue,
                "comment": {
                    "id": comment.id,
                    "body": body,
                    "user": {"login": user, "type": kind_of(user)},
                    "created_at": comment.created_at,
                    "updated_at": comment.updated_at,
                },
            },
            sender=user,
        )
        return comment

    # -- what the API does on the bot's behalf ---------------------------------------------

    async def merge_pull(
        self, repo: Repository, pr: PullRequest, user: str, method: str, title: str | None
    ) -> str:
        """Land ``pr`` on its base (merge commit, or one commit for squash/rebase)."""
        base = repo.refs[f"refs/heads/{pr.base_ref}"]
        files = repo.git.merge_entries(base, pr.head_sha) or repo.git.entries(pr.head_sha)
        parents = [base, pr.head_sha] if method == "merge" else [base]
        message = title or f"Merge pull request #{pr.number} from {repo.owner}/{pr.head_ref}"
        commit = repo.git.put_commit(
            repo.git.write_entries(files), parents, message, author=user, date=iso()
        )
        repo.refs[f"refs/heads/{pr.base_ref}"] = commit.sha
        pr.merged, pr.merged_by, pr.merged_at = True, user, iso()
        pr.merge_commit_sha = commit.sha
        repo.issues[pr.number].state = "closed"
        await self.ref_moved(repo, f"refs/heads/{pr.base_ref}", base, commit.sha, pusher=user)
        await self.deliver(
            repo,
            "pull_request",
            "closed",
            {"number": pr.number, "pull_request": self._webhook_pull(repo, pr)},
            sender=user,
        )
        return commit.sha

    async def update_pull_branch(self, repo: Repository, pr: PullRequest, user: str) -> bool:
        """Merge the base into the head branch; False on a conflict."""
        base = repo.refs[f"refs/heads/{pr.base_ref}"]
        if repo.git.is_ancestor(base, pr.head_sha):
            return True
        files = repo.git.merge_entries(pr.head_sha, base)
        if files is None:
            return False
        before = pr.head_sha
        commit = repo.git.put_commit(
            repo.git.write_entries(files),
            [before, base],
            f"Merge branch '{pr.base_ref}' into {pr.head_ref}",
            author=user,
            date=iso(),
        )
        repo.refs[f"refs/heads/{pr.head_ref}"] = commit.sha
        await self.ref_moved(repo, f"refs/heads/{pr.head_ref}", before, commit.sha, pusher=user)
        return True


def _bytes(content: str | bytes) -> bytes:
    return content.encode() if isinstance(content, str) else content


def _fetch(source: Repository, into: Repository) -> None:
    """A fork's objects into the base repository (GitHub keeps a fork pull request's commits
    there, under ``refs/pull/<n>/head``)."""
    into.git.blobs.update(source.git.blobs)
    into.git.trees.update(source.git.trees)
    into.git.commits.update(source.git.commits)
