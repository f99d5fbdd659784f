"""Client security settings (Java's names -> librdkafka's), JAAS files, users files, the worker's
and the REST API's security keys: what is translated, and what is refused naming the key."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest
from seaway.connect.api import ConfigError
from seaway.connect.rest.security import rest_security
from seaway.connect.runtime.distributed.config import DistributedConfig
from seaway.connect.runtime.worker_security import BASIC_AUTH_EXTENSION, rest_tls_settings
from seaway.protocol.client_security import protocol_security
from seaway.schema_registry.client_security import registry_client_security
from seaway.schema_registry.security import registry_security
from seaway.schema_registry.settings import RegistrySettings, SettingsError
from seaway.security.basic_auth import AuthConfigError, connect_users, deobfuscate, jaas_file_from_opts, jetty_users
from seaway.security.jaas import parse_jaas_file
from seaway.security.kafka_client import ClientConfigError, librdkafka_config

from tests.support.tls_material import Material, make_material

SCRAM_JAAS = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="connect" password="pw";'
WORKER = {"bootstrap.servers": "127.0.0.1:9", "group.id": "g", "config.storage.topic": "c",
          "offset.storage.topic": "o", "status.storage.topic": "s", "key.converter": "StringConverter",
          "value.converter": "StringConverter"}


@pytest.fixture(scope="module")
def material(tmp_path_factory: pytest.TempPathFactory) -> Material:
    return make_material(tmp_path_factory.mktemp("tls"))


def test_java_client_settings_become_librdkafka_settings(material: Material) -> None:
    pem = librdkafka_config({
        "bootstrap.servers": "b:9093", "linger.ms": "5", "security.protocol": "sasl_ssl",
        "sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": SCRAM_JAAS,
        "ssl.truststore.type": "PEM", "ssl.truststore.location": str(material.ca)})
    assert pem == {"bootstrap.servers": "b:9093", "linger.ms": "5", "security.protocol": "SASL_SSL",
                   "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "connect", "sasl.password": "pw",
                   "ssl.endpoint.identification.algorithm": "https", "ssl.ca.location": str(material.ca)}
    p12 = librdkafka_config({
        "security.protocol": "SSL", "ssl.truststore.location": str(material.server_p12),  # type JKS: a PKCS12 file
        "ssl.truststore.password": material.store_password, "ssl.keystore.type": "PKCS12",
        "ssl.keystore.location": str(material.server_p12), "ssl.keystore.password": material.store_password,
        "ssl.endpoint.identification.algorithm": ""})
    assert "BEGIN CERTIFICATE" in p12["ssl.ca.pem"]
    assert p12["ssl.keystore.location"] == str(material.server_p12)
    assert p12["ssl.endpoint.identification.algorithm"] == "none"
    text = librdkafka_config({"security.protocol": "SSL", "ssl.keystore.type": "PEM",
                              "ssl.keystore.certificate.chain": material.server_chain_text,
                              "ssl.keystore.key": material.server_key_text,
                              "ssl.cipher.suites": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"})
    assert text["ssl.certificate.pem"] == material.server_chain_text
    assert text["ssl.cipher.suites"] == "ECDHE-ECDSA-AES128-GCM-SHA256"
    # librdkafka's own names pass as they are
    native = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": "PLAIN", "sasl.username": "u",
              "sasl.password": "p"}
    assert librdkafka_config(native)["sasl.username"] == "u"


@pytest.mark.parametrize(("props", "named"), [
    ({"security.protocol": "SASL_SSL", "sasl.jaas.config": SCRAM_JAAS}, "producer.sasl.mechanism=GSSAPI"),
    ({"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER"}, "producer.sasl.mechanism=OAUTHBEARER"),
    ({"sasl.mechanism": "GSSAPI"}, "producer.sasl.mechanism=GSSAPI"),
    ({"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
      "sasl.jaas.config": "com.sun.security.auth.module.Krb5LoginModule required;"}, "producer.sasl.jaas.config"),
    ({"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN"}, "producer.sasl.jaas.config"),
    ({"sasl.kerberos.service.name": "kafka"}, "producer.sasl.kerberos.service.name"),
    ({"sasl.oauthbearer.token.endpoint.url": "https://x"}, "producer.sasl.oauthbearer.token.endpoint.url"),
    ({"sasl.login.callback.handler.class": "a.B"}, "producer.sasl.login.callback.handler.class"),
    ({"sasl.client.callback.handler.class": "a.B"}, "producer.sasl.client.callback.handler.class"),
    ({"ssl.engine.factory.class": "a.B"}, "producer.ssl.engine.factory.class"),
    ({"ssl.provider": "SunJSSE"}, "producer.ssl.provider"),
    ({"security.providers": "a.B"}, "producer.security.providers"),
    ({"ssl.keymanager.algorithm": "PKIX"}, "producer.ssl.keymanager.algorithm=PKIX"),
    ({"security.protocol": "SSL", "ssl.enabled.protocols": "TLSv1.1,TLSv1.2"}, "producer.ssl.enabled.protocols"),
    ({"ssl.trustore.location": "/x"}, "producer.ssl.trustore.location"),  # a typo
    ({"security.protocol": "SSL_PLAINTEXT"}, "producer.security.protocol=SSL_PLAINTEXT"),
])
def test_unsupported_client_settings_are_refused_naming_the_key(props: dict[str, str], named: str) -> None:
    with pytest.raises(ClientConfigError) as failure:
        librdkafka_config(props, "producer.")
    assert str(failure.value).startswith(named)


def test_a_java_keystore_file_is_refused_with_the_command_that_converts_it(tmp_path: Path) -> None:
    jks = tmp_path / "truststore.jks"
    jks.write_bytes(b"\xfe\xed\xfe\xed" + b"\0" * 60)
    with pytest.raises(ClientConfigError, match="keytool -importkeystore"):
        librdkafka_config({"security.protocol": "SSL", "ssl.truststore.location": str(jks)})


def test_the_protocol_client_gets_the_same_settings(material: Material) -> None:
    security = protocol_security({"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
                                  "sasl.jaas.config": SCRAM_JAAS, "ssl.ca.location": str(material.ca)})
    assert (security.protocol, security.sasl_mechanism, security.username, security.password) == (
        "SASL_SSL", "SCRAM-SHA-512", "connect", "pw")
    assert security.ssl_context is not None and security.ssl_context.check_hostname
    assert "pw" not in repr(security)
    with pytest.raises(ClientConfigError, match=r"ssl\.crl\.location"):
        protocol_security({"security.protocol": "SSL", "ssl.crl.location": "/x"})


def test_jaas_files_connect_and_jetty_users(tmp_path: Path) -> None:
    users = tmp_path / "connect.password"
    users.write_text("alice: alice-pw\nbob=bob-pw\n")
    jaas = tmp_path / "jaas.conf"
    jaas.write_text(f"""// Connect's basic auth
KafkaConnect {{
  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required
  file="{users}";
}};
SchemaRegistry-Props {{ org.eclipse.jetty.jaas.spi.PropertyFileLoginModule required file="{tmp_path / 'jetty'}"
  debug="false"; }};
""")
    assert set(parse_jaas_file(jaas.read_text())) == {"KafkaConnect", "SchemaRegistry-Props"}
    connect = connect_users(str(jaas), "java.security.auth.login.config")
    assert connect.authenticate("alice", "alice-pw") and connect.authenticate("bob", "bob-pw")
    assert connect.authenticate("alice", "bob-pw") is None and connect.authenticate("carol", "x") is None
    # Jetty's credential forms, made with Jetty 12's Password tool: java -cp jetty-util.jar
    # org.eclipse.jetty.util.security.Password bob 's3cret-Ünï'
    (tmp_path / "jetty").write_text(
        "alice: plain-pw,admin,developer\n"
        "bob: MD5:Ea0b92D490E0345339Bb2eCa6eE3675c,user\n"
        "carol: OBF:U0munU0a831ugkU0mn0U0k3n1l1i1kxkU12lhU0uwi1uh6U12k3U0ynn\n", encoding="utf-8")
    jetty = jetty_users(str(jaas), "SchemaRegistry-Props", "authentication.realm")
    alice = jetty.authenticate("alice", "plain-pw")
    assert alice is not None and alice.roles == {"admin", "developer"}
    bob = jetty.authenticate("bob", "s3cret-Ünï")
    assert bob is not None and bob.roles == {"user"}
    assert jetty.authenticate("carol", "s3cret-Ünï") is not None
    assert jetty.authenticate("bob", "s3cret-Uni") is None
    assert deobfuscate("OBF:1v2j1uum1xtv1zej1zer1xtn1uvk1v1v") == "password"
    assert jaas_file_from_opts(f"-Xmx1g -Djava.security.auth.login.config={jaas} -Dx=y") == str(jaas)


@pytest.mark.parametrize(("content", "users", "message"), [
    ("KafkaConnect { org.x.Other required file=\"{users}\"; };", "a=b", "exactly one"),
    ("Other { org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required; };", "a=b",
     "no KafkaConnect"),
    ("KafkaConnect { org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required; };",
     "a=b", "needs file="),
    ("KafkaConnect { org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required "
     "file=\"{users}\"; };", "", "holds no user"),
    ("KafkaConnect { oops", "a=b", "java.security.auth.login.config"),
])
def test_bad_connect_auth_setups_are_refused(tmp_path: Path, content: str, users: str, message: str) -> None:
    path = tmp_path / "users"
    path.write_text(users)
    jaas = tmp_path / "jaas.conf"
    jaas.write_text(content.replace("{users}", str(path)))
    with pytest.raises(AuthConfigError, match=message):
        connect_users(str(jaas), "java.security.auth.login.config")


@pytest.mark.parametrize(("extra", "key"), [
    ({"rest.extension.classes": "io.confluent.connect.security.ConnectSecurityExtension"}, "rest.extension.classes"),
    ({"access.control.allow.origin": "*"}, "access.control.allow.origin"),
    ({"response.http.headers.config": "add X-Frame-Options: DENY"}, "response.http.headers.config"),
    ({"security.protocol": "SASL_SSL", "sasl.mechanism": "GSSAPI", "sasl.jaas.config": SCRAM_JAAS},
     "sasl.mechanism"),
    ({"consumer.sasl.oauthbearer.token.endpoint.url": "https://x"}, "consumer.sasl.oauthbearer.token.endpoint.url"),
    ({"admin.ssl.engine.factory.class": "a.B"}, "admin.ssl.engine.factory.class"),
    ({"producer.sasl.login.class": "a.B"}, "producer.sasl.login.class"),
    ({"rest.advertised.listener": "ftp"}, "rest.advertised.listener"),
])
def test_the_worker_refuses_security_keys_it_does_not_implement(extra: dict[str, str], key: str) -> None:
    with pytest.raises(ConfigError) as failure:
        DistributedConfig({**WORKER, **extra})
    assert failure.value.name == key and key in str(failure.value)


@pytest.mark.parametrize("protocol", ["eager", "compatible"])
def test_basic_auth_needs_the_signed_protocol(tmp_path: Path, protocol: str) -> None:
    """The internal endpoints skip basic auth; only ``sessioned`` signs them, so anything else is refused."""
    users = tmp_path / "users"
    users.write_text("alice: pw\n")
    jaas = tmp_path / "jaas.conf"
    jaas.write_text("KafkaConnect { org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule "
                    f'required file="{users}"; }};')
    auth = {"rest.extension.classes": BASIC_AUTH_EXTENSION, "java.security.auth.login.config": str(jaas)}
    with pytest.raises(ConfigError) as failure:
        rest_security(DistributedConfig({**WORKER, **auth, "connect.protocol": protocol}), {})
    assert failure.value.name == "connect.protocol" and "sessioned" in str(failure.value)
    secured = rest_security(DistributedConfig({**WORKER, **auth, "connect.protocol": "sessioned"}), {})
    assert secured.users is not None and secured.users.authenticate("alice", "pw") is not None


def test_worker_secrets_come_through_config_providers_and_clients_follow_kafkas_rules(tmp_path: Path) -> None:
    secrets = tmp_path / "secrets.properties"
    secrets.write_text("password=from-the-file\n")
    jaas = SCRAM_JAAS.replace('password="pw"', f'password="${{file:{secrets}:password}}"')
    config = DistributedConfig({
        **WORKER, "config.providers": "file", "config.providers.file.class": "FileConfigProvider",
        "config.providers.file.param.allowed.paths": str(tmp_path),
        "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": jaas,
        "producer.linger.ms": "7", "admin.listeners": "http://127.0.0.1:9", "admin.retries": "3",
        "listeners": "https://:8443"})
    assert config.security_client_config()["sasl.password"] == "from-the-file"
    admin = config.admin_client_config()  # top-level security, then admin.* (not admin.listeners)
    assert admin["sasl.username"] == "connect" and admin["retries"] == "3" and "listeners" not in admin
    assert config.client_props("producer.", security=False) == {"linger.ms": "7"}
    assert config.rest.advertised() == ("https", "127.0.0.1", 8443)  # no host: loopback, as it binds


def test_rest_tls_settings_are_all_or_nothing(material: Material) -> None:
    top = {"ssl.keystore.type": "PKCS12", "ssl.keystore.location": str(material.server_p12),
           "ssl.keystore.password": material.store_password}
    assert rest_tls_settings(top).keystore_location == str(material.server_p12)
    prefixed = {**top, "listeners.https.ssl.keystore.type": "PEM",
                "listeners.https.ssl.keystore.location": str(material.server_pem),
                "listeners.https.ssl.client.authentication": "REQUIRED"}
    settings = rest_tls_settings(prefixed)
    assert (settings.keystore_type, settings.keystore_location, settings.client_auth, settings.keystore_password) == (
        "PEM", str(material.server_pem), "required", None)  # nothing taken from the unprefixed keys
    assert rest_tls_settings(prefixed, admin=True).keystore_type == "PKCS12"
    with pytest.raises(ConfigError, match=r"listeners\.https\.ssl\.keystore\.locaton"):
        rest_tls_settings({"listeners.https.ssl.keystore.locaton": "x"})
    with pytest.raises(ConfigError, match=r"admin\.listeners\.https\.ssl\.provider"):
        rest_tls_settings({"admin.listeners.https.ssl.provider": "x"}, admin=True)


def test_registry_client_settings(material: Material) -> None:
    info = registry_client_security("https://127.0.0.1:8081", {
        "basic.auth.credentials.source": "USER_INFO", "basic.auth.user.info": "alice:a:b",
        "schema.registry.ssl.truststore.type": "PEM", "schema.registry.ssl.truststore.location": str(material.ca)})
    assert info.auth == ("alice", "a:b") and isinstance(info.verify, ssl.SSLContext)
    url = registry_client_security("https://bob:p%40ss@registry:8081/", {})
    assert (url.url, url.auth) == ("https://registry:8081/", ("bob", "p@ss"))
    for props, key in [({"bearer.auth.token": "t"}, "bearer.auth.token"),
                       ({"schema.registry.ssl.trustore.location": "x"}, "schema.registry.ssl.trustore.location"),
                       ({"basic.auth.credentials.source": "USER_INFO"}, "basic.auth.user.info")]:
        with pytest.raises(ConfigError) as failure:
            registry_client_security("https://r:1", props)
        assert failure.value.name == key


@pytest.mark.parametrize(("props", "named"), [
    ({"authentication.method": "BEARER"}, "authentication.method=BEARER"),
    ({"schema.registry.resource.extension.class": "a.B"}, "schema.registry.resource.extension.class"),
    ({"resource.extension.class": "a.B"}, "resource.extension.class"),
    ({"rest.servlet.initializor.classes": "a.B"}, "rest.servlet.initializor.classes"),
    ({"confluent.schema.registry.authorizer.class": "a.B"}, "confluent.schema.registry.authorizer.class"),
    ({"access.control.allow.origin": "*"}, "access.control.allow.origin"),
    ({"ssl.provider": "SunJSSE"}, "ssl.provider"),
    ({"ssl.keystore.reload": "true"}, "ssl.keystore.reload"),
    ({"ssl.keystore.locaton": "/x"}, "ssl.keystore.locaton"),
])
def test_the_registry_refuses_settings_it_does_not_implement(props: dict[str, str], named: str,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SettingsError) as failure:
        RegistrySettings.from_properties(props)
    assert str(failure.value).startswith(named)
    key, value = next(iter(props.items()))  # the container image's environment variables likewise
    monkeypatch.setenv("SCHEMA_REGISTRY_" + key.upper().replace(".", "_"), value)
    with pytest.raises(SettingsError, match="from the environment"):
        RegistrySettings()


@pytest.mark.parametrize(("props", "named"), [
    ({"kafkastore.security.protocol": "SASL_SSL", "kafkastore.sasl.mechanism": "OAUTHBEARER"},
     "kafkastore.sasl.mechanism=OAUTHBEARER"),
    ({"kafkastore.sasl.login.callback.handler.class": "a.B"}, "kafkastore.sasl.login.callback.handler.class"),
    ({"kafkastore.ssl.engine.factory.class": "a.B"}, "kafkastore.ssl.engine.factory.class"),
    ({"authentication.method": "BASIC"}, "authentication.realm"),
    ({"authentication.method": "BASIC", "authentication.realm": "SR"}, "authentication.method=BASIC needs a JAAS"),
    ({"listeners": "https://127.0.0.1:0"}, "ssl.keystore.location"),
])
def test_registry_security_is_checked_at_start(props: dict[str, str], named: str) -> None:
    with pytest.raises(SettingsError) as failure:
        registry_security(RegistrySettings.from_properties(props), {})
    assert named in str(failure.value)


def test_registry_kafkastore_settings_reach_its_clients(material: Material, tmp_path: Path) -> None:
    settings = RegistrySettings.from_properties({
        "kafkastore.security.protocol": "SASL_SSL", "kafkastore.sasl.mechanism": "SCRAM-SHA-512",
        "kafkastore.sasl.jaas.config": SCRAM_JAAS, "kafkastore.ssl.truststore.type": "PEM",
        "kafkastore.ssl.truststore.location": str(material.ca), "kafkastore.topic": "_s"})
    security = registry_security(settings, {})
    assert security.kafka_client["sasl.username"] == "connect"
    assert security.protocol.protocol == "SASL_SSL" and security.protocol.ssl_context is not None
    assert "pw" not in repr(settings) and settings.kafkastore_topic == "_s"


def test_seaway_up_passes_client_security_settings_on(tmp_path: Path, material: Material) -> None:
    """``--client-config``: the registry gets them as kafkastore.*, the worker top-level and for its tasks;
    an https registry/worker is checked over https."""
    from seaway.cli.up import _parser, plan
    from seaway.properties import load_properties_file

    client = tmp_path / "client.properties"
    client.write_text("security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n"
                      f"sasl.jaas.config={SCRAM_JAAS}\nssl.truststore.type=PEM\n"
                      f"ssl.truststore.location={material.ca}\nlinger.ms=5\n")
    (tmp_path / "registry.properties").write_text("listeners=https://127.0.0.1:18081\n")
    args = _parser().parse_args(["--data-dir", str(tmp_path / "data"), "--client-config", str(client),
                                 "--ca-file", str(material.ca), "--registry-config",
                                 str(tmp_path / "registry.properties")])
    parts = {part.name: part for part in plan(args)}
    run = tmp_path / "data" / "run"
    registry = load_properties_file(run / "registry.properties")
    worker = load_properties_file(run / "worker.properties")
    assert registry["kafkastore.sasl.jaas.config"] == SCRAM_JAAS
    assert registry["kafkastore.security.protocol"] == "SASL_SSL" and "kafkastore.linger.ms" not in registry
    for prefix in ("", "producer.", "consumer."):
        assert worker[prefix + "sasl.mechanism"] == "SCRAM-SHA-512"
        assert worker[prefix + "ssl.truststore.location"] == str(material.ca)
    assert parts["registry"].address == "https://127.0.0.1:18081"
    assert worker["value.converter.schema.registry.url"] == "https://127.0.0.1:18081"
    assert worker["value.converter.schema.registry.ssl.truststore.location"] == str(material.ca)
