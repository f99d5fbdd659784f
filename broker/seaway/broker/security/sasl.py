"""SASL on a connection: Kafka's ``SaslServerAuthenticator`` state machine, PLAIN and SCRAM.

A connection on a SASL_PLAINTEXT or SASL_SSL listener starts unauthenticated and may only:

1. send ApiVersions (at most once, first) and then SaslHandshake naming a mechanism enabled on
   the listener (else UNSUPPORTED_SASL_MECHANISM with the enabled list, then the connection
   closes);
2. after a v1 handshake, send SaslAuthenticate requests carrying the mechanism's tokens; after
   a v0 handshake, the tokens travel as bare size-prefixed frames with no request header
   (Kafka's pre-KIP-152 framing, answered the same way);
3. once the mechanism completes, the connection is authenticated as ``User:<name>`` and every
   API is served. A failed exchange answers SASL_AUTHENTICATION_FAILED (v1; a bare close for
   v0) after ``connection.failed.authentication.delay.ms``, then closes the connection.

Anything else before authentication closes the connection, as Kafka does, and frames larger
than ``sasl.server.max.receive.size`` (512 KiB) are refused before it, so an unauthenticated
client cannot make the broker buffer a 100 MB request. Re-authentication (KIP-368) is not
offered: ``connections.max.reauth.ms`` must stay 0, so SaslAuthenticate answers a session
lifetime of 0 and a later SaslHandshake gets ILLEGAL_SASL_STATE.

Error messages are Kafka's: PLAIN's wrong password is "Authentication failed: Invalid username
or password"; every SCRAM failure (unknown user, wrong proof, malformed message) is "Authentication
failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512",
which does not tell an attacker whether the user exists.
"""

from __future__ import annotations

import enum
import hmac
import logging
from collections.abc import Callable, Mapping

from seaway.broker.security.principal import USER_TYPE, KafkaPrincipal
from seaway.broker.security.scram import ScramCredential, ScramError, ScramMechanism, ScramServer

__all__ = ["PLAIN", "SUPPORTED_MECHANISMS", "AuthenticationFailed", "SaslSession", "SaslState"]

PLAIN = "PLAIN"
SUPPORTED_MECHANISMS = (PLAIN, "SCRAM-SHA-256", "SCRAM-SHA-512")

log = logging.getLogger("seaway.broker.security")

API_VERSIONS = 18
SASL_HANDSHAKE = 17
SASL_AUTHENTICATE = 36


class SaslState(enum.Enum):
    HANDSHAKE_OR_VERSIONS = "handshake-or-versions"
    HANDSHAKE = "handshake"
    AUTHENTICATE = "authenticate"  # SaslAuthenticate requests (handshake v1)
    RAW = "raw"  # bare tokens (handshake v0)
    COMPLETE = "complete"
    FAILED = "failed"


class AuthenticationFailed(Exception):
    """The exchange failed; ``str()`` is the message the client gets (Kafka's wording)."""


ScramLookup = Callable[[ScramMechanism, str], ScramCredential | None]


class _PlainServer:
    """RFC 4616 PLAIN against the listener's JAAS ``user_<name>`` passwords."""

    def __init__(self, users: Mapping[str, str]) -> None:
        self._users = users
        self.authorization_id: str | None = None
        self.complete = False

    def evaluate(self, token: bytes) -> bytes:
        generic = AuthenticationFailed(
            "Authentication failed during authentication due to invalid credentials with SASL mechanism PLAIN")
        try:
            text = token.decode("utf-8")
        except UnicodeDecodeError:
            raise generic from None
        parts = text.split("\x00")
        if len(parts) != 3 or not parts[1] or not parts[2]:
            raise generic
        authzid, username, password = parts
        expected = self._users.get(username)
        # compare_digest on both branches: the time taken does not tell whether the user exists
        ok = hmac.compare_digest(password.encode(), (expected if expected is not None else "\x00" + password)
                                 .encode())
        if not ok or expected is None:
            raise AuthenticationFailed("Authentication failed: Invalid username or password")
        if authzid and authzid != username:
            raise AuthenticationFailed(
                "Authentication failed: Client requested an authorization id that is different from username")
        self.authorization_id = username
        self.complete = True
        return b""


class _ScramAdapter:
    """A ScramServer whose failures carry Kafka's fixed client message."""

    def __init__(self, mechanism: ScramMechanism, lookup: ScramLookup) -> None:
        self._server = ScramServer(mechanism, lambda user: lookup(mechanism, user))
        self._name = mechanism.mechanism_name

    @property
    def complete(self) -> bool:
        return self._server.complete

    @property
    def authorization_id(self) -> str | None:
        return self._server.authorization_id

    def evaluate(self, token: bytes) -> bytes:
        try:
            return self._server.evaluate(token)
        except ScramError as exc:
            log.debug("SCRAM exchange failed: %s", exc)
            if "authorization id" in str(exc):
                raise AuthenticationFailed(f"Authentication failed: {exc}") from None
            raise AuthenticationFailed(
                "Authentication failed during authentication due to invalid credentials with SASL mechanism "
                + self._name) from exc


class SaslSession:
    """The SASL state of one connection (see the module docstring)."""

    def __init__(self, mechanisms: tuple[str, ...], plain_users: Mapping[str, str], scram: ScramLookup) -> None:
        self.mechanisms = mechanisms
        self._plain_users = plain_users
        self._scram = scram
        self.state = SaslState.HANDSHAKE_OR_VERSIONS
        self.mechanism: str | None = None
        self.principal: KafkaPrincipal | None = None
        self.failure: str | None = None
        self._server: _PlainServer | _ScramAdapter | None = None

    @property
    def complete(self) -> bool:
        return self.state is SaslState.COMPLETE

    @property
    def failed(self) -> bool:
        return self.state is SaslState.FAILED

    @property
    def raw_tokens(self) -> bool:
        return self.state is SaslState.RAW

    def accepts(self, api_key: int) -> bool:
        """May a request with ``api_key`` come now (before authentication)? If not, the
        connection closes, as Kafka's authenticator closes it."""
        state = self.state
        if state is SaslState.HANDSHAKE_OR_VERSIONS:
            return api_key in (API_VERSIONS, SASL_HANDSHAKE)
        if state is SaslState.HANDSHAKE:
            return api_key == SASL_HANDSHAKE
        if state is SaslState.AUTHENTICATE:
            return api_key == SASL_AUTHENTICATE
        return False

    def api_versions_answered(self) -> None:
        if self.state is SaslState.HANDSHAKE_OR_VERSIONS:
            self.state = SaslState.HANDSHAKE

    def handshake(self, mechanism: str, version: int) -> bool:
        """Choose ``mechanism``; False (and the session failed) when it is not enabled here."""
        if mechanism not in self.mechanisms:
            self.failure = f"Unsupported SASL mechanism {mechanism}"
            self.state = SaslState.FAILED
            return False
        self.mechanism = mechanism
        if mechanism == PLAIN:
            self._server = _PlainServer(self._plain_users)
        else:
            scram = ScramMechanism.from_name(mechanism)
            assert scram is not None
            self._server = _ScramAdapter(scram, self._scram)
        self.state = SaslState.AUTHENTICATE if version >= 1 else SaslState.RAW
        return True

    def authenticate(self, token: bytes) -> bytes:
        """Evaluate one client token; the server's answer. Raises AuthenticationFailed."""
        server = self._server
        if server is None or self.state not in (SaslState.AUTHENTICATE, SaslState.RAW):
            self.state = SaslState.FAILED
            raise AuthenticationFailed("Unexpected SASL token before the handshake")
        try:
            answer = server.evaluate(token)
        except AuthenticationFailed as exc:
            self.state = SaslState.FAILED
            self.failure = str(exc)
            raise
        if server.complete:
            assert server.authorization_id is not None
            self.principal = KafkaPrincipal(USER_TYPE, server.authorization_id)
            self.state = SaslState.COMPLETE
            self._server = None
        return answer
