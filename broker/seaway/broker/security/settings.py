"""The broker's security settings: Kafka's keys, per-listener overrides, and refusals.

:data:`SECURITY_CONFIGS` are the security keys the broker implements (``config.py`` types
and validates them with the others, DescribeConfigs shows them, passwords as sensitive).
Per listener, ``listener.name.<listener>.<key>`` overrides a key (listener names are
matched case-insensitively; Kafka writes them in lower case), and SASL settings also
take a mechanism: ``listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config``. As in Kafka
(KIP-684), a SASL_SSL listener asks for client certificates only when its own
``listener.name.<l>.ssl.client.auth`` says so.

Every other security key is refused at start by :func:`refusal`, naming the key: Kerberos
(GSSAPI) and OAUTHBEARER settings, custom classes (principal builder, callback handlers,
SSL engine factory, security providers), delegation tokens, the password encoder, a
non-zero ``connections.max.reauth.ms``, the broker-wide ``sasl.jaas.config`` (Kafka's broker
reads JAAS only per listener and mechanism) and any unknown ``ssl.``/``sasl.`` key (most
likely a typo that would silently weaken the setup).

:func:`listener_security` then resolves each listener's protocol, TLS context (built and
loaded at once, so a bad keystore stops the broker before it listens) and SASL mechanisms.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from seaway.broker.security.jaas import PLAIN_MODULE, SCRAM_MODULE, parse_jaas
from seaway.broker.security.principal import SslPrincipalMapper, parse_principal
from seaway.broker.security.sasl import PLAIN, SUPPORTED_MECHANISMS
from seaway.broker.security.tls import (
    TlsConfigError,
    TlsSettings,
    build_server_context,
    certificate_validity_warning,
)
from seaway.configdef import ConfigType

__all__ = [
    "AUTHORIZERS",
    "PROTOCOLS",
    "SECURITY_CONFIGS",
    "BrokerSecurity",
    "ListenerSecurity",
    "SecurityConfigError",
    "broker_tls_settings",
    "listener_security",
    "override_target",
    "parse_super_users",
    "refusal",
    "resolve_security",
]

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
AUTHORIZERS = ("org.apache.kafka.metadata.authorizer.StandardAuthorizer", "kafka.security.authorizer.AclAuthorizer")
DEFAULT_PRINCIPAL_BUILDER = "org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder"
LISTENER_PREFIX = "listener.name."

_STR, _LIST, _INT, _LONG, _BOOL = (ConfigType.STRING, ConfigType.LIST, ConfigType.INT, ConfigType.LONG,
                                   ConfigType.BOOLEAN)
# (name, type, default, doc, sensitive, choices)
SECURITY_CONFIGS: list[tuple[str, ConfigType, Any, str, bool, tuple[str, ...]]] = [
    ("ssl.keystore.type", _STR, "JKS", "PEM, PKCS12, or JKS (a PKCS12 file, as Java 9+ reads it).", False, ()),
    ("ssl.keystore.location", _STR, None, "Keystore file (PKCS12, or PEM with key and chain).", False, ()),
    ("ssl.keystore.password", _STR, None, "Keystore password.", True, ()),
    ("ssl.key.password", _STR, None, "Password of the private key (encrypted PEM keys).", True, ()),
    ("ssl.keystore.certificate.chain", _STR, None, "PEM certificate chain (the text itself).", True, ()),
    ("ssl.keystore.key", _STR, None, "PEM private key (the text itself).", True, ()),
    ("ssl.truststore.type", _STR, "JKS", "PEM, PKCS12, or JKS (a PKCS12 file).", False, ()),
    ("ssl.truststore.location", _STR, None, "Truststore file: CAs that sign client certificates.", False, ()),
    ("ssl.truststore.password", _STR, None, "Truststore password.", True, ()),
    ("ssl.truststore.certificates", _STR, None, "PEM CA certificates (the text itself).", True, ()),
    ("ssl.client.auth", _STR, "none", "Client certificates: none, requested or required.", False,
     ("none", "requested", "required")),
    ("ssl.enabled.protocols", _LIST, ("TLSv1.2", "TLSv1.3"), "TLS versions served (TLSv1.2, TLSv1.3).", False,
     ("TLSv1.2", "TLSv1.3")),
    ("ssl.protocol", _STR, "TLSv1.3", "Kept for compatibility (ssl.enabled.protocols decides).", False,
     ("TLS", "TLSv1.2", "TLSv1.3")),
    ("ssl.cipher.suites", _LIST, (), "Cipher suites by IANA name (empty: OpenSSL's defaults).", False, ()),
    ("ssl.principal.mapping.rules", _STR, "DEFAULT", "Client certificate DN -> principal name rules.",
     False, ()),
    ("ssl.endpoint.identification.algorithm", _STR, "https",
     "Unused: the broker opens no TLS connections of its own.", False, ()),
    ("ssl.keymanager.algorithm", _STR, "SunX509", "Java's; only the default is accepted.", False,
     ("SunX509",)),
    ("ssl.trustmanager.algorithm", _STR, "PKIX", "Java's; only the default is accepted.", False, ("PKIX",)),
    ("ssl.allow.dn.changes", _BOOL, False, "Unused: keystores are not reloaded at run time.", False, ()),
    ("ssl.allow.san.changes", _BOOL, False, "Unused: keystores are not reloaded at run time.", False, ()),
    ("sasl.enabled.mechanisms", _LIST, ("GSSAPI",),
     "SASL mechanisms of SASL listeners: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 (GSSAPI is not served).", False, ()),
    ("sasl.mechanism.inter.broker.protocol", _STR, "GSSAPI",
     "Unused: a single node opens no inter-broker connections.", False, ()),
    ("sasl.server.max.receive.size", _INT, 524288, "Largest frame before SASL authentication completes.",
     False, ()),
    ("security.inter.broker.protocol", _STR, "PLAINTEXT", "Names the inter-broker listener (the one called "
     "like the protocol, which must be advertised when this is set) when inter.broker.listener.name is unset; "
     "no inter-broker traffic on one node.", False, PROTOCOLS),
    ("inter.broker.listener.name", _STR, None, "Must name an advertised listener when set.", False, ()),
    ("control.plane.listener.name", _STR, None, "Must name a listener when set; served like the others.",
     False, ()),
    ("connections.max.reauth.ms", _LONG, 0, "0 only: SASL re-authentication (KIP-368) is not offered.", False,
     ()),
    ("connection.failed.authentication.delay.ms", _INT, 100,
     "Delay before answering (and closing) a failed authentication.", False, ()),
    ("authorizer.class.name", _STR, "", "StandardAuthorizer (or its alias AclAuthorizer) turns ACLs on.",
     False, ("", *AUTHORIZERS)),
    ("super.users", _STR, None, "Principals allowed everything: User:admin;User:ops.", False, ()),
    ("allow.everyone.if.no.acl.found", _BOOL, False, "Allow access to resources no ACL applies to.", False,
     ()),
    ("principal.builder.class", _STR, DEFAULT_PRINCIPAL_BUILDER, "Only Kafka's default builder.", False,
     (DEFAULT_PRINCIPAL_BUILDER,)),
    ("metadata.log.dir", _STR, None, "Where the __cluster_metadata log (ACLs, SCRAM credentials) lives "
     "(default: the first of log.dirs).", False, ()),
]
SECURITY_KEYS = frozenset(c[0] for c in SECURITY_CONFIGS)

# Per-listener keys: the ssl.* ones, sasl.enabled.mechanisms, connections.max.reauth.ms.
_LISTENER_KEYS = frozenset(k for k in SECURITY_KEYS if k.startswith("ssl.")) | {
    "sasl.enabled.mechanisms", "connections.max.reauth.ms", "sasl.server.max.receive.size"}
_MECHANISM_NAMES = ("plain", "scram-sha-256", "scram-sha-512", "gssapi", "oauthbearer")

_REFUSED_PREFIXES = {
    "sasl.kerberos.": "Kerberos (GSSAPI) is not supported by Seaway's broker",
    "sasl.oauthbearer.": "OAUTHBEARER is not supported by Seaway's broker",
    "sasl.login.": "SASL login modules for GSSAPI/OAUTHBEARER are not supported by Seaway's broker",
    "delegation.token.": "delegation tokens are not supported by Seaway's broker",
    "password.encoder.": "dynamic password configs (the password encoder) are not supported by Seaway's broker",
}
_REFUSED_KEYS = {
    "ssl.engine.factory.class": "custom SSL engine factories are not supported",
    "ssl.provider": "security providers are not supported (Python's ssl module and OpenSSL are used)",
    "ssl.secure.random.implementation": "Java SecureRandom implementations are not supported (OpenSSL's is used)",
    "security.providers": "security providers are not supported",
    "sasl.server.callback.handler.class": "custom SASL callback handlers are not supported (PLAIN users come from "
                                          "the listener's JAAS config, SCRAM users from the credential store)",
    "sasl.client.callback.handler.class": "custom SASL callback handlers are not supported",
    "sasl.jaas.config": "the broker reads JAAS config per listener and mechanism only: set "
                        "listener.name.<listener>.<mechanism>.sasl.jaas.config",
    "sasl.mechanism": "sasl.mechanism is a client setting",
}


# Keys only Kafka's default (or the listed values) of which is implemented.
_ONLY = {
    "principal.builder.class": ((DEFAULT_PRINCIPAL_BUILDER,), "custom principal builders are not supported"),
    "authorizer.class.name": (("", *AUTHORIZERS), "only Kafka's StandardAuthorizer (or AclAuthorizer) is "
                                                 "implemented"),
    "ssl.keymanager.algorithm": (("SunX509",), "Java key manager algorithms are not supported"),
    "ssl.trustmanager.algorithm": (("PKIX",), "Java trust manager algorithms are not supported"),
}


class SecurityConfigError(ValueError):
    """A security setting the broker cannot honour; the message names the key."""


def _listener_rest(key: str, listener_names: set[str]) -> tuple[str, str | None, str] | None:
    """``listener.name.<l>.[<mech>.]<rest>`` -> (listener, mechanism or None, rest), else None."""
    if not key.startswith(LISTENER_PREFIX):
        return None
    name, _, rest = key[len(LISTENER_PREFIX):].partition(".")
    if not rest or name.upper() not in listener_names:
        return None
    mech, dot, tail = rest.partition(".")
    if dot and mech.lower() in _MECHANISM_NAMES and tail.startswith(("sasl.", "connections.")):
        return name.upper(), mech.upper(), tail
    return name.upper(), None, rest


def refusal(key: str, value: str, listener_names: set[str]) -> str | None:
    """Why the broker refuses to start with ``key=value`` set, or None when it is fine.

    Listener-prefixed keys are judged by what they override.
    """
    split = _listener_rest(key, listener_names)
    if split is None and key.startswith(LISTENER_PREFIX):
        return None  # a listener that does not exist: config.py warns about it
    target = key if split is None else split[2]
    if split is not None and split[1] is not None:
        mechanism = split[1]
        if mechanism in ("GSSAPI", "OAUTHBEARER"):
            return f"{key}: SASL mechanism {mechanism} is not supported by Seaway's broker"
        if target == "sasl.jaas.config":
            return None
        if target != "connections.max.reauth.ms":
            return f"{key}: {_REFUSED_KEYS.get(target, 'not supported by Seaway broker')}"
    if target == "connections.max.reauth.ms":
        return None if value.strip() in ("0", "") else (
            f"{key}={value}: SASL re-authentication (KIP-368) is not supported by Seaway's broker; "
            "it must be 0")
    only = _ONLY.get(target)
    if only is not None and value.strip() not in only[0]:
        return f"{key}={value}: {only[1]}"
    reason = _REFUSED_KEYS.get(target)
    if reason is None:
        reason = next((r for p, r in _REFUSED_PREFIXES.items() if target.startswith(p)), None)
    if reason is not None:
        return f"{key}: {reason}"
    known = _LISTENER_KEYS if split is not None else SECURITY_KEYS
    if target.startswith(("ssl.", "sasl.", "security.", "authorizer.", "principal.")) and target not in known:
        return f"{key} is not a security config Seaway's broker knows (check for a typo)"
    if target == "sasl.enabled.mechanisms":
        unsupported = [m.strip() for m in value.split(",") if m.strip() and m.strip() not in SUPPORTED_MECHANISMS]
        if unsupported:
            return (f"{key}={value}: SASL mechanism(s) {', '.join(unsupported)} not supported by Seaway's broker "
                    f"(it serves {', '.join(SUPPORTED_MECHANISMS)})")
    return None


def override_target(key: str, listener_names: set[str]) -> str | None:
    """The key a ``listener.name.<l>.[<mechanism>.]<key>`` overrides (None: not such a key)."""
    split = _listener_rest(key, listener_names)
    return None if split is None else split[2]


def parse_super_users(text: str | None) -> frozenset[str]:
    """``User:a;User:b`` -> {"User:a", "User:b"}; raises SecurityConfigError on a malformed entry."""
    users = set()
    for item in (text or "").split(";"):
        item = item.strip()
        if not item:
            continue
        try:
            users.add(str(parse_principal(item)))
        except ValueError as exc:
            raise SecurityConfigError(f"super.users: {exc}") from None
    return frozenset(users)


@dataclass(frozen=True)
class ListenerSecurity:
    """What a connection on one listener goes through before its requests are served."""

    name: str
    protocol: str
    ssl_context: ssl.SSLContext | None = None
    mechanisms: tuple[str, ...] = ()
    plain_users: Mapping[str, str] = field(default_factory=dict)
    certificate_warning: str | None = None
    """Why the listener's certificate is not valid now (expired, not yet valid): the server
    logs it at start, since every client that checks the certificate will refuse it."""

    @property
    def uses_sasl(self) -> bool:
        return self.protocol.startswith("SASL_")


def _value(config: Any, listener: str, key: str) -> Any:
    """A listener's effective value: its ``listener.name.<l>.`` override, else the broker's."""
    raw: Mapping[str, str] = config.raw
    for candidate, value in raw.items():
        split = _listener_rest(candidate, {listener})
        if split is not None and split[1] is None and split[2] == key and split[0] == listener:
            return config.parse_value(key, value)
    return config.get(key)


def _prefixed(config: Any, listener: str, key: str) -> tuple[str, str | None]:
    """(key name for messages, value) of a listener-prefixed key, or of the broker's."""
    for candidate, value in config.raw.items():
        split = _listener_rest(candidate, {listener})
        if split is not None and split[1] is None and split[2] == key:
            return candidate, value
    return key, None


def _tls_settings(config: Any, listener: str, protocol: str) -> TlsSettings:
    def get(key: str) -> Any:
        return _value(config, listener, key)

    overridden = False
    for candidate in config.raw:
        split = _listener_rest(candidate, {listener})
        overridden = overridden or (split is not None and split[2].startswith("ssl."))
    client_auth = get("ssl.client.auth")
    if protocol == "SASL_SSL":
        # KIP-684: only the listener's own ssl.client.auth asks SASL_SSL clients for certificates
        _, own = _prefixed(config, listener, "ssl.client.auth")
        client_auth = own if own is not None else "none"
    return TlsSettings(
        prefix=f"listener.name.{listener.lower()}.ssl." if overridden else "ssl.",
        keystore_type=get("ssl.keystore.type"),
        keystore_location=get("ssl.keystore.location"),
        keystore_password=get("ssl.keystore.password"),
        key_password=get("ssl.key.password"),
        keystore_certificate_chain=get("ssl.keystore.certificate.chain"),
        keystore_key=get("ssl.keystore.key"),
        truststore_type=get("ssl.truststore.type"),
        truststore_location=get("ssl.truststore.location"),
        truststore_password=get("ssl.truststore.password"),
        truststore_certificates=get("ssl.truststore.certificates"),
        client_auth=str(client_auth).strip().lower(),
        enabled_protocols=tuple(get("ssl.enabled.protocols")),
        protocol=get("ssl.protocol"),
        cipher_suites=tuple(get("ssl.cipher.suites")),
    )


def broker_tls_settings(config: Any) -> TlsSettings:
    """The broker-level ``ssl.*`` settings (no listener's overrides), for its HTTPS metrics listener."""
    return _tls_settings(config, "", "SSL")


def _sasl(config: Any, listener: str) -> tuple[tuple[str, ...], dict[str, str]]:
    key, raw = _prefixed(config, listener, "sasl.enabled.mechanisms")
    mechanisms = tuple(_value(config, listener, "sasl.enabled.mechanisms"))
    if raw is None:
        key = "sasl.enabled.mechanisms"
    if not mechanisms:
        raise SecurityConfigError(f"{key}: no SASL mechanism enabled for listener {listener}")
    unsupported = [m for m in mechanisms if m not in SUPPORTED_MECHANISMS]
    if unsupported:
        default = " (Kafka's default)" if key not in config.raw else ""
        raise SecurityConfigError(
            f"{key}={','.join(mechanisms)}{default}: listener {listener} would need SASL mechanism(s) "
            f"{', '.join(unsupported)}, which Seaway's broker does not serve; enable PLAIN, SCRAM-SHA-256 "
            "and/or SCRAM-SHA-512")
    plain_users: dict[str, str] = {}
    for mechanism in mechanisms:
        jaas_key = f"listener.name.{listener.lower()}.{mechanism.lower()}.sasl.jaas.config"
        text = next((v for k, v in config.raw.items() if k.lower() == jaas_key), None)
        if text is None:
            if mechanism == PLAIN:
                raise SecurityConfigError(
                    f"{jaas_key} must be set for listener {listener}: PLAIN checks passwords against its "
                    f'user_<name>="<password>" options ({PLAIN_MODULE} required user_alice="...";)')
            continue
        try:
            entry = parse_jaas(text)
        except ValueError as exc:
            raise SecurityConfigError(f"{jaas_key}: {exc}") from None
        expected = PLAIN_MODULE if mechanism == PLAIN else SCRAM_MODULE
        if entry.module != expected:
            raise SecurityConfigError(f"{jaas_key}: login module {entry.module} is not supported for {mechanism} "
                                      f"(use {expected})")
        if mechanism == PLAIN:
            plain_users = entry.plain_users()
            if not plain_users:
                raise SecurityConfigError(f'{jaas_key}: no user_<name>="<password>" option, so no PLAIN user '
                                          "could log in")
    return mechanisms, plain_users


@dataclass(frozen=True)
class BrokerSecurity:
    listeners: dict[str, ListenerSecurity]
    super_users: frozenset[str]


def resolve_security(config: Any, listeners: list[tuple[str, str, int]], protocol_map: Mapping[str, str]) -> (
    BrokerSecurity
):
    """The broker's security settings, checked and loaded; raises SecurityConfigError naming the key."""
    names = {name for name, _, _ in listeners}
    if config.get("connection.failed.authentication.delay.ms") < 0:
        raise SecurityConfigError("connection.failed.authentication.delay.ms must be at least 0")
    if config.get("sasl.server.max.receive.size") < 1:
        raise SecurityConfigError("sasl.server.max.receive.size must be at least 1")
    _check_inter_broker_listener(config, listeners, protocol_map)
    value = config.raw.get("control.plane.listener.name")
    if value is not None and value.strip().upper() not in names:
        raise SecurityConfigError(f"control.plane.listener.name={value} must be the name of one of the listeners "
                                  f"({', '.join(sorted(names))})")
    return BrokerSecurity(listener_security(config, listeners, protocol_map),
                          parse_super_users(config.get("super.users")))


def _check_inter_broker_listener(config: Any, listeners: list[tuple[str, str, int]],
                                 protocol_map: Mapping[str, str]) -> None:
    """Kafka's ``KafkaConfig`` checks of the inter-broker listener, with Kafka's messages.

    ``inter.broker.listener.name`` must be in ``listener.security.protocol.map`` and then an
    advertised listener; ``security.inter.broker.protocol`` names the listener called like the
    protocol (Kafka's ``ListenerName.forSecurityProtocol``), which must be advertised too. One
    node has no inter-broker traffic, so only a value the operator set is checked: Kafka also
    refuses its default (PLAINTEXT) when no listener is called PLAINTEXT, which would stop
    every ``listeners=SSL://...``-only configuration here for nothing (a documented deviation).
    """
    named = config.raw.get("inter.broker.listener.name")
    protocol = config.raw.get("security.inter.broker.protocol")
    if named is not None and protocol is not None:
        raise SecurityConfigError(
            "Only one of inter.broker.listener.name and security.inter.broker.protocol should be set.")
    if named is not None:
        listener, origin = named.strip().upper(), ""
        if listener not in protocol_map:
            raise SecurityConfigError(f"Listener with name {listener} defined in inter.broker.listener.name not "
                                      "found in listener.security.protocol.map.")
    elif protocol is not None:
        listener = protocol.strip().upper()
        origin = f" (security.inter.broker.protocol={protocol.strip()} names the listener {listener})"
    else:
        return
    advertised = [name for name, _, _ in getattr(config, "advertised_listeners", None) or listeners]
    if listener not in advertised:
        raise SecurityConfigError(
            "inter.broker.listener.name must be a listener name defined in advertised.listeners. The valid "
            f"options based on currently configured listeners are {','.join(advertised)}{origin}")


def listener_security(config: Any, listeners: list[tuple[str, str, int]], protocol_map: Mapping[str, str]) -> (
    dict[str, ListenerSecurity]
):
    """Each served listener's security, TLS contexts loaded; raises SecurityConfigError."""
    result: dict[str, ListenerSecurity] = {}
    for name, _, _ in listeners:
        protocol = protocol_map[name]
        context = warning = None
        if protocol in ("SSL", "SASL_SSL"):
            settings = _tls_settings(config, name, protocol)
            try:
                context = build_server_context(settings)
            except TlsConfigError as exc:
                raise SecurityConfigError(f"listener {name}: {exc}") from None
            warning = certificate_validity_warning(settings)
        mechanisms: tuple[str, ...] = ()
        plain_users: dict[str, str] = {}
        if protocol.startswith("SASL_"):
            mechanisms, plain_users = _sasl(config, name)
        result[name] = ListenerSecurity(name, protocol, context, mechanisms, plain_users, warning)
    try:
        SslPrincipalMapper(str(config.get("ssl.principal.mapping.rules")))
    except ValueError as exc:
        raise SecurityConfigError(f"ssl.principal.mapping.rules: {exc}") from None
    return result
