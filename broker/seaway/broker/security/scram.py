"""SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677), the server side, exactly as Kafka.

Credentials are kept as Kafka keeps them (``UserScramCredentialRecord``): per user and
mechanism a salt, the iteration count, ``StoredKey = H(HMAC(SaltedPassword, "Client Key"))``
and ``ServerKey = HMAC(SaltedPassword, "Server Key")``; never the password, never the salted
password. AlterUserScramCredentials sends the salted password (the client ran PBKDF2), from
which :func:`credential_from_salted_password` derives the two keys.

The exchange (:class:`ScramServer`), two client messages:

1. ``n,[a=authzid],n=<saslname>,r=<client nonce>[,extensions]``: only the ``n`` GS2 header
   (no channel binding), an authzid equal to the user name or none; the answer is
   ``r=<client nonce><server nonce>,s=<salt>,i=<iterations>``;
2. ``c=<base64 of the GS2 header>,r=<nonce>,p=<proof>``: the channel binding must repeat the
   GS2 header (``biws`` = ``n,,``), the nonce must be the combined one (or, for librdkafka
   before 2.6.1, which sends its own nonce twice, the client's nonce followed by the combined
   one, as Kafka 3.8.1-3.9 accept) and the proof must verify against StoredKey (constant-time);
   the answer is ``v=<server signature>``.

An unknown user, a bad proof or a malformed message all fail the same way (the caller
answers SASL_AUTHENTICATION_FAILED with Kafka's fixed message that leaks nothing). Delegation
token authentication (the ``tokenauth`` extension) is not supported and fails too.
Iteration counts below 4096 or above 16384 are refused when credentials are stored, as Kafka.
"""

from __future__ import annotations

import base64
import binascii
import enum
import hashlib
import hmac
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "MAX_ITERATIONS",
    "MIN_ITERATIONS",
    "ScramCredential",
    "ScramError",
    "ScramMechanism",
    "ScramServer",
    "credential_from_password",
    "credential_from_salted_password",
    "salted_password",
]

MIN_ITERATIONS = 4096
MAX_ITERATIONS = 16384


class ScramMechanism(enum.Enum):
    """Kafka's ``ScramMechanism``: the wire type code, the SASL name and the hash."""

    SCRAM_SHA_256 = (1, "SCRAM-SHA-256", "sha256")
    SCRAM_SHA_512 = (2, "SCRAM-SHA-512", "sha512")

    @property
    def type_code(self) -> int:
        return self.value[0]

    @property
    def mechanism_name(self) -> str:
        return self.value[1]

    @property
    def hash_name(self) -> str:
        return self.value[2]

    @classmethod
    def from_type(cls, code: int) -> ScramMechanism | None:
        return next((m for m in cls if m.type_code == code), None)

    @classmethod
    def from_name(cls, name: str) -> ScramMechanism | None:
        return next((m for m in cls if m.mechanism_name == name), None)

    def hmac(self, key: bytes, data: bytes) -> bytes:
        return hmac.new(key, data, self.hash_name).digest()

    def hash(self, data: bytes) -> bytes:
        return hashlib.new(self.hash_name, data).digest()


@dataclass(frozen=True, slots=True)
class ScramCredential:
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    def __repr__(self) -> str:  # never print key material
        return f"ScramCredential(iterations={self.iterations})"


def salted_password(mechanism: ScramMechanism, password: str, salt: bytes, iterations: int) -> bytes:
    """RFC 5802's ``Hi(Normalize(password), salt, i)``: PBKDF2 with the mechanism's HMAC."""
    return hashlib.pbkdf2_hmac(mechanism.hash_name, password.encode("utf-8"), salt, iterations)


def credential_from_salted_password(
    mechanism: ScramMechanism, salt: bytes, salted: bytes, iterations: int
) -> ScramCredential:
    client_key = mechanism.hmac(salted, b"Client Key")
    return ScramCredential(salt, mechanism.hash(client_key), mechanism.hmac(salted, b"Server Key"), iterations)


def credential_from_password(mechanism: ScramMechanism, password: str, iterations: int = 8192) -> ScramCredential:
    """A fresh credential with a random salt (what Kafka's clients do before AlterUserScramCredentials)."""
    salt = secrets.token_bytes(32)
    return credential_from_salted_password(
        mechanism, salt, salted_password(mechanism, password, salt, iterations), iterations
    )


class ScramError(Exception):
    """The exchange failed; the message is for the broker's log, never for the client."""


_SASLNAME = r"(?:[\x01-\x2b\x2d-\x3c\x3e-\x7f]|=2C|=3D)+"
_PRINTABLE = r"[\x21-\x2b\x2d-\x7e]+"
_BASE64 = r"(?:[a-zA-Z0-9/+]{4})*(?:[a-zA-Z0-9/+]{3}=|[a-zA-Z0-9/+]{2}==)?"
_VALUE = r"[\x01-\x2b\x2d-\x7f]+"
_EXTENSIONS = rf"(?:,[a-zA-Z]+={_VALUE})*"
_CLIENT_FIRST = re.compile(
    rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,(?:m={_VALUE},)?n=(?P<saslname>{_SASLNAME}),r=(?P<nonce>{_PRINTABLE})"
    rf"(?P<extensions>{_EXTENSIONS})"
)
_CLIENT_FINAL = re.compile(
    rf"c=(?P<channel>{_BASE64}),r=(?P<nonce>{_PRINTABLE}){_EXTENSIONS},p=(?P<proof>{_BASE64})"
)


def _server_nonce() -> str:
    """Kafka's ``ScramFormatter.secureRandomString``: 130 random bits in base 36 (letters and
    digits only; librdkafka 2.0 mishandles other printable characters in the nonce)."""
    value = secrets.randbits(130)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while value:
        value, rem = divmod(value, 36)
        out = digits[rem] + out
    return out or "0"


def _username(saslname: str) -> str:
    """RFC 5802 saslname -> user name (``=2C`` is ',' and ``=3D`` is '=')."""
    return saslname.replace("=2C", ",").replace("=3D", "=")


class ScramServer:
    """One SCRAM exchange on one connection; :meth:`evaluate` takes each client message.

    ``lookup(user)`` returns the user's credential for this mechanism, or None.
    """

    def __init__(self, mechanism: ScramMechanism, lookup: Callable[[str], ScramCredential | None]) -> None:
        self.mechanism = mechanism
        self._lookup = lookup
        self._state = "first"
        self._credential: ScramCredential | None = None
        self._gs2_header = ""
        self._client_first_bare = ""
        self._server_first = ""
        self._nonce = ""
        self._client_nonce = ""
        self.authorization_id: str | None = None

    @property
    def complete(self) -> bool:
        return self._state == "complete"

    def evaluate(self, token: bytes) -> bytes:
        """The answer to one client message; raises ScramError when authentication fails."""
        state, self._state = self._state, "failed"  # until proven otherwise
        try:
            text = token.decode("utf-8")
        except UnicodeDecodeError:
            raise ScramError("SCRAM message is not UTF-8") from None
        if state == "first":
            answer = self._first(text)
            self._state = "final"
            return answer
        if state == "final":
            answer = self._final(text)
            self._state = "complete"
            return answer
        raise ScramError(f"unexpected SCRAM message in state {state}")

    def _first(self, text: str) -> bytes:
        match = _CLIENT_FIRST.fullmatch(text)
        if match is None:
            raise ScramError("Invalid SCRAM client first message format")
        extensions = match.group("extensions")
        if "tokenauth=" in extensions:
            raise ScramError("delegation token authentication is not supported")
        username = _username(match.group("saslname"))
        authzid = match.group("authzid")
        if authzid is not None and _username(authzid) != username:
            raise ScramError("Client requested an authorization id that is different from username")
        credential = self._lookup(username)
        if credential is None:
            raise ScramError(f"Invalid user credentials for {username!r}")
        if credential.iterations < MIN_ITERATIONS:
            raise ScramError(f"Iterations {credential.iterations} is less than the minimum {MIN_ITERATIONS}")
        self._credential = credential
        self.authorization_id = username
        self._gs2_header = "n," + (f"a={authzid}" if authzid is not None else "") + ","
        if not text.startswith(self._gs2_header + "n="):
            # RFC 5802: a mandatory extension ('m=') the server does not know fails the exchange
            raise ScramError("unsupported mandatory SCRAM extension")
        self._client_first_bare = text[len(self._gs2_header):]
        self._client_nonce = match.group("nonce")
        self._nonce = self._client_nonce + _server_nonce()
        self._server_first = (
            f"r={self._nonce},s={base64.b64encode(credential.salt).decode()},i={credential.iterations}"
        )
        return self._server_first.encode()

    def _final(self, text: str) -> bytes:
        match = _CLIENT_FINAL.fullmatch(text)
        credential = self._credential
        if match is None or credential is None:
            raise ScramError("Invalid SCRAM client final message format")
        try:
            channel = base64.b64decode(match.group("channel"), validate=True)
            proof = base64.b64decode(match.group("proof"), validate=True)
        except (binascii.Error, ValueError):
            raise ScramError("Invalid SCRAM client final message format") from None
        if channel != self._gs2_header.encode():
            raise ScramError("channel binding does not repeat the GS2 header")
        nonce = match.group("nonce")
        if nonce != self._nonce and nonce != self._client_nonce + self._nonce:
            # (the second form: librdkafka before 2.6.1 repeats its own nonce in front of the
            # combined one; Kafka 3.8.1-3.9 accept it too. The server's nonce is still required.)
            raise ScramError("Invalid client nonce in the final client message.")
        without_proof = text[: match.start("proof") - 3]
        auth_message = f"{self._client_first_bare},{self._server_first},{without_proof}".encode()
        mech = self.mechanism
        client_signature = mech.hmac(credential.stored_key, auth_message)
        if len(proof) != len(client_signature):
            raise ScramError("Invalid client credentials")
        client_key = bytes(a ^ b for a, b in zip(proof, client_signature, strict=True))
        if not hmac.compare_digest(mech.hash(client_key), credential.stored_key):
            raise ScramError("Invalid client credentials")
        server_signature = mech.hmac(credential.server_key, auth_message)
        self._credential = None
        return b"v=" + base64.b64encode(server_signature)
