"""SaslAuthenticate v0-2: one SASL token of the exchange a v1 SaslHandshake began.

The answer carries the server's token; a failed exchange is SASL_AUTHENTICATION_FAILED with
Kafka's message, after which the connection closes. The session lifetime is 0: re-authentication
is not offered (``connections.max.reauth.ms`` must be 0). Outside an exchange the answer is
ILLEGAL_SASL_STATE, as Kafka's request handler answers it.
"""

from __future__ import annotations

from seaway.broker.context import RequestContext
from seaway.broker.handlers.registry import handles
from seaway.broker.security.sasl import AuthenticationFailed
from seaway.protocol.errors import IllegalSaslStateError, SaslAuthenticationFailedError
from seaway.protocol.messages.sasl_authenticate_request import SaslAuthenticateRequest
from seaway.protocol.messages.sasl_authenticate_response import SaslAuthenticateResponse

__all__ = ["handle_sasl_authenticate"]


@handles(SaslAuthenticateRequest, SaslAuthenticateResponse)
async def handle_sasl_authenticate(ctx: RequestContext, request: SaslAuthenticateRequest) -> (
    SaslAuthenticateResponse
):
    sasl = ctx.sasl
    if sasl is None:
        return SaslAuthenticateResponse(
            error_code=IllegalSaslStateError.code,
            error_message="SaslAuthenticate request received after successful authentication",
            auth_bytes=b"")
    try:
        token = sasl.authenticate(bytes(request.auth_bytes))
    except AuthenticationFailed as exc:
        return SaslAuthenticateResponse(error_code=SaslAuthenticationFailedError.code, error_message=str(exc),
                                        auth_bytes=b"")
    return SaslAuthenticateResponse(error_code=0, error_message=None, auth_bytes=token, session_lifetime_ms=0)
