"""``kafka.*`` security settings in Java's names (what spark-sql-kafka jobs carry), for librdkafka.

librdkafka takes most of Kafka's client settings under the same names (``security.protocol``,
``sasl.mechanism``, ``ssl.key.password``...), and its own (``sasl.username``, ``ssl.ca.location``)
pass through. The Java-only ones spark-sql-kafka jobs use are translated here:

=========================================  ===============================================
Java client setting                        librdkafka
=========================================  ===============================================
``sasl.jaas.config`` (Plain/Scram          ``sasl.username``, ``sasl.password``
LoginModule with username, password)
``ssl.truststore.location`` (+ ``.type``,  PEM file: ``ssl.ca.location``; PKCS12: its
``.password``), ``ssl.truststore.          certificates as ``ssl.ca.pem`` (read where the
certificates``                             query is planned)
``ssl.keystore.location`` (+ ``.type``,    PKCS12: ``ssl.keystore.location`` /
``.password``)                             ``.password``; PEM: ``ssl.certificate.location``
                                           and ``ssl.key.location``
``ssl.keystore.certificate.chain`` /       ``ssl.certificate.pem`` / ``ssl.key.pem``
``ssl.keystore.key``
``ssl.endpoint.identification.algorithm``  ``https``, or empty -> ``none``
``ssl.protocol``, ``ssl.enabled.protocols``,  dropped: librdkafka negotiates TLS 1.2/1.3 with
``ssl.keymanager/trustmanager.algorithm``  OpenSSL's defaults
=========================================  ===============================================

A JKS file is refused with the ``keytool`` command that converts it; another login module
(Kerberos, OAuth) is refused by name. Seaway's own full translation
(``seaway.security.kafka_client``) also serves the protocol client, which connectors may not
import; this is the librdkafka half of its rules, on the same ``jaas`` and ``tls`` helpers.
"""

from __future__ import annotations

from collections.abc import Mapping

from seaway.connectors.spark_source.errors import OptionError
from seaway.security.jaas import parse_jaas
from seaway.security.tls import TlsConfigError, tls_settings, truststore_pem

__all__ = ["librdkafka_settings"]

_LOGIN_MODULES = ("org.apache.kafka.common.security.plain.PlainLoginModule",
                  "org.apache.kafka.common.security.scram.ScramLoginModule")
_DROPPED = ("ssl.protocol", "ssl.enabled.protocols", "ssl.keymanager.algorithm", "ssl.trustmanager.algorithm")
_TRUST = ("ssl.truststore.location", "ssl.truststore.type", "ssl.truststore.password", "ssl.truststore.certificates")
_KEYSTORE = ("ssl.keystore.location", "ssl.keystore.type", "ssl.keystore.password", "ssl.keystore.certificate.chain",
             "ssl.keystore.key")


def librdkafka_settings(kafka: Mapping[str, str]) -> dict[str, str]:
    """``kafka.*`` settings (prefix removed) with Java's security names turned into librdkafka's."""
    out = {k: v for k, v in kafka.items() if k not in _DROPPED and k not in _TRUST and k not in _KEYSTORE
           and k != "sasl.jaas.config"}
    jaas = kafka.get("sasl.jaas.config")
    if jaas is not None:
        try:
            entry = parse_jaas(jaas)
        except ValueError as e:
            raise OptionError(f"Option 'kafka.sasl.jaas.config': {e}") from None
        if entry.module not in _LOGIN_MODULES:
            raise OptionError(f"Option 'kafka.sasl.jaas.config': login module {entry.module} is not supported "
                              f"(use {' or '.join(_LOGIN_MODULES)})")
        if "username" not in entry.options or "password" not in entry.options:
            raise OptionError('Option \'kafka.sasl.jaas.config\' needs username="..." and password="..."')
        out["sasl.username"], out["sasl.password"] = entry.options["username"], entry.options["password"]
    if kafka.get("ssl.endpoint.identification.algorithm", "https").strip() == "":
        out["ssl.endpoint.identification.algorithm"] = "none"
    ssl_values = {k[len("ssl."):]: v for k, v in kafka.items() if k in _TRUST or k in _KEYSTORE}
    if not ssl_values:
        return out
    settings = tls_settings(ssl_values, "kafka.ssl.")
    try:
        if settings.truststore_type.upper() == "PEM" and settings.truststore_location \
                and not settings.truststore_certificates:
            out["ssl.ca.location"] = settings.truststore_location
        else:
            pem = truststore_pem(settings)
            if pem is not None:
                out["ssl.ca.pem"] = pem
    except TlsConfigError as e:
        raise OptionError(str(e)) from None
    if settings.keystore_certificate_chain or settings.keystore_key:
        if not (settings.keystore_certificate_chain and settings.keystore_key):
            raise OptionError("Options 'kafka.ssl.keystore.certificate.chain' and 'kafka.ssl.keystore.key' go together")
        out["ssl.certificate.pem"], out["ssl.key.pem"] = settings.keystore_certificate_chain, settings.keystore_key
    elif settings.keystore_location:
        kind = settings.keystore_type.upper()
        if kind == "PEM":
            out["ssl.certificate.location"] = out["ssl.key.location"] = settings.keystore_location
        elif kind in ("PKCS12", "JKS"):
            try:
                with open(settings.keystore_location, "rb") as f:
                    head = f.read(4)
            except OSError as e:
                raise OptionError(f"Option 'kafka.ssl.keystore.location'={settings.keystore_location}: "
                                  f"{e.strerror or e}") from None
            if head == b"\xfe\xed\xfe\xed":
                raise OptionError(f"Option 'kafka.ssl.keystore.location'={settings.keystore_location} is a JKS "
                                  f"keystore, which librdkafka cannot read: convert it with keytool -importkeystore "
                                  f"-srckeystore {settings.keystore_location} -destkeystore keystore.p12 "
                                  "-deststoretype PKCS12")
            out["ssl.keystore.location"] = settings.keystore_location
            if settings.keystore_password is not None:
                out["ssl.keystore.password"] = settings.keystore_password
        else:
            raise OptionError(f"Option 'kafka.ssl.keystore.type'={settings.keystore_type}: expected PKCS12 or PEM")
    return out
