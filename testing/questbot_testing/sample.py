"""The sample repository of the demo (``examples/sample-repo``) and its scripted agent spec.

The sample is a tiny pager whose ``page_count`` rounds down, so a partial last page is lost;
its own ``tests/test_pager.py`` catches that. The spec below is what a careful agent would
answer for it: claims that quote the real lines, a focused reproduction test that fails on the
base, a low-risk plan and a one-line fix. The claims are validated against the checkout like
any agent's, so if the sample drifts from the spec the demo fails loudly at research.
"""

from __future__ import annotations

from pathlib import Path

from bot.agent import sandbox
from bot.agent.scripted import Edit, ScriptedSpec
from bot.agent.validation import Claim, Evidence
from bot.core.proof import Risk

SAMPLE_REPO = Path(__file__).resolve().parents[2] / "examples" / "sample-repo"
REPRODUCTION_PATH = "tests/test_questbot_reproduction.py"
REPRODUCTION_TEST = '''\
"""Written by questbot: the smallest check that shows the lost last page."""

import unittest

from pager import page, page_count


class LastPartialPageTest(unittest.TestCase):
    def test_ten_items_at_three_a_page_make_four_pages(self) -> None:
        self.assertEqual(page_count(10, 3), 4)

    def test_the_last_page_holds_the_remainder(self) -> None:
        self.assertEqual(page(list(range(10)), 4, 3), [9])


if __name__ == "__main__":
    unittest.main()
'''


def sample_files(root: Path = SAMPLE_REPO) -> dict[str, str]:
    """The sample repository as path → text, to create it in the (fake) GitHub."""
    skip = {"__pycache__", ".git"}
    return {
        path.relative_to(root).as_posix(): path.read_text()
        for path in sorted(root.rglob("*"))
        if path.is_file() and not skip.intersection(path.relative_to(root).parts)
    }


def sample_spec(python: str | None = None) -> ScriptedSpec:
    """The scripted agent's answers for the sample; ``python`` (by default the interpreter
    questbot runs on, as the sandbox shows it) runs the reproduction."""
    python = python or sandbox.python()
    return ScriptedSpec(
        hypothesis=(
            "page_count divides with //, which rounds down, so a partial last page is "
            "dropped: 10 items at 3 a page give 3 pages and item 9 is never shown."
        ),
        claims=(
            Claim(statement="page_count rounds the page count down",
                  confidence=0.9,
                  evidence=(Evidence(path="pager.py", quote="return total // per_page"),)),
            Claim(statement="the existing test expects 4 pages for 10 items at 3 a page",
                  confidence=0.95,
                  evidence=(Evidence(path="tests/test_pager.py",
                                     quote="self.assertEqual(page_count(10, 3), 4)"),)),
            Claim(statement="page() refuses page numbers past page_count, so item 9 is lost",
                  confidence=0.8,
                  evidence=(Evidence(path="pager.py", quote="if not 1 <= number <= last:"),)),
        ),
        reproduction_name="test_questbot_reproduction",
        reproduction_files={REPRODUCTION_PATH: REPRODUCTION_TEST},
        reproduction_command=(python, "-m", "unittest", "-q", "tests.test_questbot_reproduction"),
        plan="Round the page count up: -(-total // per_page). One line in pager.py.",
        plan_files=("pager.py",),
        risk=Risk.LOW,
        patch_edits=(Edit(path="pager.py", old="return total // per_page",
                          new="return -(-total // per_page)"),),
        message="Count a partial last page in page_count",
        tokens_per_stage=1200,
    )
