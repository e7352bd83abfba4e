"""The model's file tools are not raced out of the checkout by a command running beside them.

A model may ask for several tools in one answer, and they run at once: a ``run_command``
whose sandboxed process keeps swapping a directory of the checkout for a link to the worker's
files, and ``read_file``/``search``/``list_files``/``write_file`` on paths through that
directory. Each tool judges the path first (no link out), then reads or writes it: if the
swap lands in between, the worker — unconfined — follows the link. Here a real sandboxed
command swaps ``d`` for a link to a directory outside the checkout as fast as it can while the
tools hammer ``d/...`` from threads, as pydantic-ai runs them; nothing from outside may come
back and nothing may be written there.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from pathlib import Path

from bot.agent import sandbox
from bot.agent.model.workbench import ToolRefused, Workbench

SWAP = """\
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
os.chdir(sys.argv[1])
end = time.time() + float(sys.argv[3])
os.symlink(sys.argv[2], "d_link")
swaps = 0
while time.time() < end:  # d is the checkout's directory, then a link out, then ...
    if libc.renameat2(AT_FDCWD, b"d", AT_FDCWD, b"d_link", RENAME_EXCHANGE) != 0:
        sys.exit(f"renameat2: {os.strerror(ctypes.get_errno())}")
    swaps += 1
print("swaps", swaps)
"""
SECRET = "TOP SECRET worker file"


def hammer(bench: Workbench, done: threading.Event) -> tuple[list[str], int]:
    """Call every file tool on paths through ``d`` until ``done``; what came back from
    outside, and how many calls were made."""
    leaks: list[str] = []
    calls = 0
    while not done.is_set():
        for name, tool in [("read_file", lambda: bench.read_file("d/key")),
                           ("read_file", lambda: bench.read_file("d/inner/key")),
                           ("search", lambda: bench.search("SECRET", "d")),
                           ("search", lambda: bench.search("SECRET", "d/inner")),
                           ("list_files", lambda: bench.list_files("d")),
                           ("list_files", lambda: bench.list_files("d/inner")),
                           ("write_file", lambda: bench.write_file("d/planted.py", "x\n")),
                           ("write_file", lambda: bench.write_file("d/inner/planted.py",
                                                                   "x\n"))]:
            calls += 1
            try:
                out = tool()
            except (ToolRefused, OSError):
                continue
            if SECRET in out or "outside-only" in out:
                leaks.append(f"{name}: {out[:200]}")
    return leaks, calls


async def test_a_link_swapped_in_under_a_tool_never_takes_it_outside(tmp_path: Path) -> None:
    outside = tmp_path / "worker"
    (outside / "inner").mkdir(parents=True)
    for where in (outside, outside / "inner"):
        (where / "key").write_text(SECRET + "\n")
        (where / "outside-only").write_text("a file only the worker has\n")
    checkout = tmp_path / "checkout"
    (checkout / "d" / "inner").mkdir(parents=True)
    for where in (checkout / "d", checkout / "d" / "inner"):
        (where / "key").write_text("a harmless file of the checkout\n")
    bench = Workbench(checkout=checkout, home=tmp_path / "home", writable=True)

    done = threading.Event()
    racing = asyncio.create_task(asyncio.to_thread(hammer, bench, done))
    try:
        result = await bench.run([sandbox.python(), "-c", SWAP, str(checkout), str(outside),
                                  "4"])
    finally:
        done.set()
    leaks, calls = await racing
    assert result.startswith("exit code 0"), result
    assert calls > 100
    assert leaks == []
    assert sorted(p.name for p in outside.iterdir()) == ["inner", "key", "outside-only"]
    assert sorted(p.name for p in (outside / "inner").iterdir()) == ["key", "outside-only"]


async def test_a_fifo_a_command_leaves_behind_hangs_no_tool(tmp_path: Path) -> None:
    """A FIFO opened for reading waits for a writer that never comes: ``search`` used to read
    every file it listed, and hung the worker's thread until the conversation timed out."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "a.txt").write_text("x\n")
    bench = Workbench(checkout=checkout, home=tmp_path / "home", writable=True)
    made = await bench.run([sandbox.python(), "-c", "import os; os.mkfifo('pipe')"])
    assert made.startswith("exit code 0") and (checkout / "pipe").exists()

    async def soon(call: Callable[[], str]) -> str:
        try:
            return await asyncio.wait_for(asyncio.to_thread(call), 5)
        except ToolRefused as exc:
            return f"refused: {exc}"
        except TimeoutError:
            os.close(os.open(checkout / "pipe", os.O_WRONLY | os.O_NONBLOCK))  # let it go
            raise AssertionError("a tool hung on the FIFO") from None

    assert "a.txt:1: x" in await soon(lambda: bench.search("x"))
    assert "refused" in await soon(lambda: bench.read_file("pipe"))
    assert "refused" in await soon(lambda: bench.write_file("pipe", "y"))
