"""The security suite runs on the end-to-end harness: the whole stack on the strict fake GitHub
(``tests/e2e/conftest.py``'s ``stack``), with its guards — no credential in any log line, no
internal identifier or host path in anything people read."""

from tests.e2e.conftest import no_secrets_in_logs, people_read_words, stack

__all__ = ["no_secrets_in_logs", "people_read_words", "stack"]
