"""SaslHandshake v0-1: the client names its SASL mechanism (see :mod:`seaway.broker.security.sasl`).

On a SASL listener before authentication, an enabled mechanism is accepted and the
exchange begins (v1: SaslAuthenticate requests; v0: bare tokens); an unknown one gets
UNSUPPORTED_SASL_MECHANISM with the listener's mechanisms and the connection closes. On
other listeners, or once authenticated (re-authentication is not offered), the answer is
ILLEGAL_SASL_STATE, as Kafka's request handler answers it.
"""

from __future__ import annotations

from seaway.broker.context import RequestContext
from seaway.broker.handlers.registry import handles
from seaway.protocol.errors import IllegalSaslStateError, UnsupportedSaslMechanismError
from seaway.protocol.messages.sasl_handshake_request import SaslHandshakeRequest
from seaway.protocol.messages.sasl_handshake_response import SaslHandshakeResponse

__all__ = ["handle_sasl_handshake"]


@handles(SaslHandshakeRequest, SaslHandshakeResponse)
async def handle_sasl_handshake(ctx: RequestContext, request: SaslHandshakeRequest) -> SaslHandshakeResponse:
    sasl = ctx.sasl
    if sasl is None:
        return SaslHandshakeResponse(error_code=IllegalSaslStateError.code, mechanisms=[])
    ok = sasl.handshake(request.mechanism, ctx.api_version)
    return SaslHandshakeResponse(error_code=0 if ok else UnsupportedSaslMechanismError.code,
                                 mechanisms=list(sasl.mechanisms))
