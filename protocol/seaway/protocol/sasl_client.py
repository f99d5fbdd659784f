"""The client side of SASL PLAIN and SCRAM-SHA-256/512 (RFC 4616, RFC 5802, RFC 7677), as
Kafka's clients speak them inside SaslAuthenticate.

:func:`sasl_exchange` yields each token to send and receives each server answer, so the
caller owns the framing (SaslAuthenticate requests). SCRAM as Kafka's ``ScramSaslClient``:
GS2 header ``n,,`` (no channel binding, no authzid), a random nonce of printable
characters, at least 4096 iterations required of the server (a weaker server is refused,
as Kafka's client refuses it), and the server's final signature checked in constant time,
so a server that does not know the password cannot pass for the broker.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
from collections.abc import Generator

from seaway.errors import SeawayError

__all__ = ["MECHANISMS", "SaslClientError", "sasl_exchange"]

MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
_HASHES = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
_MIN_ITERATIONS = 4096


class SaslClientError(SeawayError):
    """The exchange failed on our side (a server answer that does not verify or parse)."""


def _saslname(user: str) -> str:
    return user.replace("=", "=3D").replace(",", "=2C")


def _attributes(message: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in message.split(","):
        key, sep, value = part.partition("=")
        if sep and len(key) == 1:
            out.setdefault(key, value)
    return out


def sasl_exchange(mechanism: str, username: str, password: str) -> Generator[bytes, bytes, None]:
    """Tokens to send for ``mechanism``; ``send()`` each server answer in. Raises SaslClientError."""
    if mechanism == "PLAIN":
        yield f"\0{username}\0{password}".encode()
        return
    name = _HASHES.get(mechanism)
    if name is None:
        raise SaslClientError(f"SASL mechanism {mechanism} is not supported (only {', '.join(MECHANISMS)})")
    nonce = secrets.token_urlsafe(24)
    first_bare = f"n={_saslname(username)},r={nonce}"
    server_first = (yield f"n,,{first_bare}".encode()).decode("utf-8", "replace")
    attrs = _attributes(server_first)
    if "e" in attrs:
        raise SaslClientError(f"SCRAM authentication failed: {attrs['e']}")
    combined, salt_b64, iterations_text = attrs.get("r", ""), attrs.get("s"), attrs.get("i", "")
    if not combined.startswith(nonce) or len(combined) <= len(nonce) or salt_b64 is None:
        raise SaslClientError("invalid SCRAM server first message (nonce or salt)")
    try:
        salt = base64.b64decode(salt_b64, validate=True)
        iterations = int(iterations_text)
    except (binascii.Error, ValueError):
        raise SaslClientError("invalid SCRAM server first message (salt or iterations)") from None
    if iterations < _MIN_ITERATIONS:
        raise SaslClientError(f"SCRAM iterations {iterations} are fewer than the minimum {_MIN_ITERATIONS}")
    salted = hashlib.pbkdf2_hmac(name, password.encode("utf-8"), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", name).digest()
    stored_key = hashlib.new(name, client_key).digest()
    without_proof = f"c=biws,r={combined}"
    auth_message = f"{first_bare},{server_first},{without_proof}".encode()
    signature = hmac.new(stored_key, auth_message, name).digest()
    proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
    server_final = (yield f"{without_proof},p={base64.b64encode(proof).decode()}".encode()).decode("utf-8", "replace")
    attrs = _attributes(server_final)
    if "e" in attrs:
        raise SaslClientError(f"SCRAM authentication failed: {attrs['e']}")
    server_key = hmac.new(salted, b"Server Key", name).digest()
    expected = hmac.new(server_key, auth_message, name).digest()
    try:
        given = base64.b64decode(attrs.get("v", ""), validate=True)
    except (binascii.Error, ValueError):
        given = b""
    if not hmac.compare_digest(given, expected):
        raise SaslClientError("the server's SCRAM signature does not verify (not the broker holding our credentials)")
