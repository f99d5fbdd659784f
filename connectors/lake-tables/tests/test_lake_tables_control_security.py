"""The control topic's clients take Java client security settings by the rules every Seaway client follows."""

from __future__ import annotations

from pathlib import Path

import pytest
from seaway.connect.api import ConnectError
from seaway.connectors.lake_tables.control import client_settings

JAAS = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="s3cret";'


def test_sasl_jaas_config_becomes_librdkafkas_username_and_password(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n")
    out = client_settings({"bootstrap.servers": "b:9093", "security.protocol": "SASL_SSL",
                           "sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": JAAS,
                           "ssl.truststore.location": str(ca), "ssl.truststore.type": "PEM"})
    assert out["bootstrap.servers"] == "b:9093"
    assert (out["sasl.username"], out["sasl.password"]) == ("alice", "s3cret")
    assert out["sasl.mechanism"] == "SCRAM-SHA-512" and out["ssl.ca.location"] == str(ca)
    assert "sasl.jaas.config" not in out and "ssl.truststore.location" not in out


def test_an_unsupported_setting_is_refused_naming_the_key() -> None:
    with pytest.raises(ConnectError, match=r"iceberg\.kafka\.sasl\.mechanism=GSSAPI: .* not supported"):
        client_settings({"bootstrap.servers": "b:9093", "security.protocol": "SASL_PLAINTEXT",
                         "sasl.mechanism": "GSSAPI",
                         "sasl.jaas.config": "com.sun.security.auth.module.Krb5LoginModule required;"})
