import unittest

from stats import mean, summary


class MeanTest(unittest.TestCase):
    def test_the_average(self) -> None:
        self.assertEqual(mean([10.0, 20.0, 60.0]), 30.0)


class SummaryTest(unittest.TestCase):
    def test_a_busy_day(self) -> None:
        self.assertEqual(summary([10.0, 30.0]), {"count": 2.0, "mean": 20.0, "slowest": 30.0})

    def test_a_day_with_no_requests(self) -> None:
        self.assertEqual(summary([]), {"count": 0.0, "mean": 0.0, "slowest": 0.0})


if __name__ == "__main__":
    unittest.main()
