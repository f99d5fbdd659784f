"""A Kafka client's security settings, checked and translated for the clients Seaway runs.

Users copy their client settings from Kafka's Java clients (``sasl.jaas.config``,
``ssl.truststore.location``...) or write librdkafka's (``sasl.username``, ``ssl.ca.location``...);
Seaway's Kafka clients are librdkafka (confluent-kafka) plus its own small protocol client for
the group protocols librdkafka cannot speak. :func:`resolve_security` checks a client's settings
once, by the rules below; :func:`librdkafka_config` gives librdkafka's settings from them, and the
protocol client's ``seaway.protocol.client_security.protocol_security`` its ``ClientSecurity``
(that half lives with the protocol client: this package imports no Seaway component):

=========================================  =====================================================
Java client setting                        what Seaway does
=========================================  =====================================================
``security.protocol``                      PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL
``sasl.mechanism``                         PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 (Java's default,
                                           GSSAPI, is refused like OAUTHBEARER: not supported)
``sasl.jaas.config``                       ``PlainLoginModule`` / ``ScramLoginModule`` with
                                           ``username`` and ``password`` -> ``sasl.username`` /
                                           ``sasl.password``; any other login module is refused
``ssl.truststore.location`` (+ type,       PEM file -> ``ssl.ca.location``; PKCS12 (or a PKCS12
password), ``ssl.truststore.certificates`` file typed JKS) and PEM text -> ``ssl.ca.pem``
``ssl.keystore.location`` (+ type,         PKCS12 -> ``ssl.keystore.location``; a PEM file with
password), ``ssl.key.password``,           key and chain -> ``ssl.certificate.location`` and
``ssl.keystore.certificate.chain/key``     ``ssl.key.location``; PEM text -> ``ssl.certificate.pem``
                                           and ``ssl.key.pem``. A genuine JKS file is refused with
                                           the keytool command that converts it
``ssl.endpoint.identification.algorithm``  ``https`` (default: host names checked) or empty (not)
``ssl.cipher.suites``                      IANA names -> OpenSSL's
``ssl.enabled.protocols``, ``ssl.protocol``,  accepted with their defaults' meaning only (TLS 1.2
``ssl.keymanager/trustmanager.algorithm``  and 1.3, Java's default algorithms)
=========================================  =====================================================

librdkafka's own names pass through as they are. Refused, naming the key: Kerberos and OAuth
settings (``sasl.kerberos.*``, ``sasl.login.*``, ``sasl.oauthbearer.*``), callback handler,
login and SSL engine factory classes, security providers, and any other ``ssl.``/``sasl.`` key
neither Java's clients nor librdkafka know (a typo would silently weaken the setup). The
protocol client implements fewer of librdkafka's TLS knobs (no CRL, curves, signature
algorithms, engines or providers): :attr:`ResolvedSecurity.unsupported_by_protocol_client` names
those, and ``protocol_security`` refuses them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from seaway.security.jaas import parse_jaas
from seaway.security.tls import (
    TlsConfigError,
    TlsSettings,
    openssl_cipher_names,
    refuse_jks,
    truststore_pem,
)

__all__ = [
    "MECHANISMS",
    "PROTOCOLS",
    "ClientConfigError",
    "ResolvedSecurity",
    "is_security_key",
    "librdkafka_config",
    "resolve_security",
    "security_props",
]

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
"""Kafka's ``security.protocol`` values (``SecurityProtocol``), for librdkafka and the protocol client alike."""
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
LOGIN_MODULES = ("org.apache.kafka.common.security.plain.PlainLoginModule",
                 "org.apache.kafka.common.security.scram.ScramLoginModule")

# Java client keys translated below (SslConfigs, SaslConfigs).
_JAVA_SSL = frozenset({
    "ssl.protocol", "ssl.provider", "ssl.cipher.suites", "ssl.enabled.protocols", "ssl.keystore.type",
    "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password", "ssl.keystore.key",
    "ssl.keystore.certificate.chain", "ssl.truststore.certificates", "ssl.truststore.type",
    "ssl.truststore.location", "ssl.truststore.password", "ssl.keymanager.algorithm",
    "ssl.trustmanager.algorithm", "ssl.endpoint.identification.algorithm", "ssl.secure.random.implementation",
    "ssl.engine.factory.class",
})
# librdkafka keys passed through (CONFIGURATION.md of librdkafka 2.x).
_LIBRDKAFKA_SSL = frozenset({
    "ssl.ca.location", "ssl.ca.pem", "ssl.ca.certificate.stores", "ssl.certificate.location",
    "ssl.certificate.pem", "ssl.key.location", "ssl.key.pem", "ssl.key.password", "ssl.keystore.location",
    "ssl.keystore.password", "ssl.crl.location", "ssl.curves.list", "ssl.sigalgs.list", "ssl.engine.id",
    "ssl.providers", "ssl.cipher.suites", "ssl.endpoint.identification.algorithm",
})
_PROTOCOL_CLIENT_UNSUPPORTED = ("ssl.crl.location", "ssl.ca.certificate.stores", "ssl.curves.list",
                                "ssl.sigalgs.list", "ssl.engine.id", "ssl.providers")
_REFUSED = {
    "ssl.engine.factory.class": "custom SSL engine factories are not supported",
    "ssl.provider": "Java security providers are not supported (OpenSSL is used)",
    "ssl.secure.random.implementation": "Java SecureRandom implementations are not supported (OpenSSL's is used)",
    "security.providers": "Java security providers are not supported",
    "sasl.client.callback.handler.class": "custom SASL callback handlers are not supported",
    "sasl.login.callback.handler.class": "custom SASL login callback handlers are not supported",
    "sasl.login.class": "custom SASL login classes are not supported",
}
_REFUSED_PREFIXES = {
    "sasl.kerberos.": "Kerberos (GSSAPI) is not supported by Seaway's clients",
    "sasl.oauthbearer.": "OAUTHBEARER is not supported by Seaway's clients",
    "sasl.login.": "SASL login modules for GSSAPI/OAUTHBEARER are not supported by Seaway's clients",
}
_ONLY = {
    "ssl.keymanager.algorithm": ("SunX509",),
    "ssl.trustmanager.algorithm": ("PKIX",),
    "ssl.protocol": ("TLS", "TLSv1.2", "TLSv1.3"),
}


class ClientConfigError(ValueError):
    """A client security setting Seaway cannot honour; the message names the key (with its prefix)."""


def is_security_key(key: str) -> bool:
    """Whether ``key`` is a client security setting (``security.protocol``, ``ssl.*``, ``sasl.*``...)."""
    return (key in ("security.protocol", "security.providers", "enable.ssl.certificate.verification")
            or key.startswith(("ssl.", "sasl.")))


def security_props(props: Mapping[str, Any]) -> dict[str, str]:
    """Only the security settings of ``props`` (as strings)."""
    return {k: str(v) for k, v in props.items() if is_security_key(k)}


@dataclass
class ResolvedSecurity:
    """A client's security settings, checked: librdkafka's keys, and what the protocol client needs
    (``security.protocol``, the SASL mechanism and credentials, the TLS settings to build its
    ``SSLContext`` from, and the librdkafka-only TLS keys it cannot honour)."""

    protocol: str = "PLAINTEXT"
    mechanism: str | None = None
    username: str = ""
    password: str = field(default="", repr=False)
    tls: TlsSettings | None = None
    verify: bool = True
    ciphers: str | None = None
    librdkafka: dict[str, str] = field(default_factory=dict)
    unsupported_by_protocol_client: list[str] = field(default_factory=list)


def _check_refusals(props: Mapping[str, str], name: Any) -> None:
    for key, value in props.items():
        reason = _REFUSED.get(key) or next((r for p, r in _REFUSED_PREFIXES.items() if key.startswith(p)), None)
        if reason is not None:
            raise ClientConfigError(f"{name(key)}: {reason}")
        allowed = _ONLY.get(key)
        if allowed is not None and value.strip() not in allowed:
            raise ClientConfigError(f"{name(key)}={value}: only {', '.join(allowed)} is supported")
        if key.startswith("ssl.") and key not in _JAVA_SSL | _LIBRDKAFKA_SSL:
            raise ClientConfigError(f"{name(key)} is not a client security setting Seaway knows (check for a typo)")
        if key.startswith("sasl.") and key not in ("sasl.mechanism", "sasl.mechanisms", "sasl.jaas.config",
                                                   "sasl.username", "sasl.password"):
            raise ClientConfigError(f"{name(key)} is not supported by Seaway's clients")


def resolve_security(props: Mapping[str, Any], prefix: str = "") -> ResolvedSecurity:
    """The security settings of ``props`` checked and translated; ``prefix`` is how the keys are
    named in errors (``producer.``, ``kafkastore.``...). Raises ClientConfigError naming the key."""
    sec = security_props(props)

    def name(key: str) -> str:
        return prefix + key

    _check_refusals(sec, name)
    out = ResolvedSecurity()
    protocol = sec.get("security.protocol", "PLAINTEXT").strip().upper()
    if protocol not in PROTOCOLS:
        raise ClientConfigError(f"{name('security.protocol')}={sec['security.protocol']}: expected one of "
                                f"{', '.join(PROTOCOLS)}")
    out.protocol = protocol
    if "security.protocol" in sec:
        out.librdkafka["security.protocol"] = protocol
    _resolve_sasl(sec, out, name)
    if protocol.endswith("SSL"):
        _resolve_tls(sec, out, name, prefix)
    elif any(k.startswith("ssl.") for k in sec):
        # Java ignores ssl.* on a PLAINTEXT connection; translate them anyway (a librdkafka
        # consumer given them just does not use them) so a wrong path is found now, not later
        _resolve_tls(sec, ResolvedSecurity(), name, prefix)
    if "enable.ssl.certificate.verification" in sec:
        value = sec["enable.ssl.certificate.verification"].strip().lower()
        if value not in ("true", "false"):
            raise ClientConfigError(f"{name('enable.ssl.certificate.verification')}={value}: expected true or false")
        out.verify = value == "true"
        out.librdkafka["enable.ssl.certificate.verification"] = value
    return out


def _resolve_sasl(sec: Mapping[str, str], out: ResolvedSecurity, name: Any) -> None:
    key = "sasl.mechanism" if "sasl.mechanism" in sec else "sasl.mechanisms"
    mechanism = sec.get(key, "GSSAPI").strip().upper()
    uses_sasl = out.protocol.startswith("SASL_")
    if uses_sasl or key in sec:
        if mechanism not in MECHANISMS:
            default = "" if key in sec else " (the default)"
            raise ClientConfigError(f"{name('sasl.mechanism')}={mechanism}{default}: SASL mechanism {mechanism} is "
                                    f"not supported by Seaway's clients; use {', '.join(MECHANISMS)}")
        out.mechanism = mechanism
        out.librdkafka["sasl.mechanism"] = mechanism
    username, password = sec.get("sasl.username"), sec.get("sasl.password")
    jaas = sec.get("sasl.jaas.config")
    if jaas is not None:
        try:
            entry = parse_jaas(jaas)
        except ValueError as exc:
            raise ClientConfigError(f"{name('sasl.jaas.config')}: {exc}") from None
        if entry.module not in LOGIN_MODULES:
            raise ClientConfigError(f"{name('sasl.jaas.config')}: login module {entry.module} is not supported by "
                                    f"Seaway's clients (use {' or '.join(LOGIN_MODULES)})")
        if username is not None or password is not None:
            raise ClientConfigError(f"{name('sasl.jaas.config')} and {name('sasl.username')}/"
                                    f"{name('sasl.password')} cannot both be set")
        username, password = entry.options.get("username"), entry.options.get("password")
        if username is None or password is None:
            raise ClientConfigError(f'{name("sasl.jaas.config")}: needs username="..." and password="..."')
    if uses_sasl and (username is None or password is None):
        raise ClientConfigError(f"{name('sasl.jaas.config')} (or {name('sasl.username')} and "
                                f"{name('sasl.password')}) must be set: {name('security.protocol')}={out.protocol} "
                                "needs credentials")
    if not uses_sasl:  # checked, but not passed on: librdkafka would warn that they are unused
        out.librdkafka.pop("sasl.mechanism", None)
        out.mechanism = None
        return
    assert username is not None and password is not None
    out.username, out.password = username, password
    out.librdkafka.update({"sasl.username": username, "sasl.password": password})


def _read_text(path: str, key: str) -> str:
    try:
        return Path(path).read_text(encoding="ascii", errors="replace")
    except OSError as exc:
        raise ClientConfigError(f"{key}={path}: {exc.strerror or exc}") from None


def _read_bytes(path: str, key: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise ClientConfigError(f"{key}={path}: {exc.strerror or exc}") from None


def _resolve_tls(sec: Mapping[str, str], out: ResolvedSecurity, name: Any, prefix: str) -> None:
    def get(key: str) -> str | None:
        """The value, or None when unset or blank; file names trimmed, PEM text kept as it is."""
        value = sec.get(key)
        if value is None or not value.strip():
            return None
        return value if key.endswith((".pem", ".certificates", ".chain", ".key")) else value.strip()

    names: dict[str, str] = {}
    lib = out.librdkafka
    enabled = get("ssl.enabled.protocols")
    if enabled is not None and {p.strip() for p in enabled.split(",") if p.strip()} != {"TLSv1.2", "TLSv1.3"}:
        raise ClientConfigError(f"{name('ssl.enabled.protocols')}={enabled}: Seaway's clients use TLSv1.2 and "
                                "TLSv1.3 and cannot narrow them; remove the setting")
    # trust: Java's truststore or librdkafka's CA
    trust_type, trust_location = (get("ssl.truststore.type") or "JKS").upper(), get("ssl.truststore.location")
    trust_text, trust_password = get("ssl.truststore.certificates"), sec.get("ssl.truststore.password")
    ca_location, ca_pem = get("ssl.ca.location"), get("ssl.ca.pem")
    if (trust_location or trust_text) and (ca_location or ca_pem):
        raise ClientConfigError(f"{name('ssl.truststore.location')} and {name('ssl.ca.location')} (or their PEM "
                                "text forms) cannot both be set")
    if ca_location or ca_pem:
        names.update({"truststore.location": name("ssl.ca.location"), "truststore.certificates": name("ssl.ca.pem")})
        trust_type, trust_location, trust_text = "PEM", ca_location, ca_pem
    # client certificate: Java's keystore or librdkafka's certificate/key
    key_type = (get("ssl.keystore.type") or "JKS").upper()
    key_location, key_chain, key_text = get("ssl.keystore.location"), get("ssl.keystore.certificate.chain"), get(
        "ssl.keystore.key")
    cert_location, key_file = get("ssl.certificate.location"), get("ssl.key.location")
    cert_pem, key_pem = get("ssl.certificate.pem"), get("ssl.key.pem")
    if (cert_location or key_file or cert_pem or key_pem) and (key_chain or key_text or
                                                                (key_location and key_type == "PEM")):
        raise ClientConfigError(f"{name('ssl.keystore.location')} and {name('ssl.certificate.location')} (or their "
                                "PEM text forms) cannot both be set")
    if cert_location or key_file:
        if not (cert_location and key_file):
            raise ClientConfigError(f"{name('ssl.certificate.location')} and {name('ssl.key.location')} must be set "
                                    "together")
        names.update({"keystore.certificate.chain": name("ssl.certificate.location"),
                      "keystore.key": name("ssl.key.location")})
        key_type, key_location = "PEM", None
        key_chain = _read_text(cert_location, name("ssl.certificate.location"))
        key_text = _read_text(key_file, name("ssl.key.location"))
        lib.update({"ssl.certificate.location": cert_location, "ssl.key.location": key_file})
    elif cert_pem or key_pem:
        names.update({"keystore.certificate.chain": name("ssl.certificate.pem"), "keystore.key": name("ssl.key.pem")})
        key_type, key_chain, key_text = "PEM", cert_pem, key_pem
        lib.update({k: v for k, v in (("ssl.certificate.pem", cert_pem), ("ssl.key.pem", key_pem)) if v})
    algorithm = sec.get("ssl.endpoint.identification.algorithm", "https").strip().lower()
    if algorithm == "none":
        algorithm = ""
    settings = TlsSettings(
        prefix=prefix + "ssl.", keystore_type=key_type, keystore_location=key_location,
        keystore_password=sec.get("ssl.keystore.password"), key_password=sec.get("ssl.key.password"),
        keystore_certificate_chain=key_chain, keystore_key=key_text, truststore_type=trust_type,
        truststore_location=trust_location, truststore_password=trust_password, truststore_certificates=trust_text,
        endpoint_identification_algorithm=algorithm, names=names,
    )
    try:
        if algorithm not in ("https", ""):
            raise TlsConfigError(f"{settings.key('endpoint.identification.algorithm')}={algorithm}: expected https "
                                 "(check the server's host name) or empty (do not)")
        lib["ssl.endpoint.identification.algorithm"] = "https" if algorithm else "none"
        if trust_type == "PEM" and trust_location and not trust_text:
            if not Path(trust_location).exists():  # a file, or (librdkafka) a directory of CAs
                raise ClientConfigError(f"{settings.key('truststore.location')}={trust_location}: no such file")
            lib["ssl.ca.location"] = trust_location
        else:
            pem = truststore_pem(settings)
            if pem is not None:
                lib["ssl.ca.pem"] = pem
        if key_chain or key_text:
            if not (key_chain and key_text):
                raise TlsConfigError(f"{settings.key('keystore.certificate.chain')} and {settings.key('keystore.key')} "
                                     "must be set together")
            if not (cert_location or cert_pem):
                lib.update({"ssl.certificate.pem": key_chain, "ssl.key.pem": key_text})
        elif key_location and key_type == "PEM":
            lib.update({"ssl.certificate.location": key_location, "ssl.key.location": key_location})
        elif key_location:
            if key_type not in ("PKCS12", "JKS"):
                raise TlsConfigError(f"{settings.key('keystore.type')}={key_type} is not supported (PEM, PKCS12 or "
                                     "a PKCS12 file with JKS)")
            refuse_jks(_read_bytes(key_location, settings.key("keystore.location")),
                       settings.key("keystore.location"), key_location)
            lib["ssl.keystore.location"] = key_location
            if sec.get("ssl.keystore.password") is not None:
                lib["ssl.keystore.password"] = sec["ssl.keystore.password"]
        if sec.get("ssl.key.password") is not None and (key_chain or key_location):
            lib["ssl.key.password"] = sec["ssl.key.password"]
        suites = get("ssl.cipher.suites")
        if suites is not None:
            items = [s.strip() for s in suites.split(",") if s.strip()]
            if all(item.startswith("TLS_") for item in items):
                converted = openssl_cipher_names(TlsSettings(prefix=prefix + "ssl.", cipher_suites=tuple(items)))
                if converted:
                    lib["ssl.cipher.suites"] = converted
                    out.ciphers = converted
            else:  # librdkafka's (OpenSSL's) syntax
                lib["ssl.cipher.suites"] = suites
                out.ciphers = suites
    except TlsConfigError as exc:
        raise ClientConfigError(str(exc)) from None
    for key in _PROTOCOL_CLIENT_UNSUPPORTED:
        if key in sec:
            lib[key] = sec[key]
            out.unsupported_by_protocol_client.append(name(key))
    out.tls = settings


def librdkafka_config(props: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``props`` for confluent-kafka: security settings checked and in librdkafka's names, the
    other settings unchanged. ``prefix`` is how the keys are named in errors (``producer.``,
    ``kafkastore.``...). Raises ClientConfigError naming the key."""
    resolved = resolve_security(props, prefix)
    out: dict[str, Any] = {k: v for k, v in props.items() if not is_security_key(k)}
    out.update(resolved.librdkafka)
    return out

