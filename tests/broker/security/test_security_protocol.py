"""SASL and ACLs on the wire, request by request, where client libraries hide the details:
the v0 handshake's bare tokens, what an unauthenticated connection may send, Kafka's error
codes, and a large fetch over TLS (no sendfile there) byte for byte."""

from __future__ import annotations

import ssl
import struct
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]  # re-exported without __all__
from seaway.protocol.messages.api_versions_request import ApiVersionsRequest
from seaway.protocol.messages.api_versions_response import ApiVersionsResponse
from seaway.protocol.messages.describe_acls_request import DescribeAclsRequest
from seaway.protocol.messages.describe_acls_response import DescribeAclsResponse
from seaway.protocol.messages.fetch_request import FetchPartition, FetchRequest, FetchTopic
from seaway.protocol.messages.fetch_response import FetchResponse
from seaway.protocol.messages.metadata_request import MetadataRequest, MetadataRequestTopic
from seaway.protocol.messages.metadata_response import MetadataResponse
from seaway.protocol.messages.sasl_authenticate_request import SaslAuthenticateRequest
from seaway.protocol.messages.sasl_authenticate_response import SaslAuthenticateResponse
from seaway.protocol.messages.sasl_handshake_request import SaslHandshakeRequest
from seaway.protocol.messages.sasl_handshake_response import SaslHandshakeResponse

from tests.broker.security.wire import Wire
from tests.support.broker import BrokerProcess
from tests.support.secure_broker import ADMIN_PASSWORD, SecureBroker
from tests.support.tls_material import Material

pytestmark = pytest.mark.timeout(60)

ILLEGAL_SASL_STATE, UNSUPPORTED_SASL_MECHANISM, SASL_AUTHENTICATION_FAILED = 34, 33, 58
CLUSTER_AUTHORIZATION_FAILED, SECURITY_DISABLED = 31, 54
PLAIN_ADMIN = f"\x00admin\x00{ADMIN_PASSWORD}".encode()


def _tls(broker: SecureBroker) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(broker.material.ca))


def _metadata(wire: Wire, *topics: str) -> MetadataResponse:
    request = MetadataRequest(topics=[MetadataRequestTopic(name=t) for t in topics] if topics else None,
                              allow_auto_topic_creation=False)
    response: MetadataResponse = wire.call(request, MetadataResponse, 9)
    return response


def test_api_versions_lists_the_security_apis(secure_broker: SecureBroker) -> None:
    with Wire(secure_broker.bootstrap("SASL_SSL"), _tls(secure_broker)) as wire:
        response = wire.call(ApiVersionsRequest(client_software_name="t", client_software_version="1"),
                             ApiVersionsResponse, 3)
    served = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
    assert served[17] == (0, 1) and served[36] == (0, 2)  # SaslHandshake, SaslAuthenticate
    assert {29, 30, 31, 50, 51} <= set(served)  # Describe/Create/DeleteAcls, SCRAM credentials


def test_handshake_v0_then_bare_tokens(secure_broker: SecureBroker) -> None:
    with Wire(secure_broker.bootstrap("SASL_SSL"), _tls(secure_broker)) as wire:
        answer = wire.call(SaslHandshakeRequest(mechanism="PLAIN"), SaslHandshakeResponse, 0)
        assert answer.error_code == 0 and "PLAIN" in answer.mechanisms
        wire.send_raw(PLAIN_ADMIN)  # no request header: the token itself, size-prefixed
        assert wire.read_frame() == b""  # PLAIN's empty answer, size-prefixed too
        assert _metadata(wire).brokers  # authenticated as admin: requests are served
    with Wire(secure_broker.bootstrap("SASL_SSL"), _tls(secure_broker)) as wire:
        wire.call(SaslHandshakeRequest(mechanism="PLAIN"), SaslHandshakeResponse, 0)
        wire.send_raw(b"\x00admin\x00wrong")
        assert wire.closed_by_broker()  # v0 has no way to say why: the connection just closes


def test_nothing_but_the_handshake_before_authentication(secure_broker: SecureBroker) -> None:
    with Wire(secure_broker.bootstrap("SASL_PLAINTEXT")) as wire:
        wire.sock.sendall(wire.frame(MetadataRequest(topics=None), 9))
        assert wire.closed_by_broker()
    with Wire(secure_broker.bootstrap("SASL_PLAINTEXT")) as wire:
        wire.call(SaslHandshakeRequest(mechanism="PLAIN"), SaslHandshakeResponse, 1)
        wire.sock.sendall(wire.frame(MetadataRequest(topics=None), 9))  # not SaslAuthenticate
        assert wire.closed_by_broker()
    with Wire(secure_broker.bootstrap("SASL_PLAINTEXT")) as wire:
        # a frame past sasl.server.max.receive.size (512 KiB) before authentication
        wire.sock.sendall(struct.pack(">i", 600 * 1024) + b"\x00" * 1024)
        assert wire.closed_by_broker()


def test_unsupported_mechanism(secure_broker: SecureBroker) -> None:
    with Wire(secure_broker.bootstrap("SASL_PLAINTEXT")) as wire:
        answer = wire.call(SaslHandshakeRequest(mechanism="GSSAPI"), SaslHandshakeResponse, 1)
        assert answer.error_code == UNSUPPORTED_SASL_MECHANISM
        assert answer.mechanisms == ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
        assert wire.closed_by_broker()


def test_failed_authentication_answers_then_closes(secure_broker: SecureBroker) -> None:
    with Wire(secure_broker.bootstrap("SASL_PLAINTEXT")) as wire:
        wire.call(SaslHandshakeRequest(mechanism="PLAIN"), SaslHandshakeResponse, 1)
        answer = wire.call(SaslAuthenticateRequest(auth_bytes=b"\x00admin\x00wrong"), SaslAuthenticateResponse, 2)
        assert answer.error_code == SASL_AUTHENTICATION_FAILED
        assert answer.error_message == "Authentication failed: Invalid username or password"
        # The end of the stream does not follow right behind the answer: a client that reads
        # both in one go may drop the answer (kafka-python did, in CI). The broker lingers...
        wire.sock.settimeout(0.2)
        assert not wire.closed_by_broker()
        wire.sock.settimeout(10)
        assert wire.closed_by_broker()  # ...and then closes, serving nothing more


def test_failed_authentication_serves_nothing_while_it_lingers(secure_broker: SecureBroker) -> None:
    with Wire(secure_broker.bootstrap("SASL_PLAINTEXT")) as wire:
        wire.call(SaslHandshakeRequest(mechanism="PLAIN"), SaslHandshakeResponse, 1)
        answer = wire.call(SaslAuthenticateRequest(auth_bytes=b"\x00admin\x00wrong"), SaslAuthenticateResponse, 2)
        assert answer.error_code == SASL_AUTHENTICATION_FAILED
        wire.sock.sendall(wire.frame(ApiVersionsRequest(), 0))
        with pytest.raises(ConnectionError):
            wire.read_frame()  # no answer: the connection closes


def test_sasl_requests_outside_an_exchange_are_illegal_state(secure_broker: SecureBroker) -> None:
    with Wire(secure_broker.bootstrap("PLAINTEXT")) as wire:
        assert wire.call(SaslHandshakeRequest(mechanism="PLAIN"), SaslHandshakeResponse, 1).error_code == \
            ILLEGAL_SASL_STATE
        assert wire.call(SaslAuthenticateRequest(auth_bytes=b"x"), SaslAuthenticateResponse, 1).error_code == \
            ILLEGAL_SASL_STATE
    with Wire(secure_broker.bootstrap("SASL_PLAINTEXT")) as wire:
        wire.call(SaslHandshakeRequest(mechanism="PLAIN"), SaslHandshakeResponse, 1)
        answer = wire.call(SaslAuthenticateRequest(auth_bytes=PLAIN_ADMIN), SaslAuthenticateResponse, 1)
        assert answer.error_code == 0 and answer.session_lifetime_ms == 0  # no re-authentication
        again = wire.call(SaslHandshakeRequest(mechanism="PLAIN"), SaslHandshakeResponse, 1)
        assert again.error_code == ILLEGAL_SASL_STATE


def test_scram_by_hand_and_acl_errors_on_the_wire(secure_broker: SecureBroker) -> None:
    from confluent_kafka.admin import (  # type: ignore[attr-defined]  # re-exported without __all__
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialUpsertion,
    )

    admin = AdminClient(secure_broker.admin_config())
    upsert = UserScramCredentialUpsertion("dave", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), b"dave-pw")
    admin.alter_user_scram_credentials([upsert])["dave"].result(15)
    with Wire(secure_broker.bootstrap("SASL_SSL"), _tls(secure_broker)) as wire:
        wire.scram_login("dave", "dave-pw")
        described = wire.call(DescribeAclsRequest(resource_type_filter=1, resource_name_filter=None,
                                                  pattern_type_filter=1, principal_filter=None, host_filter=None,
                                                  operation=1, permission_type=1), DescribeAclsResponse, 2)
        assert described.error_code == CLUSTER_AUTHORIZATION_FAILED


def test_acl_apis_without_an_authorizer_are_security_disabled(shared_broker: BrokerProcess) -> None:
    with Wire(shared_broker.bootstrap) as wire:
        described = wire.call(DescribeAclsRequest(resource_type_filter=1, resource_name_filter=None,
                                                  pattern_type_filter=1, principal_filter=None, host_filter=None,
                                                  operation=1, permission_type=1), DescribeAclsResponse, 2)
        assert described.error_code == SECURITY_DISABLED


def _fetch_all(wire: Wire, topic: str) -> bytes:
    request = FetchRequest(replica_id=-1, max_wait_ms=100, min_bytes=1, max_bytes=64 << 20, isolation_level=0,
                           session_id=0, session_epoch=-1, topics=[FetchTopic(topic=topic, partitions=[
                               FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=32 << 20)])])
    response: FetchResponse = wire.call(request, FetchResponse, 11)
    part = response.responses[0].partitions[0]
    assert part.error_code == 0
    records = part.records or b""
    assert isinstance(records, (bytes, bytearray, memoryview)), records  # decoded: a view of the frame
    return bytes(records)


@pytest.mark.timeout(120)
def test_large_fetch_over_tls_is_byte_identical(secure_broker: SecureBroker) -> None:
    """Several MiB of batches in one answer: read and encrypted in 1 MiB pieces over TLS,
    sendfile'd on PLAINTEXT; both must be the same bytes."""
    topic = f"bigfetch-{uuid.uuid4().hex[:8]}"
    admin = AdminClient(secure_broker.admin_config())
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(15)
    producer = Producer({**secure_broker.admin_config(), "linger.ms": 50, "batch.size": 1 << 20})
    payload = bytes(range(256)) * 40  # 10 KiB values
    for i in range(600):
        producer.produce(topic, payload, key=str(i).encode())
    assert producer.flush(60) == 0
    with Wire(secure_broker.bootstrap("SASL_SSL"), _tls(secure_broker)) as wire:
        wire.call(SaslHandshakeRequest(mechanism="PLAIN"), SaslHandshakeResponse, 1)
        wire.call(SaslAuthenticateRequest(auth_bytes=PLAIN_ADMIN), SaslAuthenticateResponse, 2)
        over_tls = _fetch_all(wire, topic)
    with Wire(secure_broker.bootstrap("SASL_PLAINTEXT")) as wire:
        wire.call(SaslHandshakeRequest(mechanism="PLAIN"), SaslHandshakeResponse, 1)
        wire.call(SaslAuthenticateRequest(auth_bytes=PLAIN_ADMIN), SaslAuthenticateResponse, 2)
        plain = _fetch_all(wire, topic)
    assert len(over_tls) > 5 << 20 and over_tls == plain


@pytest.mark.timeout(90)
def test_failed_tls_handshakes_free_their_connection_slots(tmp_path: Path, material: Material) -> None:
    """A client that fails the TLS handshake (here: speaks plaintext to the SSL port) must not keep
    its place in max.connections.per.ip, or a few of them would lock the address out."""
    import socket

    from tests.support.secure_broker import start_secure

    own = start_secure(tmp_path / "data", material, **{"max.connections.per.ip": "3"})
    try:
        for _ in range(8):
            with socket.create_connection(("127.0.0.1", own.ports["SASL_SSL"]), timeout=10) as sock:
                sock.sendall(b"\x00\x00\x00\x0aNOT TLS AT ALL")
                sock.settimeout(10)
                while sock.recv(4096):  # the broker answers with a TLS alert and closes
                    pass
        with Wire(own.bootstrap("SASL_SSL"), _tls(own)) as wire:  # still served
            assert wire.call(SaslHandshakeRequest(mechanism="PLAIN"), SaslHandshakeResponse, 1).error_code == 0
    finally:
        own.process.stop()
