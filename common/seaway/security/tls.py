"""Kafka's ``ssl.*`` settings as Python ``SSLContext``s, for every Seaway server and client.

One loader for the broker's SSL and SASL_SSL listeners, the HTTPS listeners of the Connect
worker and the schema registry (:func:`build_server_context`), and the TLS connections Seaway
opens itself: worker to worker, registry to registry, and its own Kafka protocol client
(:func:`build_client_context`). Key material, as Kafka reads it:

- ``ssl.keystore.type=PEM`` with ``ssl.keystore.certificate.chain`` and ``ssl.keystore.key``
  (the PEM text itself, not file names) or with ``ssl.keystore.location`` naming one PEM file
  holding the key and the chain; an encrypted key takes ``ssl.key.password``;
- ``ssl.keystore.type=PKCS12`` (or Kafka's default ``JKS``: Java 9+ reads a PKCS12 file
  through a JKS keystore too) with ``ssl.keystore.location`` and ``ssl.keystore.password``,
  read with the ``cryptography`` package. A genuine JKS file is refused at start, saying how
  to convert it (``keytool -importkeystore -deststoretype PKCS12``);
- the truststore likewise (``ssl.truststore.certificates`` for PEM text), used by a server to
  verify client certificates when ``ssl.client.auth`` is ``requested`` or ``required``, and by
  a client to verify the server; without one, the system's CA bundle is used, as Kafka falls
  back to the JVM's ``cacerts``. A client checks the server's host name against its
  certificate unless ``ssl.endpoint.identification.algorithm`` is empty (Kafka's default is
  ``https``: checked).

``ssl.enabled.protocols`` may name TLSv1.2 and TLSv1.3 (older versions are refused);
``ssl.cipher.suites`` takes Kafka's (IANA) names. OpenSSL cannot narrow TLS 1.3's suites,
so a list that names no TLS 1.3 suite turns TLS 1.3 off (what the JVM ends up doing) and a
list naming some but not all of them is refused. Renegotiation is off.

Key files are never written to disk in clear: a PKCS12 key, or PEM text from the config, is
re-encrypted under a random password into a private temporary file that is removed as soon
as OpenSSL has read it.
"""

from __future__ import annotations

import datetime
import os
import secrets
import ssl
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cryptography import x509

__all__ = [
    "TLS13_SUITES",
    "TlsConfigError",
    "TlsSettings",
    "build_client_context",
    "build_server_context",
    "certificate_validity_warning",
    "openssl_cipher_names",
    "peer_subject_dn",
    "refuse_jks",
    "tls_settings",
    "truststore_pem",
]

TLS13_SUITES = ("TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256", "TLS_AES_128_GCM_SHA256")
_PROTOCOLS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}
_JKS_MAGIC = b"\xfe\xed\xfe\xed"

# Kafka (IANA) cipher suite name -> OpenSSL name, the TLS 1.2 suites OpenSSL 3 offers.
_TLS12_SUITES = {
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": "ECDHE-ECDSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384": "ECDHE-RSA-AES256-GCM-SHA384",
    "TLS_DHE_RSA_WITH_AES_256_GCM_SHA384": "DHE-RSA-AES256-GCM-SHA384",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-RSA-CHACHA20-POLY1305",
    "TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "DHE-RSA-CHACHA20-POLY1305",
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": "ECDHE-ECDSA-AES128-GCM-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256": "ECDHE-RSA-AES128-GCM-SHA256",
    "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256": "DHE-RSA-AES128-GCM-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384": "ECDHE-ECDSA-AES256-SHA384",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384": "ECDHE-RSA-AES256-SHA384",
    "TLS_DHE_RSA_WITH_AES_256_CBC_SHA256": "DHE-RSA-AES256-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256": "ECDHE-ECDSA-AES128-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256": "ECDHE-RSA-AES128-SHA256",
    "TLS_DHE_RSA_WITH_AES_128_CBC_SHA256": "DHE-RSA-AES128-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA": "ECDHE-ECDSA-AES256-SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA": "ECDHE-RSA-AES256-SHA",
    "TLS_DHE_RSA_WITH_AES_256_CBC_SHA": "DHE-RSA-AES256-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA": "ECDHE-ECDSA-AES128-SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA": "ECDHE-RSA-AES128-SHA",
    "TLS_DHE_RSA_WITH_AES_128_CBC_SHA": "DHE-RSA-AES128-SHA",
    "TLS_RSA_WITH_AES_256_GCM_SHA384": "AES256-GCM-SHA384",
    "TLS_RSA_WITH_AES_128_GCM_SHA256": "AES128-GCM-SHA256",
    "TLS_RSA_WITH_AES_256_CBC_SHA256": "AES256-SHA256",
    "TLS_RSA_WITH_AES_128_CBC_SHA256": "AES128-SHA256",
    "TLS_RSA_WITH_AES_256_CBC_SHA": "AES256-SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA": "AES128-SHA",
}


class TlsConfigError(ValueError):
    """A TLS setting that cannot be used; the message names the (listener-prefixed) key."""


@dataclass(frozen=True)
class TlsSettings:
    """One listener's effective ``ssl.*`` values (listener-prefixed ones already applied).

    ``prefix`` is what keys are called in messages (``listener.name.ssl.`` or ``ssl.``...).
    """

    prefix: str
    keystore_type: str = "JKS"
    keystore_location: str | None = None
    keystore_password: str | None = None
    key_password: str | None = None
    keystore_certificate_chain: str | None = None
    keystore_key: str | None = None
    truststore_type: str = "JKS"
    truststore_location: str | None = None
    truststore_password: str | None = None
    truststore_certificates: str | None = None
    client_auth: str = "none"
    enabled_protocols: tuple[str, ...] = ("TLSv1.2", "TLSv1.3")
    protocol: str = "TLSv1.3"
    cipher_suites: tuple[str, ...] = ()
    endpoint_identification_algorithm: str = "https"
    names: Mapping[str, str] = field(default_factory=dict)
    """Keys as the user wrote them, where they differ from ``prefix + name`` (librdkafka's names)."""

    def key(self, name: str) -> str:
        return self.names.get(name) or f"{self.prefix}{name}"

    @property
    def has_keystore(self) -> bool:
        return bool(self.keystore_location or self.keystore_certificate_chain or self.keystore_key)


def _list(value: str | None, default: tuple[str, ...]) -> tuple[str, ...]:
    if value is None:
        return default
    return tuple(item.strip() for item in value.split(",") if item.strip())


def tls_settings(values: Mapping[str, str], prefix: str = "ssl.", *, client_auth_key: str = "client.auth",
                 client_auth_default: str = "none") -> TlsSettings:
    """:class:`TlsSettings` from Kafka's names without their ``ssl.`` (``keystore.location``...).

    ``values`` maps the names after ``prefix`` to their (string) values; ``prefix`` is how the
    keys are named in messages (``ssl.``, ``listeners.https.ssl.``, ``kafkastore.ssl.``...).
    ``client_auth_key`` is the server's client-certificate key (``client.auth`` as Kafka,
    ``client.authentication`` as Confluent's REST servers).
    """
    def get(name: str, default: str | None = None) -> str | None:
        value = values.get(name)
        return default if value is None or (value.strip() == "" and default is not None) else value

    return TlsSettings(
        prefix=prefix,
        keystore_type=(get("keystore.type", "JKS") or "JKS").strip(),
        keystore_location=get("keystore.location") or None,
        keystore_password=get("keystore.password"),
        key_password=get("key.password"),
        keystore_certificate_chain=get("keystore.certificate.chain") or None,
        keystore_key=get("keystore.key") or None,
        truststore_type=(get("truststore.type", "JKS") or "JKS").strip(),
        truststore_location=get("truststore.location") or None,
        truststore_password=get("truststore.password"),
        truststore_certificates=get("truststore.certificates") or None,
        client_auth=(get(client_auth_key, client_auth_default) or client_auth_default).strip().lower(),
        enabled_protocols=_list(values.get("enabled.protocols"), ("TLSv1.2", "TLSv1.3")),
        protocol=(get("protocol", "TLSv1.3") or "TLSv1.3").strip(),
        cipher_suites=_list(values.get("cipher.suites"), ()),
        endpoint_identification_algorithm=(values.get("endpoint.identification.algorithm", "https") or "").strip(),
    )


def build_server_context(settings: TlsSettings) -> ssl.SSLContext:
    """The listener's server-side SSLContext; raises TlsConfigError naming the key at fault."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.options |= ssl.OP_NO_RENEGOTIATION | ssl.OP_NO_COMPRESSION
    _set_protocols(ctx, settings)
    _load_keystore(ctx, settings)
    if settings.client_auth in ("requested", "required"):
        _load_truststore(ctx, settings)
        ctx.verify_mode = ssl.CERT_REQUIRED if settings.client_auth == "required" else ssl.CERT_OPTIONAL
    elif settings.client_auth != "none":
        raise TlsConfigError(
            f"Invalid value {settings.client_auth!r} for {settings.key('client.auth')}: "
            "expected none, requested or required")
    return ctx


def build_client_context(settings: TlsSettings) -> ssl.SSLContext:
    """A client-side SSLContext: the server verified against the truststore (or the system's
    CAs), its host name checked unless endpoint identification is off, and the keystore (if
    any) presented as the client certificate. Raises TlsConfigError naming the key at fault."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.options |= ssl.OP_NO_RENEGOTIATION | ssl.OP_NO_COMPRESSION
    _set_protocols(ctx, settings)
    algorithm = settings.endpoint_identification_algorithm.lower()
    if algorithm not in ("https", ""):
        raise TlsConfigError(f"{settings.key('endpoint.identification.algorithm')}={algorithm}: expected https "
                             "(check the server's host name) or empty (do not)")
    ctx.check_hostname = algorithm == "https"
    ctx.verify_mode = ssl.CERT_REQUIRED
    _load_truststore(ctx, settings, ssl.Purpose.SERVER_AUTH)
    if settings.has_keystore:
        _load_keystore(ctx, settings)
    return ctx


def openssl_cipher_names(settings: TlsSettings) -> str | None:
    """``ssl.cipher.suites`` (IANA names) as an OpenSSL cipher list for the TLS 1.2 suites, or None."""
    unknown = [s for s in settings.cipher_suites if s not in _TLS12_SUITES and s not in TLS13_SUITES]
    if unknown:
        raise TlsConfigError(f"{settings.key('cipher.suites')}: unknown cipher suite(s) {', '.join(unknown)}")
    names = [_TLS12_SUITES[s] for s in settings.cipher_suites if s in _TLS12_SUITES]
    return ":".join(names) or None


def _set_protocols(ctx: ssl.SSLContext, settings: TlsSettings) -> None:
    versions = []
    for name in settings.enabled_protocols:
        version = _PROTOCOLS.get(name)
        if version is None:
            raise TlsConfigError(
                f"{settings.key('enabled.protocols')}: {name} is not supported (TLSv1.2 and TLSv1.3 are)")
        versions.append(version)
    if not versions:
        raise TlsConfigError(f"{settings.key('enabled.protocols')} names no protocol")
    if settings.protocol not in ("TLS", "TLSv1.2", "TLSv1.3"):
        raise TlsConfigError(f"{settings.key('protocol')}: {settings.protocol} is not supported")
    suites = settings.cipher_suites
    if suites:
        unknown = [s for s in suites if s not in _TLS12_SUITES and s not in TLS13_SUITES]
        if unknown:
            raise TlsConfigError(f"{settings.key('cipher.suites')}: unknown cipher suite(s) {', '.join(unknown)}")
        tls13 = [s for s in suites if s in TLS13_SUITES]
        if tls13 and len(tls13) != len(TLS13_SUITES):
            raise TlsConfigError(
                f"{settings.key('cipher.suites')}: TLS 1.3 cipher suites cannot be narrowed here; list all of "
                f"{', '.join(TLS13_SUITES)} or none (which turns TLS 1.3 off)")
        if not tls13:
            versions = [v for v in versions if v != ssl.TLSVersion.TLSv1_3]
            if not versions:
                raise TlsConfigError(f"{settings.key('cipher.suites')} names no TLS 1.3 suite, but only TLSv1.3 "
                                     "is enabled")
        tls12 = [_TLS12_SUITES[s] for s in suites if s in _TLS12_SUITES]
        if tls12:
            ctx.set_ciphers(":".join(tls12))
        elif ssl.TLSVersion.TLSv1_2 in versions:
            versions = [v for v in versions if v != ssl.TLSVersion.TLSv1_2]
    ctx.minimum_version = min(versions)
    ctx.maximum_version = max(versions)


def _read(path: str, key: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise TlsConfigError(f"{key}={path}: {exc.strerror or exc}") from None


@contextmanager
def _private_files(*contents: bytes) -> Iterator[list[str]]:
    """Temporary files readable by this user only, removed on exit."""
    directory = tempfile.mkdtemp(prefix="seaway-tls-")
    paths = []
    try:
        for i, data in enumerate(contents):
            path = os.path.join(directory, f"{i}.pem")
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            paths.append(path)
        yield paths
    finally:
        for path in paths:
            os.unlink(path)
        os.rmdir(directory)


def _load_keystore(ctx: ssl.SSLContext, s: TlsSettings) -> None:
    kind = s.keystore_type.upper()
    if kind == "PEM":
        if s.keystore_certificate_chain or s.keystore_key:
            if not (s.keystore_certificate_chain and s.keystore_key):
                raise TlsConfigError(f"{s.key('keystore.certificate.chain')} and {s.key('keystore.key')} "
                                     "must be set together")
            if s.keystore_location:
                raise TlsConfigError(f"{s.key('keystore.location')} cannot be combined with "
                                     f"{s.key('keystore.certificate.chain')}")
            _load_pem_text(ctx, s, s.keystore_certificate_chain.encode(), s.keystore_key.encode())
            return
        if not s.keystore_location:
            raise TlsConfigError(f"{s.key('keystore.location')} (or {s.key('keystore.certificate.chain')} and "
                                 f"{s.key('keystore.key')}) must be set for an SSL listener")
        _read(s.keystore_location, s.key("keystore.location"))
        try:
            ctx.load_cert_chain(s.keystore_location, password=s.key_password or s.keystore_password)
        except (ssl.SSLError, ValueError) as exc:
            raise TlsConfigError(f"{s.key('keystore.location')}={s.keystore_location}: cannot load a key and "
                                 f"certificate chain from it ({exc})") from None
        return
    if kind not in ("PKCS12", "JKS"):
        raise TlsConfigError(f"{s.key('keystore.type')}={s.keystore_type} is not supported (PEM, PKCS12 or a "
                             "PKCS12 file with JKS)")
    if not s.keystore_location:
        raise TlsConfigError(f"{s.key('keystore.location')} must be set for an SSL listener")
    data = _read(s.keystore_location, s.key("keystore.location"))
    refuse_jks(data, s.key("keystore.location"), s.keystore_location)
    from cryptography.hazmat.primitives.serialization import pkcs12

    last: Exception | None = None
    for password in dict.fromkeys((s.keystore_password, s.key_password)):
        try:
            key, cert, extra = pkcs12.load_key_and_certificates(
                data, password.encode() if password is not None else None)
            break
        except ValueError as exc:
            last = exc
    else:
        raise TlsConfigError(f"{s.key('keystore.location')}={s.keystore_location}: cannot open the PKCS12 "
                             f"keystore (wrong {s.key('keystore.password')}?): {last}")
    if key is None or cert is None:
        raise TlsConfigError(f"{s.key('keystore.location')}={s.keystore_location} holds no private key entry")
    from cryptography.hazmat.primitives import serialization

    chain = b"".join(c.public_bytes(serialization.Encoding.PEM) for c in [cert, *extra])
    password = secrets.token_urlsafe(24)
    pem_key = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.BestAvailableEncryption(password.encode()))
    with _private_files(chain, pem_key) as (chain_path, key_path):
        ctx.load_cert_chain(chain_path, key_path, password=password)


def _load_pem_text(ctx: ssl.SSLContext, s: TlsSettings, chain: bytes, key: bytes) -> None:
    from cryptography.hazmat.primitives import serialization

    try:
        private = serialization.load_pem_private_key(
            key, s.key_password.encode() if s.key_password is not None else None)
    except (ValueError, TypeError) as exc:
        raise TlsConfigError(f"{s.key('keystore.key')}: cannot read the private key (encrypted keys need "
                             f"{s.key('key.password')}): {exc}") from None
    password = secrets.token_urlsafe(24)
    pem_key = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.BestAvailableEncryption(password.encode()))
    with _private_files(chain, pem_key) as (chain_path, key_path):
        try:
            ctx.load_cert_chain(chain_path, key_path, password=password)
        except ssl.SSLError as exc:
            raise TlsConfigError(f"{s.key('keystore.certificate.chain')}: does not go with "
                                 f"{s.key('keystore.key')} or is not PEM certificates ({exc})") from None


def refuse_jks(data: bytes, key: str, path: str) -> None:
    """Raise TlsConfigError, saying how to convert it, if ``data`` is a Java KeyStore (JKS) file."""
    if data[:4] == _JKS_MAGIC:
        raise TlsConfigError(
            f"{key}={path} is a Java KeyStore (JKS) file, which Seaway cannot read; convert it with "
            f"`keytool -importkeystore -srckeystore {path} -destkeystore store.p12 -deststoretype PKCS12` "
            "and set the store type to PKCS12")


def _load_truststore(ctx: ssl.SSLContext, s: TlsSettings,
                     purpose: ssl.Purpose = ssl.Purpose.CLIENT_AUTH) -> None:
    pem = truststore_pem(s)
    if pem is None:
        ctx.load_default_certs(purpose)
        return
    try:
        ctx.load_verify_locations(cadata=pem)
    except (ssl.SSLError, ValueError) as exc:
        which = (s.key("truststore.certificates") if s.truststore_certificates
                 else f"{s.key('truststore.location')}={s.truststore_location}")
        raise TlsConfigError(f"{which}: not PEM certificates ({exc})") from None


def truststore_pem(s: TlsSettings) -> str | None:
    """The truststore's CA certificates as PEM text, or None when none is configured (use the
    system's CAs). PKCS12 (and a PKCS12 file typed JKS) is read with ``cryptography``."""
    kind = s.truststore_type.upper()
    if kind == "PEM":
        if s.truststore_certificates:
            if s.truststore_location:
                raise TlsConfigError(f"{s.key('truststore.location')} cannot be combined with "
                                     f"{s.key('truststore.certificates')}")
            return s.truststore_certificates
        if s.truststore_location:
            return _read(s.truststore_location, s.key("truststore.location")).decode("ascii", "replace")
        return None
    if kind not in ("PKCS12", "JKS"):
        raise TlsConfigError(f"{s.key('truststore.type')}={s.truststore_type} is not supported (PEM, PKCS12 or "
                             "a PKCS12 file with JKS)")
    if not s.truststore_location:
        return None
    data = _read(s.truststore_location, s.key("truststore.location"))
    refuse_jks(data, s.key("truststore.location"), s.truststore_location)
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.serialization import pkcs12

    try:
        store = pkcs12.load_pkcs12(
            data, s.truststore_password.encode() if s.truststore_password is not None else None)
    except ValueError as exc:
        raise TlsConfigError(f"{s.key('truststore.location')}={s.truststore_location}: cannot open the PKCS12 "
                             f"truststore (wrong {s.key('truststore.password')}?): {exc}") from None
    certs = [c.certificate for c in store.additional_certs]
    if store.cert is not None:
        certs.append(store.cert.certificate)
    if not certs:
        raise TlsConfigError(f"{s.key('truststore.location')}={s.truststore_location} holds no certificate")
    return "".join(c.public_bytes(serialization.Encoding.PEM).decode() for c in certs)


def peer_subject_dn(ssl_object: ssl.SSLObject | ssl.SSLSocket | None) -> str | None:
    """The client certificate's subject in RFC 2253 order (``CN=...,OU=...,O=...``), or None."""
    if ssl_object is None:
        return None
    der = ssl_object.getpeercert(binary_form=True)
    if not der:
        return None
    from cryptography import x509

    return x509.load_der_x509_certificate(der).subject.rfc4514_string()


def certificate_validity_warning(settings: TlsSettings, now: datetime.datetime | None = None) -> str | None:
    """Why the keystore's own certificate is not valid ``now`` (expired, not yet valid), or None.

    A server still starts with such a certificate (Kafka's does too, silently); every client
    that checks it then refuses the TLS handshake, so the operator should hear it at start,
    with the keystore and the date. Call it after :func:`build_server_context` accepted
    ``settings``: a keystore that cannot be read here gives None, never an error.
    """
    try:
        found = _keystore_certificate(settings)
    except (TlsConfigError, ValueError, TypeError, OSError):
        return None
    if found is None:
        return None
    cert, where = found
    moment = now or datetime.datetime.now(datetime.UTC)
    subject = cert.subject.rfc4514_string() or "(no subject)"
    if moment > cert.not_valid_after_utc:
        return (f"the certificate {subject} in {where} expired on "
                f"{cert.not_valid_after_utc:%Y-%m-%d %H:%M:%S} UTC: TLS clients will refuse the handshake")
    if moment < cert.not_valid_before_utc:
        return (f"the certificate {subject} in {where} is not valid before "
                f"{cert.not_valid_before_utc:%Y-%m-%d %H:%M:%S} UTC: TLS clients will refuse the handshake "
                "until then")
    return None


def _keystore_certificate(s: TlsSettings) -> tuple[x509.Certificate, str] | None:
    """(the keystore's leaf certificate, how the keystore is named in messages), or None."""
    from cryptography import x509

    kind = s.keystore_type.upper()
    if kind == "PEM":
        if s.keystore_certificate_chain:
            data, where = s.keystore_certificate_chain.encode(), s.key("keystore.certificate.chain")
        elif s.keystore_location:
            data = _read(s.keystore_location, s.key("keystore.location"))
            where = f"{s.key('keystore.location')}={s.keystore_location}"
        else:
            return None
        certs = x509.load_pem_x509_certificates(data)
        return (certs[0], where) if certs else None
    if not s.keystore_location:
        return None
    from cryptography.hazmat.primitives.serialization import pkcs12

    data = _read(s.keystore_location, s.key("keystore.location"))
    for password in dict.fromkeys((s.keystore_password, s.key_password)):
        try:
            _, cert, _ = pkcs12.load_key_and_certificates(data, password.encode() if password is not None else None)
        except ValueError:
            continue
        return (cert, f"{s.key('keystore.location')}={s.keystore_location}") if cert is not None else None
    return None
