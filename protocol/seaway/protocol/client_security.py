"""A Kafka client's security settings as the protocol client's :class:`ClientSecurity`.

Users give Seaway's group-protocol client (Connect workers, schema registries) the same client
settings as its librdkafka clients, in Java's or librdkafka's names. They are checked and
translated once, by :func:`seaway.security.kafka_client.resolve_security`; this is the half that
needs the protocol client: the ``SSLContext`` built from them, and the TLS knobs only librdkafka
implements refused by name. It lives here so that the shared security code imports no component.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from typing import Any

from seaway.protocol.client import ClientSecurity
from seaway.security.kafka_client import ClientConfigError, resolve_security
from seaway.security.tls import TlsConfigError, build_client_context

__all__ = ["protocol_security"]


def protocol_security(props: Mapping[str, Any], prefix: str = "") -> ClientSecurity:
    """``props``'s security settings for Seaway's own protocol client (the group protocols);
    ``prefix`` is how the keys are named in errors. Raises ClientConfigError naming a key it
    cannot honour."""
    resolved = resolve_security(props, prefix)
    if not resolved.protocol.endswith("SSL"):
        return ClientSecurity(resolved.protocol, None, resolved.mechanism, resolved.username, resolved.password)
    if resolved.unsupported_by_protocol_client:
        raise ClientConfigError(f"{resolved.unsupported_by_protocol_client[0]} is not supported by Seaway's group "
                                "protocol client (it joins Connect/registry groups over TLS with Python's ssl module)")
    assert resolved.tls is not None
    try:
        context = build_client_context(resolved.tls)
        if resolved.ciphers:
            context.set_ciphers(resolved.ciphers)
    except (TlsConfigError, ssl.SSLError) as exc:
        raise ClientConfigError(str(exc)) from None
    if not resolved.verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return ClientSecurity(resolved.protocol, context, resolved.mechanism, resolved.username, resolved.password)
