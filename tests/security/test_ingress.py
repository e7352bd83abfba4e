"""Slow clients against the web process: ``python -m bot serve``, as run in production, on a
real Redis, driven over real sockets.

A signed delivery whose body trickles in a byte every half second, headers that trickle the
same way, and a connection that says nothing at all are each answered 408 and closed within
a few seconds — before, they held their connection (and a handler) open for as long as the
client liked. Meanwhile a prompt delivery is answered at once, and a kept-alive connection
that idles between two prompt requests is still served: the deadline is on reading a request,
not on a connection's quiet time.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from bot.github.signature import sign

ROOT = Path(__file__).resolve().parents[2]
SECRET = "questbot-ingress-test-secret"
pytestmark = pytest.mark.slow  # each waits out the web process's deadlines
DEADLINE = 5.0
"""What the web process allows for a request's headers, and for its body."""
MARGIN = 4.0
TRICKLE = 0.5


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


@pytest.fixture(scope="module")
def web(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """The web process, started as ``python -m bot serve``; its port."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()).decode()
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GITHUB_APP_ID": "12345",
           "GITHUB_PRIVATE_KEY": key, "GITHUB_WEBHOOK_SECRET": SECRET, "REDIS_URL": redis_url,
           "PORT": str(port), "QUESTBOT_ENV_FILE": str(tmp_path_factory.mktemp("env") / ".env")}
    log = tmp_path_factory.mktemp("web") / "web.log"
    with log.open("wb") as out:
        process = subprocess.Popen([sys.executable, "-m", "bot", "serve"], cwd=ROOT, env=env,
                                   stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while not healthy(port):
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        yield port
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def signed_request(body: bytes) -> bytes:
    """The request line and headers of a signed delivery of ``body``."""
    headers = {"Host": "127.0.0.1", "Content-Type": "application/json",
               "Content-Length": str(len(body)), "X-GitHub-Event": "issues",
               "X-GitHub-Delivery": str(uuid.uuid4()), "X-Hub-Signature-256": sign(SECRET, body),
               "User-Agent": "GitHub-Hookshot/questbot-test"}
    return ("POST /webhook HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
            + "\r\n").encode()


def body() -> bytes:
    return json.dumps({"action": "opened", "padding": "x" * 200}).encode()


class Trickle:
    """Sends ``data`` a byte every ``TRICKLE`` seconds from a thread, until it is all sent,
    the server closes the connection, or ``stop``."""

    def __init__(self, sock: socket.socket, data: bytes) -> None:
        self.sock, self.data = sock, data
        self.sent = 0
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        for byte in self.data:
            if self.stopped.wait(TRICKLE):
                return
            try:
                self.sock.sendall(bytes([byte]))
            except OSError:
                return
            self.sent += 1

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join()


def answer_of(sock: socket.socket, within: float) -> tuple[bytes, bool, float]:
    """What the server sent within ``within`` seconds, whether it closed the connection by
    then, and when it closed it (seconds from now; ``within`` when it did not)."""
    started = time.monotonic()
    received = b""
    while (left := within - (time.monotonic() - started)) > 0:
        sock.settimeout(left)
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            break
        except ConnectionResetError:
            return received, True, time.monotonic() - started
        if not chunk:
            return received, True, time.monotonic() - started
        received += chunk
    return received, False, within


@contextlib.contextmanager
def connection(port: int) -> Iterator[socket.socket]:
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        yield sock
    finally:
        sock.close()


def test_a_body_trickled_a_byte_at_a_time_gets_408_and_its_connection_closed(web: int) -> None:
    with connection(web) as sock:
        payload = body()
        sock.sendall(signed_request(payload))
        trickle = Trickle(sock, payload)
        try:
            received, closed, took = answer_of(sock, DEADLINE + MARGIN)
        finally:
            trickle.stop()
    assert received.startswith(b"HTTP/1.1 408 "), (received, took)
    assert closed, f"the connection was still open {took:.1f} s later"
    assert b'"status":"timed_out"' in received and b"Connection: close" in received
    assert trickle.sent < len(payload)  # it never finished: the answer did not wait for it


def test_headers_trickled_a_byte_at_a_time_get_408_and_the_connection_closed(web: int) -> None:
    with connection(web) as sock:
        sock.sendall(b"POST /webhook HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        trickle = Trickle(sock, b"X-Slow: " + b"a" * 200 + b"\r\n\r\n")
        try:
            received, closed, took = answer_of(sock, DEADLINE + MARGIN)
        finally:
            trickle.stop()
    assert received.startswith(b"HTTP/1.1 408 "), (received, took)
    assert closed, f"the connection was still open {took:.1f} s later"


def test_a_connection_that_sends_nothing_is_closed(web: int) -> None:
    with connection(web) as sock:
        received, closed, took = answer_of(sock, DEADLINE + MARGIN)
    assert closed, f"the connection was still open {took:.1f} s later"
    assert received.startswith(b"HTTP/1.1 408 ") or received == b"", received


def test_slow_clients_keep_no_prompt_delivery_waiting(web: int) -> None:
    payload = body()
    slow: list[tuple[socket.socket, Trickle]] = []
    try:
        for _ in range(20):
            sock = socket.create_connection(("127.0.0.1", web), timeout=5)
            sock.sendall(signed_request(payload))
            slow.append((sock, Trickle(sock, payload)))
        prompt = body()
        request = urllib.request.Request(f"http://127.0.0.1:{web}/webhook", data=prompt,
                                         method="POST")
        for line in signed_request(prompt).decode().split("\r\n")[1:]:
            if line and not line.startswith(("Host", "Content-Length")):
                name, value = line.split(": ", 1)
                request.add_header(name, value)
        started = time.monotonic()
        with urllib.request.urlopen(request, timeout=10) as answer:
            assert answer.status == 202
        assert time.monotonic() - started < 2
        for sock, _trickle in slow:  # and every slow one is answered and closed in time
            received, closed, _took = answer_of(sock, DEADLINE + MARGIN)
            assert received.startswith(b"HTTP/1.1 408 ") and closed, received
    finally:
        for sock, trickle in slow:
            trickle.stop()
            sock.close()


def test_a_kept_alive_connection_may_idle_between_prompt_requests(web: int) -> None:
    request = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    with connection(web) as sock:
        sock.sendall(request)
        first, closed, _took = answer_of(sock, 2)
        assert first.startswith(b"HTTP/1.1 200 ") and not closed, first
        time.sleep(DEADLINE + 1)  # quiet for longer than a request may take to arrive
        sock.sendall(request)
        second, closed, _took = answer_of(sock, 2)
    assert second.startswith(b"HTTP/1.1 200 ") and not closed, second
