"""The model's tools stay inside the checkout and hand back what they read as untrusted data."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from pydantic import SecretStr
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.usage import RequestUsage

from bot.agent import sandbox
from bot.agent.model.conversation import spent
from bot.agent.model.endpoint import ModelEndpoint, Prices, Wire
from bot.agent.model.untrusted import FENCE_TAG
from bot.agent.model.workbench import ToolRefused, Workbench


def bench(checkout: Path, **kw: object) -> Workbench:
    return Workbench(checkout=checkout, home=checkout.parent / "home", **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", "link_out", ".git/config",
                                  "src/../../outside.txt", ""])
def test_paths_out_of_the_checkout_are_refused(checkout: Path, path: str) -> None:
    tools = bench(checkout, writable=True)
    for call in (lambda: tools.read_file(path), lambda: tools.write_file(path, "x"),
                 lambda: tools.list_files(path), lambda: tools.search("x", path)):
        with pytest.raises(ToolRefused, match="not in the checkout"):
            call()
    assert (checkout.parent / "outside.txt").read_text().startswith("TOP SECRET")


def test_reading_numbers_the_lines_and_fences_them(checkout: Path) -> None:
    text = bench(checkout).read_file("src/app.py", 2, 3)
    assert text.startswith(f'<{FENCE_TAG} source="file src/app.py">')
    assert '    2      """Add two numbers."""' in text and "(lines 2-3 of 7)" in text
    assert "def divide" not in text


def test_listing_and_search_skip_links_out_and_git(checkout: Path) -> None:
    tools = bench(checkout)
    listed = tools.list_files()
    assert "src/app.py" in listed and "link_in" in listed
    assert "link_out" not in listed and ".git/" not in listed
    found = tools.search(r"def \w+")
    assert "src/app.py:1: def add(a, b):" in found and "src/app.py:6: def divide" in found
    assert "TOP SECRET" not in tools.search("SECRET")
    with pytest.raises(ToolRefused, match="not a regular expression"):
        tools.search("(")


def test_writing_needs_a_stage_that_writes(checkout: Path) -> None:
    with pytest.raises(ToolRefused, match="does not change it"):
        bench(checkout).write_file("src/new.py", "x = 1\n")
    tools = bench(checkout, writable=True)
    assert tools.write_file("src/deep/new.py", "x = 1\n") == "wrote 1 lines to src/deep/new.py"
    assert (checkout / "src" / "deep" / "new.py").read_text() == "x = 1\n"


async def test_a_command_runs_without_a_shell_and_its_output_is_fenced(checkout: Path) -> None:
    tools = bench(checkout)
    out = await tools.run([sandbox.python(), "-c", "import os; print(sorted(os.environ))"
                           "; raise SystemExit(3)"])
    assert out.startswith("exit code 3\n") and f"<{FENCE_TAG} source=" in out
    assert "GITHUB" not in out and "REDIS" not in out  # the worker's environment stays out
    shell = await tools.run(["echo hi; rm -rf /"])  # one word, no shell: it cannot start
    assert shell.startswith("exit code 127")
    with pytest.raises(ToolRefused):
        await tools.run([])


def test_the_log_tool_says_when_there_is_no_log(checkout: Path) -> None:
    assert "No CI log" in bench(checkout).read_log()
    assert "exit code 1" in bench(checkout, log="##[group]Run x\n##[error]exit code 1").read_log()


def response(inp: int, out: int, cost: str | None = None) -> ModelResponse:
    return ModelResponse(parts=[TextPart("x")], usage=RequestUsage(
        input_tokens=inp, output_tokens=out, cost=None if cost is None else Decimal(cost)))


def test_usage_is_summed_and_priced_and_cents_round_up() -> None:
    messages = [ModelRequest(parts=[UserPromptPart("hi")]), response(1000, 100, "0.0004"),
                response(2000, 50, "0.0007")]
    usage = spent(messages, None)
    assert (usage.tokens, usage.cost_cents) == (3150, 1)
    assert usage.cost_usd == pytest.approx(0.0011)
    priced = spent(messages, Prices(input=Decimal("2"), output=Decimal("8")))
    assert priced.cost_usd == pytest.approx((3000 * 2 + 150 * 8) / 1e6)
    unknown = spent([response(10, 10)], None)
    assert (unknown.tokens, unknown.cost_cents, unknown.cost_usd) == (20, 0, None)


def test_the_key_never_shows_in_the_endpoint() -> None:
    endpoint = ModelEndpoint(wire=Wire.ANTHROPIC, api_key=SecretStr("sk-ant-secret"),
                             model="claude-sonnet-4-5")
    assert "sk-ant-secret" not in repr(endpoint) and "sk-ant-secret" not in str(endpoint)
    assert endpoint.base_url == "https://api.anthropic.com"
