"""Webhook signatures: GitHub's published vector, each way a header can be wrong, properties."""

from __future__ import annotations

import hashlib
import hmac

import pytest
from gidgethub import ValidationFailure
from gidgethub.sansio import validate_event
from hypothesis import given
from hypothesis import strategies as st

from bot.github.signature import (
    MalformedSignatureError,
    MissingSignatureError,
    SignatureError,
    SignatureMismatchError,
    sign,
    verify_signature,
)

# https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries#testing-the-webhook-payload-validation
GITHUB_SECRET = "It's a Secret to Everybody"
GITHUB_BODY = b"Hello, World!"
GITHUB_SIGNATURE = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"


def test_github_published_vector_signs() -> None:
    assert sign(GITHUB_SECRET, GITHUB_BODY) == GITHUB_SIGNATURE


def test_github_published_vector_verifies() -> None:
    verify_signature(GITHUB_SECRET, GITHUB_BODY, GITHUB_SIGNATURE)


def test_bytes_secret_is_the_same_as_str() -> None:
    verify_signature(GITHUB_SECRET.encode(), GITHUB_BODY, GITHUB_SIGNATURE)


def test_uppercase_hex_is_accepted() -> None:
    upper = "sha256=" + GITHUB_SIGNATURE.removeprefix("sha256=").upper()
    verify_signature(GITHUB_SECRET, GITHUB_BODY, upper)


@pytest.mark.parametrize("header", [None, "", "   "])
def test_missing_header(header: str | None) -> None:
    with pytest.raises(MissingSignatureError, match="no X-Hub-Signature-256 header"):
        verify_signature(GITHUB_SECRET, GITHUB_BODY, header)


@pytest.mark.parametrize(
    "header",
    [
        "sha1=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
        "757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
        "SHA256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
    ],
)
def test_wrong_prefix(header: str) -> None:
    with pytest.raises(MalformedSignatureError, match="must start with 'sha256='"):
        verify_signature(GITHUB_SECRET, GITHUB_BODY, header)


def test_non_hex_digest() -> None:
    header = "sha256=" + "z" * 64
    with pytest.raises(MalformedSignatureError, match="not 0-9 or a-f"):
        verify_signature(GITHUB_SECRET, GITHUB_BODY, header)


@pytest.mark.parametrize("digits", [0, 63, 65, 128])
def test_wrong_length_digest(digits: int) -> None:
    with pytest.raises(MalformedSignatureError, match=f"got {digits}"):
        verify_signature(GITHUB_SECRET, GITHUB_BODY, "sha256=" + "a" * digits)


def test_wrong_secret() -> None:
    with pytest.raises(SignatureMismatchError, match="does not match the body"):
        verify_signature("another secret", GITHUB_BODY, GITHUB_SIGNATURE)


def test_wrong_body() -> None:
    with pytest.raises(SignatureMismatchError, match=r"\(14 bytes\)"):
        verify_signature(GITHUB_SECRET, GITHUB_BODY + b"\n", GITHUB_SIGNATURE)


def test_every_failure_is_a_signature_error() -> None:
    for error in (MissingSignatureError, MalformedSignatureError, SignatureMismatchError):
        assert issubclass(error, SignatureError)


def test_an_empty_secret_is_refused_not_used() -> None:
    with pytest.raises(ValueError, match="webhook secret is empty"):
        sign("", GITHUB_BODY)
    with pytest.raises(ValueError, match="webhook secret is empty"):
        verify_signature(b"", GITHUB_BODY, sign("x", GITHUB_BODY))


def test_messages_do_not_echo_the_header() -> None:
    secretish = "sha256=" + "f" * 64
    with pytest.raises(SignatureMismatchError) as caught:
        verify_signature(GITHUB_SECRET, GITHUB_BODY, secretish)
    assert "f" * 64 not in str(caught.value)


@given(secret=st.binary(min_size=1, max_size=64), body=st.binary(max_size=512))
def test_sign_then_verify_passes(secret: bytes, body: bytes) -> None:
    verify_signature(secret, body, sign(secret, body))


@given(
    secret=st.binary(min_size=1, max_size=64),
    body=st.binary(min_size=1, max_size=512),
    data=st.data(),
)
def test_any_single_byte_change_fails(secret: bytes, body: bytes, data: st.DataObject) -> None:
    header = sign(secret, body)
    index = data.draw(st.integers(0, len(body) - 1), label="index")
    flip = data.draw(st.integers(1, 255), label="xor")
    changed = bytearray(body)
    changed[index] ^= flip
    with pytest.raises(SignatureMismatchError):
        verify_signature(secret, bytes(changed), header)


@given(secret=st.binary(min_size=1, max_size=64), body=st.binary(max_size=512), data=st.data())
def test_any_single_digit_change_in_the_header_fails(
    secret: bytes, body: bytes, data: st.DataObject
) -> None:
    header = sign(secret, body)
    index = data.draw(st.integers(len("sha256="), len(header) - 1), label="index")
    replacement = data.draw(
        st.sampled_from("0123456789abcdef").filter(lambda c: c != header[index])
    )
    with pytest.raises(SignatureMismatchError):
        verify_signature(secret, body, header[:index] + replacement + header[index + 1 :])


# --- against gidgethub's check (why questbot keeps its own: docs/decisions.md) ------------------


@given(secret=st.text(min_size=1, max_size=64), body=st.binary(max_size=512), data=st.data())
def test_on_sha256_headers_questbot_and_gidgethub_agree(
    secret: str, body: bytes, data: st.DataObject
) -> None:
    """Where gidgethub's ``validate_event`` can be asked (a text secret, a lower-case SHA-256
    header), it and questbot's check accept and refuse the same deliveries."""
    header = sign(secret, body)
    if data.draw(st.booleans(), label="tampered"):
        index = data.draw(st.integers(len("sha256="), len(header) - 1), label="index")
        header = header[:index] + ("0" if header[index] != "0" else "1") + header[index + 1 :]
    try:
        validate_event(body, signature=header, secret=secret)
        gidgethub_accepts = True
    except ValidationFailure:
        gidgethub_accepts = False
    try:
        verify_signature(secret, body, header)
        questbot_accepts = True
    except SignatureError:
        questbot_accepts = False
    assert questbot_accepts == gidgethub_accepts


def test_what_gidgethub_takes_and_questbot_refuses() -> None:
    """The guarantees gidgethub's check does not give: SHA-1 refused, an empty secret refused,
    upper-case hex read as GitHub's digest."""
    sha1 = "sha1=" + hmac.new(GITHUB_SECRET.encode(), GITHUB_BODY, hashlib.sha1).hexdigest()
    validate_event(GITHUB_BODY, signature=sha1, secret=GITHUB_SECRET)
    with pytest.raises(MalformedSignatureError):
        verify_signature(GITHUB_SECRET, GITHUB_BODY, sha1)
    empty = "sha256=" + hmac.new(b"", GITHUB_BODY, hashlib.sha256).hexdigest()
    validate_event(GITHUB_BODY, signature=empty, secret="")
    with pytest.raises(ValueError, match="webhook secret is empty"):
        verify_signature("", GITHUB_BODY, empty)
    upper = "sha256=" + GITHUB_SIGNATURE.removeprefix("sha256=").upper()
    with pytest.raises(ValidationFailure):
        validate_event(GITHUB_BODY, signature=upper, secret=GITHUB_SECRET)
    verify_signature(GITHUB_SECRET, GITHUB_BODY, upper)
