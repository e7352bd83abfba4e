"""The checks of single setting values: ports, URLs, flags and bounded numbers.

Each check returns the value as questbot uses it or raises ``ValueError`` with the problem in
a few lowercase words ("is not a port number", "has no host"); ``bot.settings.process`` adds
the name, the value and the fix. They are shared by the processes' ``Config`` and by ``python -m bot
register``, whose URLs are checked the same way.

A URL is well formed when ``urllib.parse`` splits it into a scheme questbot can use, a host
(or, for ``unix://``, a path), and a port within range if it has one; whitespace anywhere is
refused (a value pasted with a space or a newline in it). ``shown_url`` hides the password of
a URL that carries one, so a problem never quotes a Redis password.
"""

from __future__ import annotations

from collections.abc import Collection
from urllib.parse import SplitResult, urlsplit

from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey
from cryptography.hazmat.primitives.serialization import load_pem_private_key

TRUE = frozenset({"1", "true", "t", "yes", "y", "on"})
FALSE = frozenset({"0", "false", "f", "no", "n", "off"})


def port(value: object) -> int:
    """A TCP port: a whole number from 1 to 65535."""
    text = str(value).strip()
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise ValueError("is not a port number")
    return int(text)


def flag(value: object) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text not in TRUE | FALSE:
        raise ValueError("is not true or false")
    return text in TRUE


def whole(value: object, low: int, high: int) -> int:
    """A whole number from ``low`` to ``high``."""
    text = str(value).strip()
    if not text.isdigit():
        raise ValueError("is not a whole number")
    number = int(text)
    if not low <= number <= high:
        raise ValueError(f"is not between {low} and {high}")
    return number


def decimal(value: object, low: float, high: float) -> float:
    """A number from ``low`` to ``high`` written with digits and at most one point (``0.05``,
    ``72``): no sign, exponent, ``nan`` or ``inf``, which ``float`` alone would take."""
    text = str(value).strip()
    whole_part, _, fraction = text.partition(".")
    if not (whole_part or fraction) or not (whole_part + fraction).isdigit() or (
            whole_part and not whole_part.isdigit()) or (fraction and not fraction.isdigit()):
        raise ValueError("is not a number")
    number = float(text)
    if not low <= number <= high:
        raise ValueError(f"is not between {low:g} and {high:g}")
    return number


def _split(value: str, schemes: Collection[str], kind: str) -> SplitResult:
    if any(c.isspace() for c in value):
        raise ValueError("has a space or a line break in it")
    parts = urlsplit(value)
    if parts.scheme not in schemes or "://" not in value:
        raise ValueError(f"is not {kind} URL")
    try:
        parts.port  # noqa: B018 - urllib checks the port when it is read
    except ValueError:
        raise ValueError("has a port that is not a number from 1 to 65535") from None
    if parts.port == 0:
        raise ValueError("has a port that is not a number from 1 to 65535")
    return parts


def http_url(value: str, *, path_allowed: bool = True) -> str:
    """An ``http(s)://host[:port][/path]`` URL without credentials, query or fragment; the
    trailing ``/`` dropped (paths are appended to it)."""
    parts = _split(value, ("https", "http"), "an http(s)")
    if not parts.hostname:
        raise ValueError("has no host")
    if parts.username is not None or parts.password is not None:
        raise ValueError("has a user name or password in it; put no credentials in the URL")
    if parts.query or parts.fragment or value.endswith(("?", "#")):
        raise ValueError("has a query or fragment (?… or #…)")
    if not path_allowed and parts.path.strip("/"):
        raise ValueError("has a path; give only the scheme and host")
    return value.rstrip("/")


def redis_url(value: str) -> str:
    """``redis://[[user]:password@]host[:port][/db]``, ``rediss://…``, ``unix:///path``, or
    ``redis+cluster://host:port[,host:port…]`` (``rediss+cluster://``): nodes of a Redis
    Cluster."""
    scheme = value.partition("://")[0]
    if scheme in ("redis+cluster", "rediss+cluster") and "," in value.partition("://")[2]:
        head, _, tail = value.partition("://")
        netloc, slash, rest = tail.partition("/")
        auth, at, hosts = netloc.rpartition("@")
        for node in hosts.split(","):  # every node must be a host:port of its own
            redis_url(f"{head}://{auth}{at}{node}{slash}{rest}")
        return value
    parts = _split(value, ("redis", "rediss", "unix", "redis+cluster", "rediss+cluster"),
                   "a redis://, rediss://, unix:// or redis+cluster://")
    if parts.scheme == "unix":
        if not parts.path:
            raise ValueError("has no socket path (unix:///path/to/redis.sock)")
        return value
    if not parts.hostname:
        raise ValueError("has no host")
    database = parts.path.strip("/")
    if database and not database.isdigit():
        raise ValueError("has a database that is not a number (redis://host:6379/0)")
    if parts.scheme.endswith("+cluster") and database not in ("", "0"):
        raise ValueError("names a database other than 0, which Redis Cluster does not have "
                         "(redis+cluster://host:6379/0)")
    return value


def rsa_private_key(pem: str | bytes) -> str | bytes:
    """``pem`` when it is an RSA private key in PEM form, as a GitHub App's key is; the check
    only (the key is parsed and dropped: the GitHub room loads it for itself when it signs)."""
    data = pem.encode() if isinstance(pem, str) else pem
    try:
        key = load_pem_private_key(data, password=None)
    except (ValueError, TypeError):
        raise ValueError("does not parse as a private key in PEM form") from None
    if not isinstance(key, RSAPrivateKey):
        raise ValueError(f"is a {type(key).__name__}, not an RSA private key (GitHub Apps "
                         "sign with RSA)")
    return pem


def shown_url(value: str) -> str:
    """``value`` with the password of its credentials replaced by ``***``."""
    try:
        parts = urlsplit(value)
    except ValueError:
        return value if "@" not in value else "(a URL with credentials)"
    if parts.password is None:
        return value
    user = parts.username or ""
    host = parts.netloc.rpartition("@")[2]
    return parts._replace(netloc=f"{user}:***@{host}").geturl()

