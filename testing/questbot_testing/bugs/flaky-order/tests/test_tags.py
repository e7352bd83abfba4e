import unittest

from tags import distinct


class DistinctTest(unittest.TestCase):
    def test_blank_tags_are_dropped(self) -> None:
        self.assertEqual(distinct(["  ", ""]), set())

    def test_each_tag_once(self) -> None:
        self.assertEqual(list(distinct(["Bug", "bug ", "docs"])), ["bug", "docs"])


if __name__ == "__main__":
    unittest.main()
