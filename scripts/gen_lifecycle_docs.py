"""Regenerate docs/lifecycle.md from the core's transition table."""

from __future__ import annotations

from pathlib import Path

from bot.tools.lifecycle_docs import render

if __name__ == "__main__":
    target = Path(__file__).resolve().parent.parent / "docs" / "lifecycle.md"
    target.write_text(render(), encoding="utf-8")
    print(f"wrote {target}")
