"""What the broker checks about its own security setup at start (issue 27, item 7).

- ``security.inter.broker.protocol`` / ``inter.broker.listener.name`` naming a listener the broker
  does not have stops it with Kafka's ``KafkaConfig`` message (Kafka refuses; Seaway started);
- a server certificate that is expired or not yet valid is logged as a warning at start, naming
  the keystore and the date (every client that checks it will refuse the handshake). The
  certificates are made here with ``cryptography``.
"""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID
from seaway.broker.config import BrokerConfig, ConfigError

from tests.support.broker import BrokerProcess
from tests.support.tls_material import Material

pytestmark = pytest.mark.timeout(120)

KAFKA_MESSAGE = ("inter.broker.listener.name must be a listener name defined in advertised.listeners. The valid "
                 "options based on currently configured listeners are ")


# -- the inter-broker listener ----------------------------------------------------------------------


def test_security_inter_broker_protocol_without_such_a_listener_stops_the_broker(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "data", {"security.inter.broker.protocol": "SSL"})
    try:
        with pytest.raises(RuntimeError) as failed:
            broker.start(timeout=60)
        assert KAFKA_MESSAGE + "PLAINTEXT (security.inter.broker.protocol=SSL names the listener SSL)" in \
            str(failed.value)
        assert not broker.alive
    finally:
        broker.stop()  # only if it started after all


def test_inter_broker_listener_name_must_be_an_advertised_listener() -> None:
    listeners = {"listeners": "PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0",
                 "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT"}
    with pytest.raises(ConfigError) as failed:
        BrokerConfig({**listeners, "advertised.listeners": "PLAINTEXT://127.0.0.1:9092",
                      "inter.broker.listener.name": "internal"})
    assert str(failed.value) == KAFKA_MESSAGE + "PLAINTEXT"
    assert BrokerConfig({**listeners, "inter.broker.listener.name": "internal"}).listeners


def test_security_inter_broker_protocol_naming_a_listener_is_accepted(material: Material) -> None:
    """The listener called like the protocol (Kafka's ``ListenerName.forSecurityProtocol``)."""
    config = BrokerConfig({"listeners": "SSL://127.0.0.1:0", "ssl.keystore.type": "PEM",
                           "ssl.keystore.location": str(material.server_pem),
                           "security.inter.broker.protocol": "SSL"})
    assert [name for name, _, _ in config.listeners] == ["SSL"]
    with pytest.raises(ConfigError) as failed:  # a listener *using* SSL under another name is not one
        BrokerConfig({"listeners": "SECURE://127.0.0.1:0", "listener.security.protocol.map": "SECURE:SSL",
                      "ssl.keystore.type": "PEM", "ssl.keystore.location": str(material.server_pem),
                      "security.inter.broker.protocol": "SSL"})
    assert str(failed.value).startswith(KAFKA_MESSAGE + "SECURE")


def test_unset_inter_broker_protocol_is_not_enforced(material: Material) -> None:
    """A deviation: Kafka refuses its default PLAINTEXT without a PLAINTEXT listener; one node has
    no inter-broker traffic, so an SSL-only broker starts here."""
    assert BrokerConfig({"listeners": "SSL://127.0.0.1:0", "ssl.keystore.type": "PEM",
                         "ssl.keystore.location": str(material.server_pem)}).listeners


# -- certificates that are not valid now --------------------------------------------------------------


def _certificate(not_before: datetime.datetime, not_after: datetime.datetime) -> tuple[ec.EllipticCurvePrivateKey,
                                                                                        x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(not_before).not_valid_after(not_after)
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
            .sign(key, hashes.SHA256()))
    return key, cert


def _pem_keystore(path: Path, not_before: datetime.datetime, not_after: datetime.datetime) -> Path:
    key, cert = _certificate(not_before, not_after)
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()) + cert.public_bytes(serialization.Encoding.PEM))
    return path


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC).replace(microsecond=0)


def test_expired_certificate_is_logged_at_start_naming_keystore_and_date(tmp_path: Path) -> None:
    expired = _now() - datetime.timedelta(days=3)
    keystore = _pem_keystore(tmp_path / "expired.pem", expired - datetime.timedelta(days=30), expired)
    broker = BrokerProcess(tmp_path / "data", {"listeners": "SSL://127.0.0.1:0", "ssl.keystore.type": "PEM",
                                               "ssl.keystore.location": str(keystore)})
    broker.start(timeout=60)
    try:
        warnings = [line for line in broker.output if "WARNING" in line and "certificate" in line]
        assert len(warnings) == 1, broker.output[-20:]
        [line] = warnings
        assert f"listener SSL: the certificate CN=localhost in ssl.keystore.location={keystore} expired on " \
               f"{expired:%Y-%m-%d %H:%M:%S} UTC" in line
    finally:
        broker.stop()


def _warning(props: dict[str, str]) -> str | None:
    config = BrokerConfig({"listeners": "SSL://127.0.0.1:0", **props})
    return config.listener_security["SSL"].certificate_warning


def test_not_yet_valid_certificate_is_reported(tmp_path: Path) -> None:
    start = _now() + datetime.timedelta(days=2)
    keystore = _pem_keystore(tmp_path / "future.pem", start, start + datetime.timedelta(days=365))
    warning = _warning({"ssl.keystore.type": "PEM", "ssl.keystore.location": str(keystore)})
    assert warning is not None
    assert f"in ssl.keystore.location={keystore} is not valid before {start:%Y-%m-%d %H:%M:%S} UTC" in warning


def test_expired_certificate_in_pkcs12_and_in_pem_text_and_per_listener(tmp_path: Path) -> None:
    expired = _now() - datetime.timedelta(hours=5)
    key, cert = _certificate(expired - datetime.timedelta(days=1), expired)
    p12 = tmp_path / "expired.p12"
    p12.write_bytes(pkcs12.serialize_key_and_certificates(b"broker", key, cert, None,
                                                          serialization.BestAvailableEncryption(b"store-pw")))
    warning = _warning({"listener.name.ssl.ssl.keystore.type": "PKCS12",
                        "listener.name.ssl.ssl.keystore.location": str(p12),
                        "listener.name.ssl.ssl.keystore.password": "store-pw"})
    assert warning is not None
    assert f"in listener.name.ssl.ssl.keystore.location={p12} expired on {expired:%Y-%m-%d %H:%M:%S} UTC" in warning
    text = _warning({"ssl.keystore.type": "PEM",
                     "ssl.keystore.certificate.chain": cert.public_bytes(serialization.Encoding.PEM).decode(),
                     "ssl.keystore.key": key.private_bytes(serialization.Encoding.PEM,
                                                           serialization.PrivateFormat.PKCS8,
                                                           serialization.NoEncryption()).decode()})
    assert text is not None and f"in ssl.keystore.certificate.chain expired on {expired:%Y-%m-%d}" in text


def test_valid_certificate_gives_no_warning(material: Material) -> None:
    assert _warning({"ssl.keystore.type": "PEM", "ssl.keystore.location": str(material.server_pem)}) is None
    assert _warning({"ssl.keystore.type": "PKCS12", "ssl.keystore.location": str(material.server_p12),
                     "ssl.keystore.password": material.store_password}) is None
