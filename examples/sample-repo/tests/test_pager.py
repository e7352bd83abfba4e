import unittest

from pager import page, page_count


class PageCountTest(unittest.TestCase):
    def test_full_pages(self) -> None:
        self.assertEqual(page_count(9, 3), 3)

    def test_a_partial_last_page_counts(self) -> None:
        self.assertEqual(page_count(10, 3), 4)

    def test_per_page_must_be_positive(self) -> None:
        with self.assertRaises(ValueError):
            page_count(10, 0)


class PageTest(unittest.TestCase):
    def test_first_page(self) -> None:
        self.assertEqual(page(list(range(10)), 1, 3), [0, 1, 2])

    def test_out_of_range(self) -> None:
        with self.assertRaises(IndexError):
            page(list(range(9)), 4, 3)


if __name__ == "__main__":
    unittest.main()
