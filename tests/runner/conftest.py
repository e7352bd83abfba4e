"""The runner's tests stand on the journal's fixtures: a journal on a real Redis, and a recorder
of what adapters were asked to do."""

from tests.journal.conftest import Recorder, journal, recorder

__all__ = ["Recorder", "journal", "recorder"]
