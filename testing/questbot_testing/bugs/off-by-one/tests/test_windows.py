import unittest

from windows import moving_average, windows


class WindowsTest(unittest.TestCase):
    def test_every_window_is_there(self) -> None:
        self.assertEqual(windows([1, 2, 3, 4], 2), [[1, 2], [2, 3], [3, 4]])

    def test_too_few_values_make_no_window(self) -> None:
        self.assertEqual(windows([1, 2], 3), [])

    def test_a_window_must_hold_a_value(self) -> None:
        with self.assertRaises(ValueError):
            windows([1, 2], 0)


class MovingAverageTest(unittest.TestCase):
    def test_the_average_of_each_window(self) -> None:
        self.assertEqual(moving_average([2, 4, 6, 8], 2), [3.0, 5.0, 7.0])


if __name__ == "__main__":
    unittest.main()
