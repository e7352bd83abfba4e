"""Amounts entering the ledger, rounded to the cent as LEDGER.md requires."""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal

CENT = Decimal("0.01")


def to_cents(amount: str) -> Decimal:
    """``amount`` rounded to the cent, half to even (LEDGER.md)."""
    return Decimal(amount).quantize(CENT, rounding=ROUND_HALF_EVEN)
