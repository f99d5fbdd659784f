"""Signed worker-to-worker requests (KIP-507, Kafka's ``InternalRequestSignature``).

With the ``sessioned`` protocol the leader puts a session key in the config topic; a worker
calling another worker's internal endpoint (a follower publishing task configs to the leader)
signs the raw request body with it::

    X-Connect-Authorization:                base64(HMAC(session key, body))
    X-Connect-Request-Signature-Algorithm:  HmacSHA256

The receiver checks it with the key it has read: missing signature 400, unsupported
algorithm 400, no key yet 503, wrong signature 403.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time

from seaway.connect.runtime.backing_stores import SessionKey
from seaway.connect.runtime.herder import ALGORITHM_HEADER, SIGNATURE_HEADER, BadRequestError, HerderError

__all__ = [
    "generate_key",
    "sign",
    "signature_headers",
    "verify",
]

_DIGESTS = {"HmacSHA256": hashlib.sha256, "HmacSHA384": hashlib.sha384, "HmacSHA512": hashlib.sha512}


def generate_key(algorithm: str, size_bits: int | None = None) -> SessionKey:
    """A fresh random key; Java's KeyGenerator default for HmacSHA* is the digest's block-derived size."""
    digest = _DIGESTS[algorithm]()
    size = (size_bits // 8) if size_bits else digest.digest_size
    return SessionKey(secrets.token_bytes(size), algorithm, int(time.time() * 1000))


def sign(key: bytes, algorithm: str, body: bytes) -> str:
    return base64.b64encode(hmac.new(key, body, _DIGESTS[algorithm]).digest()).decode("ascii")


def signature_headers(key: SessionKey, algorithm: str, body: bytes) -> dict[str, str]:
    return {SIGNATURE_HEADER: sign(key.key, algorithm, body), ALGORITHM_HEADER: algorithm}


def verify(key: SessionKey | None, accepted: list[str], body: bytes, signature: str | None,
           algorithm: str | None) -> None:
    """Raise the REST error Kafka answers with, or return if the request is signed with ``key``."""
    if signature is None or algorithm is None:
        raise BadRequestError("Internal request missing required signature")
    if algorithm not in accepted or algorithm not in _DIGESTS:
        raise BadRequestError(f"This worker does not support the '{algorithm}' key signing algorithm used by "
                              f"other workers. This worker is currently configured to use: {accepted}. Check that "
                              "all workers' configuration files permit the same set of signature algorithms, "
                              "and correct any misconfigured worker and restart it.")
    if key is None:
        raise HerderError("This worker is still starting up and has not been able to read a session key from the "
                          "config topic yet", status=503)
    if not hmac.compare_digest(sign(key.key, algorithm, body), signature):
        raise HerderError("Internal request contained invalid signature.", status=403)
