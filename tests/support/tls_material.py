"""Certificates and keys for the security tests, made with ``cryptography`` at test time.

One CA signs the broker's certificate (SAN 127.0.0.1 and localhost) and the clients'
certificates; a second, unrelated CA signs a client certificate the broker must refuse.
Everything is written under a directory the caller gives (a pytest tmp dir), as PEM files
and as a PKCS12 keystore, so the tests can configure the broker either way.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID

__all__ = ["Material", "make_material"]

_KEY_PASSWORD = "key-secret"
STORE_PASSWORD = "store-secret"


def _name(cn: str, ou: str = "seaway-tests") -> x509.Name:
    return x509.Name([
        x509.NameAttribute(NameOID.COUNTRY_NAME, "NL"),
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Seaway"),
        x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, ou),
        x509.NameAttribute(NameOID.COMMON_NAME, cn),
    ])


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _cert(subject: x509.Name, key: ec.EllipticCurvePrivateKey, issuer: x509.Name,
          issuer_key: ec.EllipticCurvePrivateKey, *, ca: bool, san: list[x509.GeneralName] | None = None
          ) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(key.public_key())
               .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
               .not_valid_after(now + datetime.timedelta(days=2))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if san:
        builder = builder.add_extension(x509.SubjectAlternativeName(san), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _key_pem(key: ec.EllipticCurvePrivateKey, password: str | None = None) -> bytes:
    encryption: serialization.KeySerializationEncryption = (
        serialization.BestAvailableEncryption(password.encode()) if password else serialization.NoEncryption())
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)


@dataclass
class Material:
    directory: Path
    ca: Path  # PEM CA certificate clients and the broker trust
    server_pem: Path  # PEM key + chain (ssl.keystore.type=PEM with ssl.keystore.location)
    server_p12: Path  # PKCS12 keystore, password STORE_PASSWORD
    server_chain_text: str  # PEM text for ssl.keystore.certificate.chain
    server_key_text: str  # PEM text for ssl.keystore.key (unencrypted)
    client_cert: Path  # signed by the CA, CN=client-alice
    client_key: Path
    admin_cert: Path  # signed by the CA, CN=client-admin
    admin_key: Path
    rogue_cert: Path  # signed by another CA, CN=client-alice
    rogue_key: Path
    store_password: str = STORE_PASSWORD

    @property
    def client_dn(self) -> str:
        return "CN=client-alice,OU=seaway-tests,O=Seaway,C=NL"


def make_material(directory: Path) -> Material:
    directory.mkdir(parents=True, exist_ok=True)
    ca_key, other_key = _key(), _key()
    ca_name, other_name = _name("Seaway Test CA"), _name("Some Other CA")
    ca = _cert(ca_name, ca_key, ca_name, ca_key, ca=True)
    other_ca = _cert(other_name, other_key, other_name, other_key, ca=True)
    server_key = _key()
    server = _cert(_name("localhost"), server_key, ca_name, ca_key, ca=False, san=[
        x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])

    def write(name: str, data: bytes) -> Path:
        path = directory / name
        path.write_bytes(data)
        return path

    def client(cn: str, issuer: x509.Name, issuer_key: ec.EllipticCurvePrivateKey, prefix: str) -> tuple[Path, Path]:
        key = _key()
        cert = _cert(_name(cn), key, issuer, issuer_key, ca=False)
        return write(f"{prefix}.crt", _pem(cert)), write(f"{prefix}.key", _key_pem(key))

    ca_path = write("ca.crt", _pem(ca))
    server_pem = write("server.pem", _key_pem(server_key) + _pem(server) + _pem(ca))
    server_p12 = write("server.p12", pkcs12.serialize_key_and_certificates(
        b"broker", server_key, server, [ca], serialization.BestAvailableEncryption(STORE_PASSWORD.encode())))
    client_cert, client_key = client("client-alice", ca_name, ca_key, "alice")
    admin_cert, admin_key = client("client-admin", ca_name, ca_key, "admin")
    rogue_cert, rogue_key = client("client-alice", other_name, other_key, "rogue")
    write("other-ca.crt", _pem(other_ca))
    return Material(directory, ca_path, server_pem, server_p12, (_pem(server) + _pem(ca)).decode(),
                    _key_pem(server_key).decode(), client_cert, client_key, admin_cert, admin_key, rogue_cert,
                    rogue_key)
