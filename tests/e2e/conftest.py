"""The end-to-end stack as a fixture: fake GitHub, real Redis, web process and worker; and a
guard on every end-to-end test: no credential in any log line.

``no_secrets_in_logs`` captures every record any logger writes during the test, at DEBUG, twice:
as the record itself (message, arguments, traceback, bound context and ``extra`` fields, before
any redaction) and as the production JSON handler writes it (``configure_logging``, with the
secrets the processes give it). It fails the test if the App's private key (the PEM or any line
of it), an installation token the fake minted, any token- or JWT-shaped string, or the webhook
secret appears in either: redaction is the safety net, and questbot should not need it.

``people_read_words`` guards what people read: every comment questbot wrote to the fake in any
end-to-end test — status comments and replies, each create and each edit — and every check
run's output, the inbox issue's body and the pull requests' descriptions must hold no internal
identifier (a state or event name with an underscore) and no path of the host
(``tests.words.surface``).
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import AsyncIterator, Iterator

import pytest

from bot.observe.logs import configure_logging
from questbot_testing.fakegithub import shared_key_pair
from questbot_testing.sample import sample_spec
from questbot_testing.scenario import REPO
from questbot_testing.stack import SECRET, Stack, virtual_pacing
from tests.words.surface import problems as shown_problems

CREDENTIAL_SHAPES = re.compile(
    r"\b(?:gh[pousr]_[A-Za-z0-9_]{16,}|github_pat_[A-Za-z0-9_]{16,})"
    r"|\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"
)
"""GitHub's token prefixes and a JWT (the App's own, or anyone's)."""
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


@pytest.fixture
async def stack(redis_async_url: str, redis_async: object) -> AsyncIterator[Stack]:
    """A fresh stack on a flushed Redis; every request the bot made must have been valid,
    within the App's permissions and within GitHub's secondary limits (paced with GitHub's
    figures, on a clock that skips the waits: ``virtual_pacing``)."""
    limits, pace_time = virtual_pacing()
    s = await Stack(redis_async_url, scripted_specs={REPO: sample_spec()}, limits=limits,
                    pace_time=pace_time).start()
    try:
        yield s
        s.fake.assert_clean()
    finally:
        await s.stop()


class _Everything(logging.Handler):
    """Each record in full, unredacted: what questbot handed to logging."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        parts = [f"{record.name}: {record.getMessage()}"]
        parts += [f"{key}={value!r}" for key, value in vars(record).items()
                  if key not in _STANDARD]
        if record.exc_info:
            parts.append(logging.Formatter().formatException(record.exc_info))
        if record.stack_info:
            parts.append(record.stack_info)
        self.lines.append(" ".join(parts))


def leaks(text: str, secrets: dict[str, str]) -> list[str]:
    """What of ``secrets`` (name → value) or of a credential's shape is in ``text``."""
    found = [name for name, value in secrets.items() if value and value in text]
    found += [f"a credential: {match[:12]}…" for match in CREDENTIAL_SHAPES.findall(text)]
    return found


def _secrets(request: pytest.FixtureRequest) -> dict[str, str]:
    pem = shared_key_pair().private_pem
    secrets = {"the webhook secret": SECRET, "the App's private key": pem}
    body = [line for line in pem.splitlines() if line and not line.startswith("-----")]
    secrets |= {f"line {n} of the App's private key": line for n, line in enumerate(body, 1)}
    stack = request.node.funcargs.get("stack") or request.node.funcargs.get("ready")
    if isinstance(stack, Stack):
        secrets |= {f"installation token {token[:8]}…": token
                    for token in [*stack.fake.world.tokens, *stack.fake.world.revoked]}
    return secrets


@pytest.fixture(autouse=True)
def no_secrets_in_logs(request: pytest.FixtureRequest) -> Iterator[list[str]]:
    """Yields the records captured so far (a test may look at them)."""
    root = logging.getLogger()
    level = root.level
    written = io.StringIO()
    production = configure_logging(logging.DEBUG, stream=written,
                                   secrets=[SECRET, shared_key_pair().private_pem])
    everything = _Everything()
    root.addHandler(everything)
    try:
        yield everything.lines
    finally:
        root.removeHandler(everything)
        root.removeHandler(production)
        root.setLevel(level)
    secrets = _secrets(request)
    problems = []
    for line in everything.lines:
        problems += [f"{what} in a log record: {line[:300]}" for what in leaks(line, secrets)]
    for line in written.getvalue().splitlines():
        problems += [f"{what} in a log line: {line[:300]}" for what in leaks(line, secrets)]
    if problems:
        pytest.fail("credentials in the logs:\n  " + "\n  ".join(problems[:20]))


SHOWN = {"issues/create-comment": "body", "issues/update-comment": "body",
         "checks/create": "output", "checks/update": "output",
         "issues/create": "body", "issues/update": "body", "pulls/create": "body",
         "pulls/update": "body"}
"""Writes whose text people read from questbot, and the field it is in."""


def shown_texts(stack: Stack) -> list[tuple[str, str]]:
    """``(operation, text)`` of every comment and check run questbot wrote, by REST or in a
    batch of GraphQL mutations (``FakeGitHub.as_rest``)."""
    out: list[tuple[str, str]] = []
    for e in stack.fake.as_rest():
        where = SHOWN.get(e.operation_id or "")
        if where is None or not isinstance(e.json, dict):
            continue
        value = e.json.get(where)
        if where == "body" and isinstance(value, str):
            out.append((str(e.operation_id), value))
        elif where == "output" and isinstance(value, dict):
            out.append((str(e.operation_id), "# " + "\n".join(  # the title reads as a heading
                str(value.get(k) or "") for k in ("title", "summary", "text"))))
        if isinstance(e.json.get("title"), str):  # a pull request's or an issue's title
            out.append((str(e.operation_id), "# " + e.json["title"]))
    return out


def commits_of(stack: Stack) -> set[str]:
    """Every commit the fake GitHub holds (in a deleted repository too: questbot wrote of it
    before): the SHAs questbot's text may show as chips."""
    world = stack.fake.world
    return {sha for repo in [*world.repositories.values(), *world.deleted.values()]
            for sha in repo.git.commits}


@pytest.fixture(autouse=True)
def people_read_words(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    stacks = [v for v in request.node.funcargs.values() if isinstance(v, Stack)]
    found = [f"{operation}: {problem}" for stack in stacks
             for operation, text in shown_texts(stack)
             for problem in shown_problems(text, commits_of(stack))]
    if found:
        pytest.fail("what questbot showed people holds its own identifiers or host paths:\n  "
                    + "\n  ".join(sorted(set(found))[:20]))
