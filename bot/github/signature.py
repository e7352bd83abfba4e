"""Webhook signatures: check ``X-Hub-Signature-256`` over the raw body before anything parses it.

GitHub signs each delivery with HMAC-SHA256 of the exact request bytes, keyed by the webhook
secret, and sends ``sha256=<hex digest>``
(https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries). The check
must run on the bytes as received — re-serialised JSON would not match — and the comparison is
constant-time (``hmac.compare_digest``) so response timing reveals nothing about the digest.

Each way a signature can be wrong has its own error type, so the web handler can count them
apart, and all of them are ``SignatureError``, so it can refuse them with one ``except``.
"""

from __future__ import annotations

import hashlib
import hmac
import re

from bot.errors import Refused
from bot.github.errors import GitHubAdapterError

HEADER = "X-Hub-Signature-256"
PREFIX = "sha256="
_HEX = re.compile(r"[0-9a-fA-F]*")
_DIGEST_LENGTH = 64


class SignatureError(GitHubAdapterError, Refused):
    """The delivery's signature is absent or does not match; the delivery must be refused."""


class MissingSignatureError(SignatureError):
    """No ``X-Hub-Signature-256`` header: unsigned, or the webhook has no secret set."""


class MalformedSignatureError(SignatureError):
    """The header is present but is not ``sha256=`` followed by 64 hex digits."""


class SignatureMismatchError(SignatureError):
    """The header is well formed but was made with another secret or over other bytes."""


def _key(secret: str | bytes) -> bytes:
    if not secret:
        # An empty key "verifies" anything signed with an empty key: refuse it outright.
        raise ValueError(
            "the webhook secret is empty; set GITHUB_WEBHOOK_SECRET to the secret "
            "configured on the GitHub App's webhook"
        )
    return secret.encode() if isinstance(secret, str) else secret


def sign(secret: str | bytes, body: bytes) -> str:
    """The ``X-Hub-Signature-256`` value GitHub would send for ``body``; tests sign with it."""
    return PREFIX + hmac.new(_key(secret), body, hashlib.sha256).hexdigest()


def verify_signature(secret: str | bytes, body: bytes, header: str | None) -> None:
    """Return if ``header`` is GitHub's signature of ``body``; raise a ``SignatureError`` if not."""
    key = _key(secret)
    if header is None or not header.strip():
        raise MissingSignatureError(
            f"the delivery has no {HEADER} header; set a secret on the App's webhook "
            "so GitHub signs its deliveries"
        )
    value = header.strip()
    if not value.startswith(PREFIX):
        shown = value.split("=", 1)[0][:20]
        raise MalformedSignatureError(
            f"{HEADER} must start with {PREFIX!r} (got {shown!r}); only SHA-256 "
            "signatures are accepted"
        )
    digest = value[len(PREFIX) :]
    if not _HEX.fullmatch(digest):
        raise MalformedSignatureError(
            f"{HEADER} must be {PREFIX!r} followed by hex digits; the value has a "
            "character that is not 0-9 or a-f"
        )
    if len(digest) != _DIGEST_LENGTH:
        raise MalformedSignatureError(
            f"{HEADER} must carry {_DIGEST_LENGTH} hex digits after {PREFIX!r} "
            f"(got {len(digest)}); it is not a SHA-256 signature"
        )
    expected = hmac.new(key, body, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, digest.lower()):
        raise SignatureMismatchError(
            f"{HEADER} does not match the body ({len(body)} bytes); the delivery was "
            "signed with another secret or changed on the way — check that "
            "GITHUB_WEBHOOK_SECRET matches the App's webhook secret"
        )
