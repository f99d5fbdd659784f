"""Seaway's own protocol client (the Connect and registry group members) on a secured broker:
TLS verified against the CA, SASL PLAIN and SCRAM-SHA-512, and failures that say why."""

from __future__ import annotations

import ssl

import pytest
from seaway.protocol.client import ClientSecurity, KafkaAuthenticationError, KafkaConnection
from seaway.protocol.client_security import protocol_security
from seaway.protocol.messages.metadata_request import MetadataRequest
from seaway.protocol.messages.metadata_response import MetadataResponse

from tests.security.conftest import CONNECT_PASSWORD, Secured
from tests.support.secure_broker import ADMIN_PASSWORD

pytestmark = pytest.mark.timeout(60)


async def _metadata(secured: Secured, security: ClientSecurity, listener: str = "SASL_SSL") -> MetadataResponse:
    conn = await KafkaConnection.open("127.0.0.1", secured.broker.ports[listener], "security-test", 5.0, security)
    try:
        response, _ = await conn.call(MetadataRequest(topics=None), MetadataResponse, cap=9)
        return response
    finally:
        await conn.close()


async def test_scram_and_plain_over_tls_from_java_style_settings(secured: Secured) -> None:
    scram = protocol_security(secured.java_client("connect", CONNECT_PASSWORD))
    assert (await _metadata(secured, scram)).brokers
    plain = protocol_security({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
                               "sasl.username": "admin", "sasl.password": ADMIN_PASSWORD})
    assert (await _metadata(secured, plain, "SASL_PLAINTEXT")).brokers


async def test_a_wrong_password_fails_with_the_brokers_authentication_error(secured: Secured) -> None:
    wrong = protocol_security(secured.java_client("connect", "not-the-password"))
    with pytest.raises(KafkaAuthenticationError, match="SASL authentication failed: Authentication failed"):
        await _metadata(secured, wrong)


async def test_a_broker_certificate_from_an_unknown_ca_is_refused(secured: Secured) -> None:
    other = ssl.create_default_context(cafile=str(secured.material.directory / "other-ca.crt"))
    security = ClientSecurity("SASL_SSL", other, "SCRAM-SHA-512", "connect", CONNECT_PASSWORD)
    with pytest.raises(KafkaAuthenticationError, match=r"TLS handshake with 127\.0\.0\.1:\d+ failed: self-signed "
                       "certificate in certificate chain"):
        await _metadata(secured, security)
