import unittest

from uploads import resolve


class ResolveTest(unittest.TestCase):
    def test_an_upload_is_found(self) -> None:
        self.assertEqual(resolve("uploads", "report.pdf"), "uploads/report.pdf")

    def test_an_absolute_name_is_refused(self) -> None:
        with self.assertRaises(PermissionError):
            resolve("uploads", "/outside/passwd")

    def test_a_name_that_climbs_out_is_refused(self) -> None:
        with self.assertRaises(PermissionError):
            resolve("uploads", "../settings.py")


if __name__ == "__main__":
    unittest.main()
