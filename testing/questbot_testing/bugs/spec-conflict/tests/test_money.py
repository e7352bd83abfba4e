import unittest
from decimal import Decimal

from money import to_cents


class ToCentsTest(unittest.TestCase):
    def test_whole_cents_stay(self) -> None:
        self.assertEqual(to_cents("12.30"), Decimal("12.30"))

    def test_half_a_cent_rounds_up_as_on_the_invoice(self) -> None:
        # the invoice printer shows 0.125 as 0.13
        self.assertEqual(to_cents("0.125"), Decimal("0.13"))


if __name__ == "__main__":
    unittest.main()
