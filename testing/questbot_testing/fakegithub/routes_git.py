"""Handlers for repository contents and the Git database: blobs, trees, commits, refs, merges.

The contents API answers JSON for files up to 1 MB (403 ``too_large`` beyond, the raw media type
still works) and lists at most 1,000 entries of a directory; the Git Data API has no such limits
short of 100 MB (BEHAVIOUR §11)."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from questbot_testing.fakegithub import rules
from questbot_testing.fakegithub.calls import Call, GitHubError, Handler, Reply, not_found
from questbot_testing.fakegithub.gitstore import FILE_MODE, SUBMODULE_MODE, Entry
from questbot_testing.fakegithub.state import iso


async def get_content(call: Call) -> Reply:
    repo = call.repository
    ref = call.query.get("ref", repo.default_branch)
    sha = repo.resolve(ref)
    if sha is None:
        raise GitHubError(404, f"No commit found for the ref {ref}")
    path = call.params["path"].strip("/")
    files = repo.git.files(sha)
    if path in files:
        if "raw" in call.accept:
            raw = repo.git.blobs[files[path]]
            return Reply(200, raw=raw, content_type="application/vnd.github.raw")
        if len(repo.git.blobs[files[path]]) > rules.CONTENTS_LIMIT:
            raise rules.blob_too_large()
        return Reply(200, call.render.content_file(repo, ref, path, files[path]))
    prefix = path + "/" if path else ""  # an empty path lists the repository root
    listing = sorted({p[len(prefix) :].split("/", 1)[0] for p in files if p.startswith(prefix)})
    if not listing:
        raise not_found()
    entries = []
    for name in listing[:rules.DIRECTORY_LIMIT]:
        child = prefix + name
        if child in files:
            item = call.render.content_file(repo, ref, child, files[child])
            item.pop("content"), item.pop("encoding")
        else:
            item = {
                "type": "dir",
                "size": 0,
                "name": name,
                "path": child,
                "sha": "0" * 40,
                "url": "",
                "git_url": None,
                "html_url": None,
                "download_url": None,
                "_links": {"git": None, "html": None, "self": ""},
            }
        entries.append(item)
    return Reply(200, entries)


async def create_blob(call: Call) -> Reply:
    repo, body = call.repository, call.body
    if body.get("encoding", "utf-8") == "base64":
        try:
            data = base64.b64decode(body["content"], validate=False)
        except binascii.Error as exc:
            raise GitHubError(422, "content is not valid Base64") from exc
    else:
        data = body["content"].encode()
    sha = repo.git.put_blob(data)
    return Reply(201, {"url": f"{call.render.repo_url(repo)}/git/blobs/{sha}", "sha": sha})


async def create_tree(call: Call) -> Reply:
    repo, body = call.repository, call.body
    files: dict[str, Entry] = {}
    if "base_tree" in body:
        if body["base_tree"] not in repo.git.trees:
            raise GitHubError(422, "Invalid tree info: base_tree does not exist")
        files = repo.git.tree_entries(body["base_tree"])
    for entry in body["tree"]:
        path, mode = entry.get("path", ""), entry.get("mode", FILE_MODE)
        if "content" in entry and entry.get("sha") is not None:
            raise GitHubError(422, "Only tree.sha or content may be specified, not both")
        if "content" in entry:
            files[path] = (mode, repo.git.put_blob(entry["content"].encode()))
        elif entry.get("sha") is None:
            if not any(p == path or p.startswith(path + "/") for p in files):
                # BEHAVIOUR §11: deleting a path that does not exist is an error (wording
                # unconfirmed)
                raise rules.validation_failed("Tree", "invalid", field="tree",
                                              message=f"path {path} does not exist")
            files = {p: s for p, s in files.items() if p != path and not p.startswith(path + "/")}
        elif entry.get("type") == "tree":
            if entry["sha"] not in repo.git.trees:
                raise GitHubError(422, f"Invalid tree info: tree {entry['sha']} does not exist")
            for sub, found in repo.git.tree_entries(entry["sha"]).items():
                files[f"{path}/{sub}"] = found
        elif entry.get("type") == "commit":  # a submodule: GitHub does not check the commit
            files[path] = (SUBMODULE_MODE, entry["sha"])
        else:
            if entry["sha"] not in repo.git.blobs:
                raise GitHubError(422, f"Invalid tree info: blob {entry['sha']} does not exist")
            files[path] = (mode, entry["sha"])
    sha = repo.git.write_entries(files)
    return Reply(201, call.render.git_tree(repo, sha))


async def create_commit(call: Call) -> Reply:
    repo, body = call.repository, call.body
    if body["tree"] not in repo.git.trees:
        raise GitHubError(422, "Tree SHA does not exist")
    parents = body.get("parents", [])
    for parent in parents:
        if parent not in repo.git.commits:
            raise GitHubError(422, "Parent SHA does not exist or is not a commit object")
    author: dict[str, Any] = body.get("author") or {}
    commit = repo.git.put_commit(
        body["tree"],
        parents,
        body["message"],
        author=author.get("name", f"{call.world.app_slug}[bot]"),
        email=author.get("email", "bot@example.com"),
        date=author.get("date", iso()),
    )
    return Reply(201, call.render.git_commit(repo, commit.sha))


async def get_commit(call: Call) -> Reply:
    """``git/get-commit``: a commit object by SHA (404 for anything else)."""
    repo = call.repository
    sha = call.params["commit_sha"]
    if sha not in repo.git.commits:
        raise not_found()
    return Reply(200, call.render.git_commit(repo, sha))


async def get_blob(call: Call) -> Reply:
    """``git/get-blob``: base64 content, up to 100 MB (the contents API stops at 1 MB)."""
    repo = call.repository
    sha = call.params["file_sha"]
    if sha not in repo.git.blobs:
        raise not_found()
    return Reply(200, call.render.blob(repo, sha))


async def get_tree(call: Call) -> Reply:
    """``git/get-tree``: a tree by its SHA, or the tree of a commit, branch or tag named
    instead (GitHub takes "the SHA1 value or ref name of the tree"); ``recursive`` with any
    value lists every entry below it."""
    repo = call.repository
    name = call.params["tree_sha"]
    tree = name if name in repo.git.trees else None
    if tree is None:
        commit = repo.resolve(name)
        tree = repo.git.commits[commit].tree if commit else None
    if tree is None:
        raise not_found()
    recursive = "recursive" in call.query
    return Reply(200, call.render.git_tree(repo, tree, recursive=recursive))


async def get_ref(call: Call) -> Reply:
    repo = call.repository
    ref = "refs/" + call.params["ref"]
    if ref not in repo.refs:
        raise not_found()
    return Reply(200, call.render.git_ref(repo, ref))


async def create_ref(call: Call) -> Reply:
    repo, body = call.repository, call.body
    ref, sha = body["ref"], body["sha"]
    if not ref.startswith("refs/") or ref.count("/") < 2:
        raise GitHubError(422, "Reference name must start with 'refs/' and have two slashes")
    if ref in repo.refs:
        raise GitHubError(422, "Reference already exists")
    if sha not in repo.git.commits:
        raise GitHubError(422, "Object does not exist")
    repo.refs[ref] = sha
    await call.fake.ref_moved(repo, ref, "0" * 40, sha, pusher=f"{call.world.app_slug}[bot]")
    return Reply(201, call.render.git_ref(repo, ref))


async def update_ref(call: Call) -> Reply:
    repo, body = call.repository, call.body
    ref = "refs/" + call.params["ref"]
    if ref not in repo.refs:
        raise GitHubError(422, "Reference does not exist")
    before, sha = repo.refs[ref], body["sha"]
    if sha not in repo.git.commits:
        raise GitHubError(422, "Object does not exist")
    if not body.get("force") and not repo.git.is_ancestor(before, sha):
        raise GitHubError(422, "Update is not a fast forward")
    repo.refs[ref] = sha
    await call.fake.ref_moved(repo, ref, before, sha, pusher=f"{call.world.app_slug}[bot]")
    return Reply(200, call.render.git_ref(repo, ref))


async def delete_ref(call: Call) -> Reply:
    """``git/delete-ref``: 204; a ref that does not exist is 422 ``Reference does not
    exist``."""
    repo = call.repository
    ref = "refs/" + call.params["ref"]
    if ref not in repo.refs:
        raise GitHubError(422, "Reference does not exist")
    if ref == f"refs/heads/{repo.default_branch}":
        raise GitHubError(422, "Cannot delete the default branch")  # (unconfirmed)
    del repo.refs[ref]
    return Reply(204)


async def merge_branches(call: Call) -> Reply:
    repo, body = call.repository, call.body
    base_ref = f"refs/heads/{body['base']}"
    if base_ref not in repo.refs:
        raise GitHubError(404, "Base does not exist")
    head = repo.resolve(body["head"])
    if head is None:
        raise GitHubError(404, "Head does not exist")
    base = repo.refs[base_ref]
    if repo.git.is_ancestor(head, base):
        return Reply(204)
    files = repo.git.merge_entries(base, head)
    if files is None:
        raise GitHubError(409, "Merge conflict")
    message = body.get("commit_message") or f"Merge {body['head']} into {body['base']}"
    commit = repo.git.put_commit(
        repo.git.write_entries(files), [base, head], message, author=f"{call.world.app_slug}[bot]"
    )
    repo.refs[base_ref] = commit.sha
    pusher = f"{call.world.app_slug}[bot]"
    await call.fake.ref_moved(repo, base_ref, base, commit.sha, pusher=pusher)
    return Reply(201, call.render.commit(repo, commit.sha))


HANDLERS: dict[str, Handler] = {
    "repos/get-content": get_content,
    "git/create-blob": create_blob,
    "git/create-tree": create_tree,
    "git/create-commit": create_commit,
    "git/get-commit": get_commit,
    "git/get-blob": get_blob,
    "git/get-tree": get_tree,
    "git/get-ref": get_ref,
    "git/delete-ref": delete_ref,
    "git/create-ref": create_ref,
    "git/update-ref": update_ref,
    "repos/merge": merge_branches,
}
