"""Handlers for issues, issue comments, reactions, labels and locks (pull requests share these).

Bodies past GitHub's 65,536 characters and comments on a locked issue are refused as GitHub
refuses them (``fakegithub.rules``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlencode

from questbot_testing.fakegithub import echoes, rules
from questbot_testing.fakegithub.calls import Call, GitHubError, Handler, Reply, not_found
from questbot_testing.fakegithub.state import Comment, Issue, Label, Repository, iso

if TYPE_CHECKING:
    from questbot_testing.fakegithub.server import FakeGitHub

BOT_SUFFIX = "[bot]"
T = TypeVar("T")


def bot_login(call: Call) -> str:
    """Who an installation token acts as: the App's bot account."""
    return f"{call.world.app_slug}{BOT_SUFFIX}"


def find_issue(repo: Repository, number: int) -> Issue:
    issue = repo.issues.get(number)
    if issue is None:
        raise not_found()
    return issue


def label_names(body: Any) -> list[str]:
    """Labels from any of the body shapes GitHub accepts for add-labels."""
    items = body.get("labels", []) if isinstance(body, dict) else body
    if isinstance(items, str):
        items = [items]
    return [item["name"] if isinstance(item, dict) else str(item) for item in items]


def ensure_labels(repo: Repository, names: list[str]) -> None:
    """A label an issue is given that the repository lacks is created, colour ``ededed`` and
    no description (BEHAVIOUR §8)."""
    for name in names:
        repo.labels.setdefault(name.lower(), Label(name))


async def create_issue(call: Call) -> Reply:
    repo, body = call.repository, call.body
    rules.body_within_limit("Issue", body.get("body"))
    ensure_labels(repo, label_names({"labels": body.get("labels", [])}))
    issue = Issue(
        number=repo.take_number(),
        title=str(body["title"]),
        body=body.get("body"),
        user=bot_login(call),
        created_at=iso(),
        labels=label_names({"labels": body.get("labels", [])}),
    )
    repo.issues[issue.number] = issue
    return Reply(201, call.render.issue(repo, issue))


async def update_issue(call: Call) -> Reply:
    repo = call.repository
    issue = find_issue(repo, call.int_param("issue_number"))
    change_issue(repo, issue, call.body)
    return Reply(200, call.render.issue(repo, issue))


def change_issue(repo: Repository, issue: Issue, body: dict[str, Any]) -> None:
    """An ``issues/update`` body applied (REST's, or GraphQL's ``updateIssue`` read into
    it); neither sends a webhook in the fake."""
    rules.body_within_limit("Issue", body.get("body"))
    if "title" in body and body["title"] is not None:
        issue.title = str(body["title"])
    if "body" in body:
        issue.body = body["body"]
    if "state" in body:
        issue.state = body["state"]
    if "labels" in body:
        issue.labels = label_names({"labels": body["labels"]})
        ensure_labels(repo, issue.labels)


async def create_comment(call: Call) -> Reply:
    repo = call.repository
    issue = find_issue(repo, call.int_param("issue_number"))
    rules.body_within_limit("IssueComment", call.body["body"])
    if issue.locked:  # an App never has the write access that lets a person comment anyway
        raise GitHubError(403, rules.ISSUE_LOCKED)
    comment = call.fake.add_comment(repo, issue, call.body["body"], bot_login(call))
    await echoes.comment_written(call.fake, repo, comment)
    return Reply(201, call.render.comment(repo, comment))


def page_links(url: str, query: dict[str, str], page: int, last: int) -> str | None:
    """GitHub's ``Link`` header for ``page`` of ``last``, in the order GitHub writes it:
    ``prev``, ``next``, ``last``, ``first``, each present only where it leads somewhere
    (``recorded/paginate-issues.json``); ``None`` for a single page."""
    if last <= 1 and page <= 1:
        return None

    def at(n: int) -> str:
        return f"<{url}?{urlencode({**query, 'page': n})}>"

    links = []
    if page > 1:
        links.append(f'{at(min(page - 1, last))}; rel="prev"')
    if page < last:
        links.append(f'{at(page + 1)}; rel="next"')
        links.append(f'{at(last)}; rel="last"')
    if page > 1:
        links.append(f'{at(1)}; rel="first"')
    return ", ".join(links)


def paged(
    call: Call, items: Sequence[T], path: str, keep: Sequence[str]
) -> tuple[list[T], str | None]:
    """One page of ``items`` as ``per_page`` (default 30, at most 100) and ``page`` ask, and
    its ``Link`` header: further pages are linked by repository id, as GitHub links them
    (``recorded/paginate-issues.json``), carrying the query parameters named in ``keep``."""
    repo = call.repository
    per_page = min(int(call.query.get("per_page") or 30), 100)
    page = max(int(call.query.get("page") or 1), 1)
    last = max(1, -(-len(items) // per_page))
    shown = list(items[(page - 1) * per_page: page * per_page])
    query = {k: v for k, v in call.query.items() if k in (*keep, "per_page")}
    url = f"{call.fake.url}/repositories/{repo.id}/{path}"
    return shown, page_links(url, query, page, last)


def with_link(reply: Reply, link: str | None) -> Reply:
    if link is not None:
        reply.headers["Link"] = link
    return reply


def unsupported(call: Call, operation: str, supported: Sequence[str]) -> None:
    """A filter GitHub has and the fake does not model is recorded as a violation, so a test
    relying on it fails instead of getting an unfiltered answer."""
    for name in call.query:
        if name not in (*supported, "per_page", "page"):
            call.fake.violations.append(f"{operation}: the fake does not implement {name!r}")


async def list_comments(call: Call) -> Reply:
    """Ascending by id, ``since`` by last update, paged."""
    repo = call.repository
    issue = find_issue(repo, call.int_param("issue_number"))
    comments = [repo.comments[i] for i in sorted(issue.comments) if i in repo.comments]
    since = call.query.get("since")
    if since:
        comments = [c for c in comments if c.updated_at >= since]
    shown, link = paged(call, comments, f"issues/{issue.number}/comments", ("since",))
    return with_link(Reply(200, [call.render.comment(repo, c) for c in shown]), link)


async def list_issues(call: Call) -> Reply:
    """``issues/list-for-repo``: issues and pull requests (GitHub lists both; a pull request
    carries ``pull_request``), by ``state`` (default open), ``creator`` and ``labels`` (every
    one named), sorted by ``created`` (default) or ``comments``, ``direction`` desc by
    default, paged."""
    unsupported(call, "issues/list-for-repo",
                ("state", "creator", "labels", "sort", "direction"))
    repo = call.repository
    state = call.query.get("state", "open")
    issues = [i for i in repo.issues.values() if state == "all" or i.state == state]
    creator = call.query.get("creator")
    if creator is not None:
        issues = [i for i in issues if i.user.lower() == creator.lower()]
    wanted = [n.strip() for n in call.query.get("labels", "").split(",") if n.strip()]
    issues = [i for i in issues if all(n in i.labels for n in wanted)]
    if call.query.get("sort", "created") == "comments":
        issues.sort(key=lambda i: (len(i.comments), i.number))
    else:
        issues.sort(key=lambda i: (i.created_at, i.number))
    if call.query.get("direction", "desc") == "desc":
        issues.reverse()
    shown, link = paged(call, issues, "issues",
                        ("state", "creator", "labels", "sort", "direction"))
    return with_link(Reply(200, [call.render.issue(repo, i) for i in shown]), link)


async def update_comment(call: Call) -> Reply:
    repo = call.repository
    comment = await change_comment(call.fake, repo, call.int_param("comment_id"),
                                   call.body["body"], bot_login(call))
    return Reply(200, call.render.comment(repo, comment))


async def change_comment(fake: FakeGitHub, repo: Repository, comment_id: int, body: str,
                         login: str) -> Comment:
    """``login`` (the App) edits its comment — REST's ``issues/update-comment`` or GraphQL's
    ``updateIssueComment`` — with the ``issue_comment`` ``edited`` echo: 404 when it is gone,
    403 when it is not the App's."""
    comment = repo.comments.get(comment_id)
    if comment is None:
        raise not_found()
    if comment.user != login:
        raise GitHubError(403, "Resource not accessible by integration")
    rules.body_within_limit("IssueComment", body)
    before, comment.body = comment.body, body
    comment.updated_at = iso()
    await echoes.comment_written(fake, repo, comment, before=before)
    return comment


async def create_reaction(call: Call) -> Reply:
    repo = call.repository
    comment: Comment | None = repo.comments.get(call.int_param("comment_id"))
    if comment is None:
        raise not_found()
    reaction = (bot_login(call), call.body["content"])
    status = 200 if reaction in comment.reactions else 201
    if status == 201:
        comment.reactions.append(reaction)
    body = call.render.api.example("reaction")
    body.update(
        id=call.world.new_id(),
        user=call.render.user(reaction[0]),
        content=reaction[1],
        created_at=iso(),
    )
    return Reply(status, body)


async def add_labels(call: Call) -> Reply:
    repo = call.repository
    issue = find_issue(repo, call.int_param("issue_number"))
    names = label_names(call.body)
    ensure_labels(repo, names)
    for name in names:
        if name not in issue.labels:
            issue.labels.append(name)
    return Reply(200, [call.render.label(repo, name) for name in issue.labels])


async def remove_label(call: Call) -> Reply:
    repo = call.repository
    issue = find_issue(repo, call.int_param("issue_number"))
    name = call.params["name"]
    if name not in issue.labels:
        raise GitHubError(404, "Label does not exist")
    issue.labels.remove(name)
    return Reply(200, [call.render.label(repo, label) for label in issue.labels])


async def lock_issue(call: Call) -> Reply:
    """``issues/lock``: 204; comments from the App are refused from then on (BEHAVIOUR §8)."""
    issue = find_issue(call.repository, call.int_param("issue_number"))
    issue.locked = True
    issue.lock_reason = (call.body or {}).get("lock_reason")
    return Reply(204)


async def unlock_issue(call: Call) -> Reply:
    issue = find_issue(call.repository, call.int_param("issue_number"))
    if not issue.locked:
        raise not_found()  # GitHub's answer for an issue that is not locked (unconfirmed)
    issue.locked, issue.lock_reason = False, None
    return Reply(204)


def find_label(repo: Repository, name: str) -> Label:
    label = repo.labels.get(name.lower())
    if label is None:
        raise not_found()
    return label


def valid_color(color: object) -> bool:
    """Six hexadecimal digits without ``#`` (``recorded/errors.json``: ``invalid`` is 422)."""
    text = str(color)
    return len(text) == 6 and all(c in "0123456789abcdefABCDEF" for c in text)


async def list_labels(call: Call) -> Reply:
    repo = call.repository
    labels = sorted(repo.labels.values(), key=lambda label: label.name.lower())
    shown, link = paged(call, labels, "labels", ())
    return with_link(Reply(200, [call.render.label(repo, label.name) for label in shown]), link)


async def create_label(call: Call) -> Reply:
    repo, body = call.repository, call.body
    if "color" in body and not valid_color(body["color"]):
        raise rules.validation_failed("Label", "invalid", field="color")
    if body["name"].lower() in repo.labels:
        raise rules.validation_failed("Label", "already_exists", field="name")
    label = Label(body["name"], body.get("color", "ededed"), body.get("description"))
    repo.labels[label.name.lower()] = label
    return Reply(201, call.render.label(repo, label.name))


async def get_label(call: Call) -> Reply:
    label = find_label(call.repository, call.params["name"])
    return Reply(200, call.render.label(call.repository, label.name))


async def update_label(call: Call) -> Reply:
    repo, body = call.repository, call.body or {}
    label = find_label(repo, call.params["name"])
    if "color" in body and not valid_color(body["color"]):
        raise rules.validation_failed("Label", "invalid", field="color")
    new_name = body.get("new_name") or label.name
    del repo.labels[label.name.lower()]
    old_name, label.name = label.name, new_name
    label.color = body.get("color", label.color)
    label.description = body.get("description", label.description)
    repo.labels[new_name.lower()] = label
    for issue in repo.issues.values():
        issue.labels = [new_name if n == old_name else n for n in issue.labels]
    return Reply(200, call.render.label(repo, label.name))


async def delete_label(call: Call) -> Reply:
    repo = call.repository
    label = find_label(repo, call.params["name"])
    del repo.labels[label.name.lower()]
    for issue in repo.issues.values():
        issue.labels = [n for n in issue.labels if n != label.name]
    return Reply(204)


MAX_ASSIGNEES = 10
"""An issue or pull request has at most ten assignees (BEHAVIOUR §8)."""
PUSH = frozenset({"write", "maintain", "admin"})


def assignable(repo: Repository, issue: Issue, login: str) -> bool:
    """Whether GitHub assigns ``login`` to ``issue``: someone with push access to the
    repository, or the issue's author (BEHAVIOUR §8); anyone else is silently left out."""
    return repo.permission(login).value in PUSH or login.lower() == issue.user.lower()


async def add_assignees(call: Call) -> Reply:
    """``issues/add-assignees``: 201 with the issue, each login that may be assigned added
    after those already there (never replacing them), up to ten; the rest silently ignored."""
    repo, body = call.repository, call.body or {}
    issue = find_issue(repo, call.int_param("issue_number"))
    for item in body.get("assignees") or []:
        login = item if isinstance(item, str) else str(item.get("login", ""))
        if (assignable(repo, issue, login) and len(issue.assignees) < MAX_ASSIGNEES
                and login.lower() not in {a.lower() for a in issue.assignees}):
            issue.assignees.append(login)
    return Reply(201, call.render.issue(repo, issue))


async def remove_assignees(call: Call) -> Reply:
    """``issues/remove-assignees``: 200 with the issue, without the named logins (one not
    assigned changes nothing)."""
    repo, body = call.repository, call.body or {}
    issue = find_issue(repo, call.int_param("issue_number"))
    gone = {str(login).lower() for login in body.get("assignees") or []}
    issue.assignees = [a for a in issue.assignees if a.lower() not in gone]
    return Reply(200, call.render.issue(repo, issue))


HANDLERS: dict[str, Handler] = {
    "issues/lock": lock_issue,
    "issues/unlock": unlock_issue,
    "issues/list-labels-for-repo": list_labels,
    "issues/create-label": create_label,
    "issues/get-label": get_label,
    "issues/update-label": update_label,
    "issues/delete-label": delete_label,
    "issues/create": create_issue,
    "issues/update": update_issue,
    "issues/create-comment": create_comment,
    "issues/list-comments": list_comments,
    "issues/list-for-repo": list_issues,
    "issues/update-comment": update_comment,
    "reactions/create-for-issue-comment": create_reaction,
    "issues/add-labels": add_labels,
    "issues/remove-label": remove_label,
    "issues/add-assignees": add_assignees,
    "issues/remove-assignees": remove_assignees,
}
