import unittest

from timeouts import deadline, load


class LoadTest(unittest.TestCase):
    def test_comments_and_blank_lines_are_skipped(self) -> None:
        self.assertEqual(load("# service\n\nname = api  # public\n"), {"name": "api"})


class DeadlineTest(unittest.TestCase):
    def test_the_default_timeout(self) -> None:
        self.assertEqual(deadline(load(""), 100.0), 130.0)

    def test_the_timeout_of_the_settings_file(self) -> None:
        self.assertEqual(deadline(load("timeout = 45\n"), 100.0), 145.0)


if __name__ == "__main__":
    unittest.main()
