"""A local fake of the GitHub REST API and webhook sender, shared by the tests and the demo.

Start it with ``async with FakeGitHub() as fake:`` and point a gidgethub client at ``fake.url``;
arrange scenes with :class:`~.actions.Actions` helpers (``create_repository``,
``push``, ``comment``, ``fail_check``…); end with ``fake.assert_clean()``. Every request and
answer is checked against GitHub's full REST description
(``questbot_testing.published``: the packages GitHub publishes), GraphQL against its schema,
and the rules of ``docs/BEHAVIOUR.md`` that questbot meets are enforced (``fakegithub.rules``).
Each repository is also served over git's smart HTTP at ``<fake.url>/<owner>/<name>.git``, by
real git over the same objects and refs (``fakegithub.smarthttp``).
"""

from questbot_testing.fakegithub.calls import GitHubError, Reply
from questbot_testing.fakegithub.keys import KeyPair, app_jwt, generate_key_pair, shared_key_pair
from questbot_testing.fakegithub.openapi import OpenAPI
from questbot_testing.fakegithub.server import Exchange, FakeGitHub
from questbot_testing.fakegithub.state import Permission
from questbot_testing.fakegithub.webhooks import (
    Delivery,
    DeliveryResult,
    Example,
    build_delivery,
    build_payload,
    deep_merge,
    example_files,
    load_example,
    send,
    signature_headers,
)

__all__ = [
    "Delivery",
    "DeliveryResult",
    "Example",
    "Exchange",
    "FakeGitHub",
    "GitHubError",
    "KeyPair",
    "OpenAPI",
    "Permission",
    "Reply",
    "app_jwt",
    "build_delivery",
    "build_payload",
    "deep_merge",
    "example_files",
    "generate_key_pair",
    "load_example",
    "send",
    "shared_key_pair",
    "signature_headers",
]
