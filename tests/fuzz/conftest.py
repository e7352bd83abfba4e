"""The fuzzers that go through GitHub use the GitHub adapter's fixtures: the fake and a world."""

from tests.github.conftest import fake, world

__all__ = ["fake", "world"]
