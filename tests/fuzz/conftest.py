"""The fuzzers reuse the fixtures of the rooms they fuzz: the web app behind aiohttp's test
client, the fake GitHub with a world around it, and the end-to-end stack."""

from tests.e2e.conftest import stack
from tests.github.conftest import fake, world
from tests.web.conftest import client, make_client, metrics

__all__ = ["client", "fake", "make_client", "metrics", "stack", "world"]
