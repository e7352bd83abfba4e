"""The cache of answers with an ETag is one per process, bounded in all, whatever the number of
installations a worker serves (``bot.github.etags``); one installation's answers never serve
another's read."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bot.github.etags import ANSWERS, Etags


def answer(n: int) -> tuple[str, None, dict[str, int], None]:
    return (f'"etag-{n}"', None, {"n": n}, None)


def test_many_installations_many_reads_stay_within_the_bound() -> None:
    """A worker that served 300 installations of 50 reads each (many quests, each its own
    repository) keeps ``ANSWERS`` answers, not 300 caches of them."""
    etags = Etags()
    for installation in range(300):
        view = etags.of(installation)
        for n in range(50):
            view[f"/repos/o{installation}/r/pulls/{n}"] = answer(n)
    assert len(etags) == ANSWERS
    # the most recent are the ones kept
    assert etags.of(299)["/repos/o299/r/pulls/49"] == answer(49)
    assert "/repos/o0/r/pulls/0" not in etags.of(0)


def test_an_installation_sees_only_its_own_answers() -> None:
    etags = Etags(maxsize=10)
    etags.of(1)["/repos/a/b"] = answer(1)
    assert "/repos/a/b" not in etags.of(2)
    etags.of(2)["/repos/a/b"] = answer(2)
    assert etags.of(1)["/repos/a/b"] == answer(1)
    assert etags.of(2)["/repos/a/b"] == answer(2)
    assert list(etags.of(1)) == ["/repos/a/b"] and len(etags.of(2)) == 1
    del etags.of(1)["/repos/a/b"]
    assert len(etags) == 1


@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 40)), max_size=300),
       st.integers(1, 50))
def test_the_bound_holds_for_any_reads(reads: list[tuple[int, int]], bound: int) -> None:
    etags = Etags(maxsize=bound)
    for installation, n in reads:
        etags.of(installation)[f"/u/{n}"] = answer(n)
        assert etags.of(installation)[f"/u/{n}"] == answer(n)  # the last written is kept
    assert len(etags) <= bound
    assert len(etags) == sum(len(etags.of(i)) for i in range(21))
