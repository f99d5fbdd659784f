"""Security configuration: Kafka's keys work, unimplemented ones stop the broker naming the
key, listeners without a host bind loopback only."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from seaway.broker.config import BrokerConfig, ConfigError

from tests.support.broker import BrokerProcess
from tests.support.secure_broker import PLAIN_JAAS
from tests.support.tls_material import Material

SASL = {"listeners": "SASL_SSL://127.0.0.1:0"}


def _tls(material: Material) -> dict[str, str]:
    return {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(material.server_pem)}


# key=value pairs Seaway's broker does not implement; each must stop it, naming the key
REFUSED = [
    ("ssl.engine.factory.class", "com.example.MyEngineFactory"),
    ("ssl.provider", "SunJSSE"),
    ("ssl.secure.random.implementation", "SHA1PRNG"),
    ("ssl.keymanager.algorithm", "PKIX"),
    ("ssl.trustmanager.algorithm", "SunX509"),
    ("security.providers", "com.example.Provider"),
    ("principal.builder.class", "com.example.MyPrincipalBuilder"),
    ("authorizer.class.name", "com.example.MyAuthorizer"),
    ("sasl.enabled.mechanisms", "GSSAPI"),
    ("sasl.enabled.mechanisms", "PLAIN,OAUTHBEARER"),
    ("sasl.kerberos.service.name", "kafka"),
    ("sasl.kerberos.principal.to.local.rules", "RULE:[1:$1]"),
    ("sasl.oauthbearer.jwks.endpoint.url", "https://idp/jwks"),
    ("sasl.login.callback.handler.class", "com.example.Login"),
    ("sasl.server.callback.handler.class", "com.example.Callback"),
    ("sasl.jaas.config", PLAIN_JAAS),
    ("sasl.mechanism", "GSSAPI"),
    ("listener.name.sasl_ssl.gssapi.sasl.jaas.config", "com.sun.security.auth.module.Krb5LoginModule required;"),
    ("listener.name.sasl_ssl.oauthbearer.sasl.jaas.config", "x required;"),
    ("listener.name.sasl_ssl.plain.sasl.server.callback.handler.class", "com.example.Callback"),
    ("listener.name.sasl_ssl.ssl.engine.factory.class", "com.example.MyEngineFactory"),
    ("connections.max.reauth.ms", "3600000"),
    ("listener.name.sasl_ssl.scram-sha-512.connections.max.reauth.ms", "60000"),
    ("delegation.token.secret.key", "s3cret"),
    ("delegation.token.master.key", "s3cret"),
    ("delegation.token.max.lifetime.ms", "100"),
    ("password.encoder.secret", "s3cret"),
    ("ssl.keystore.passwrod", "typo"),
    ("sasl.enbaled.mechanisms", "PLAIN"),
]


@pytest.mark.parametrize(("key", "value"), REFUSED)
def test_unimplemented_security_key_refuses_to_start(key: str, value: str, material: Material) -> None:
    props = {**SASL, **_tls(material), "sasl.enabled.mechanisms": "PLAIN",
             "listener.name.sasl_ssl.plain.sasl.jaas.config": PLAIN_JAAS, key: value}
    with pytest.raises(ConfigError) as info:
        BrokerConfig(props)
    assert key in str(info.value)


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("key", "value"), [
    ("ssl.engine.factory.class", "com.example.MyEngineFactory"),
    ("sasl.enabled.mechanisms", "GSSAPI"),
    ("delegation.token.secret.key", "s3cret"),
    ("principal.builder.class", "com.example.MyPrincipalBuilder"),
])
def test_the_process_exits_naming_the_key(key: str, value: str, tmp_path: Path, material: Material) -> None:
    """The same refusal from ``seaway broker``: exit status 2, one line naming the key, nothing bound."""
    args = [sys.executable, "-m", "seaway.broker", "--override", f"log.dirs={tmp_path}"]
    props = {**SASL, **_tls(material), "listener.name.sasl_ssl.plain.sasl.jaas.config": PLAIN_JAAS, key: value}
    if key != "sasl.enabled.mechanisms":
        props["sasl.enabled.mechanisms"] = "PLAIN"
    for k, v in props.items():
        args += ["--override", f"{k}={v}"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=50)
    assert done.returncode == 2, done.stderr
    assert key in done.stderr and "refuses to start" in done.stderr
    assert "ready on" not in done.stdout


def test_sasl_listener_with_kafkas_default_mechanism_is_refused(material: Material) -> None:
    with pytest.raises(ConfigError, match=r"sasl\.enabled\.mechanisms=GSSAPI \(Kafka's default\)"):
        BrokerConfig({**SASL, **_tls(material)})


def test_plain_needs_jaas_users(material: Material) -> None:
    with pytest.raises(ConfigError, match=r"listener\.name\.sasl_ssl\.plain\.sasl\.jaas\.config must be set"):
        BrokerConfig({**SASL, **_tls(material), "sasl.enabled.mechanisms": "PLAIN"})
    with pytest.raises(ConfigError, match="no user_"):
        BrokerConfig({**SASL, **_tls(material), "sasl.enabled.mechanisms": "PLAIN",
                      "listener.name.sasl_ssl.plain.sasl.jaas.config":
                          "org.apache.kafka.common.security.plain.PlainLoginModule required;"})
    with pytest.raises(ConfigError, match="ScramLoginModule"):
        BrokerConfig({**SASL, **_tls(material), "sasl.enabled.mechanisms": "SCRAM-SHA-256",
                      "listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config": PLAIN_JAAS})


def test_tls_listener_key_material_errors_name_the_key(material: Material, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"ssl\.keystore\.location"):
        BrokerConfig({"listeners": "SSL://127.0.0.1:0"})
    with pytest.raises(ConfigError, match=r"ssl\.keystore\.location=/nonexistent"):
        BrokerConfig({"listeners": "SSL://127.0.0.1:0", "ssl.keystore.type": "PKCS12",
                      "ssl.keystore.location": "/nonexistent"})
    with pytest.raises(ConfigError, match=r"ssl\.keystore\.password"):
        BrokerConfig({"listeners": "SSL://127.0.0.1:0", "ssl.keystore.type": "PKCS12",
                      "ssl.keystore.location": str(material.server_p12), "ssl.keystore.password": "wrong"})
    jks = tmp_path / "broker.jks"
    jks.write_bytes(b"\xfe\xed\xfe\xed" + b"\x00" * 64)
    with pytest.raises(ConfigError, match="keytool -importkeystore"):
        BrokerConfig({"listeners": "SSL://127.0.0.1:0", "ssl.keystore.location": str(jks),
                      "ssl.keystore.password": "x"})
    with pytest.raises(ConfigError, match=r"ssl\.enabled\.protocols"):
        BrokerConfig({"listeners": "SSL://127.0.0.1:0", **_tls(material), "ssl.enabled.protocols": "TLSv1.1"})
    with pytest.raises(ConfigError, match=r"ssl\.cipher\.suites"):
        BrokerConfig({"listeners": "SSL://127.0.0.1:0", **_tls(material), "ssl.cipher.suites": "TLS_FOO"})
    with pytest.raises(ConfigError, match=r"listener\.name\.ssl\.ssl\.client\.auth"):
        BrokerConfig({"listeners": "SSL://127.0.0.1:0", **_tls(material),
                      "listener.name.ssl.ssl.client.auth": "sometimes"})


def test_every_key_material_form_loads(material: Material) -> None:
    """PEM file, PEM text (with listener prefixes), PKCS12 (also behind Kafka's default type JKS)."""
    base = {"listeners": "SSL://127.0.0.1:0,OTHER://127.0.0.1:0",
            "listener.security.protocol.map": "SSL:SSL,OTHER:SSL"}
    configs = [
        {**base, **_tls(material)},
        {**base, "ssl.keystore.type": "PKCS12", "ssl.keystore.location": str(material.server_p12),
         "ssl.keystore.password": material.store_password},
        {**base, "ssl.keystore.location": str(material.server_p12), "ssl.keystore.password": material.store_password},
        {**base, **_tls(material), "listener.name.other.ssl.keystore.type": "PEM",
         "listener.name.other.ssl.keystore.location": "",
         "listener.name.other.ssl.keystore.certificate.chain": material.server_chain_text,
         "listener.name.other.ssl.keystore.key": material.server_key_text,
         "listener.name.other.ssl.client.auth": "required",
         "listener.name.other.ssl.truststore.type": "PEM",
         "listener.name.other.ssl.truststore.certificates": material.ca.read_text()},
    ]
    for props in configs:
        config = BrokerConfig(props)
        assert all(s.ssl_context is not None for s in config.listener_security.values())
    context = BrokerConfig(configs[-1]).listener_security["OTHER"].ssl_context
    assert context is not None and context.verify_mode.name == "CERT_REQUIRED"


def test_passwords_are_sensitive_in_describe_configs() -> None:
    defs = BrokerConfig.definitions()
    for key in ("ssl.keystore.password", "ssl.key.password", "ssl.truststore.password", "ssl.keystore.key"):
        assert defs[key].is_sensitive, key


def test_inter_broker_and_control_plane_listener_names_must_exist() -> None:
    with pytest.raises(ConfigError, match=r"^Listener with name INTERNAL defined in inter\.broker\.listener\.name "
                                          r"not found in listener\.security\.protocol\.map\.$"):
        BrokerConfig({"inter.broker.listener.name": "INTERNAL"})
    with pytest.raises(ConfigError, match="Only one of"):
        BrokerConfig({"inter.broker.listener.name": "PLAINTEXT", "security.inter.broker.protocol": "PLAINTEXT"})
    assert BrokerConfig({"inter.broker.listener.name": "plaintext"}).listeners


def _listening_addresses(port: int) -> set[str]:
    """Local addresses of listening TCP sockets on ``port`` (from /proc/net/tcp and tcp6)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            address, port_hex = fields[1].rsplit(":", 1)
            if int(port_hex, 16) == port and fields[3] == "0A":  # 0A: LISTEN
                found.add(address)
    return found


@pytest.mark.timeout(60)
def test_a_listener_without_host_binds_loopback_only(tmp_path: Path) -> None:
    with BrokerProcess(tmp_path, {"listeners": "PLAINTEXT://:0"}) as broker:
        assert broker.bootstrap.startswith("127.0.0.1:")
        assert _listening_addresses(broker.port) == {"0100007F"}  # 127.0.0.1, nothing else
