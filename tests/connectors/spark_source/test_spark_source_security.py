"""``kafka.*`` security settings in Java's names, as spark-sql-kafka jobs carry them, against a secured broker.

One broker with SASL_SSL (PLAIN) and SSL (mutual TLS) listeners and ACLs on (tests/support/secure_broker):
the reads and writes authenticate with ``kafka.sasl.jaas.config`` and a PEM truststore, or with a
client certificate given as ``kafka.ssl.keystore.certificate.chain`` / ``kafka.ssl.keystore.key``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.secure_broker import ADMIN_PASSWORD, SecureBroker, start_secure
from tests.support.tls_material import Material, make_material


@pytest.fixture(scope="module")
def secure(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureBroker]:
    material = make_material(tmp_path_factory.mktemp("tls"))
    broker = start_secure(tmp_path_factory.mktemp("secure-broker"), material)
    try:
        yield broker
    finally:
        broker.process.stop()


def sasl(secure: SecureBroker, password: str = ADMIN_PASSWORD) -> dict[str, str]:
    return {"kafka.bootstrap.servers": secure.bootstrap("SASL_SSL"), "kafka.security.protocol": "SASL_SSL",
            "kafka.sasl.mechanism": "PLAIN",
            "kafka.sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required '
                                      f'username="admin" password="{password}";',
            "kafka.ssl.truststore.type": "PEM", "kafka.ssl.truststore.location": str(secure.material.ca)}


def mutual_tls(material: Material, secure: SecureBroker) -> dict[str, str]:
    return {"kafka.bootstrap.servers": secure.bootstrap("SSL"), "kafka.security.protocol": "SSL",
            "kafka.ssl.keystore.type": "PEM",
            "kafka.ssl.keystore.certificate.chain": material.admin_cert.read_text(),
            "kafka.ssl.keystore.key": material.admin_key.read_text(),
            "kafka.ssl.truststore.type": "PEM", "kafka.ssl.truststore.location": str(material.ca)}


@pytest.mark.timeout(240)
def test_java_security_settings_read_and_write(spark: Any, secure: SecureBroker) -> None:
    topic = "secured-topic"
    rows = spark.createDataFrame([(f"k{i}", f"v{i}") for i in range(200)], "key string, value string")
    rows.write.format("seaway").mode("append").options(**sasl(secure)).option("topic", topic).save()
    read = spark.read.format("seaway").options(**sasl(secure)).option("subscribe", topic).load()
    assert sorted(r["v"] for r in read.selectExpr("CAST(value AS STRING) AS v").collect()) == sorted(
        f"v{i}" for i in range(200))
    over_tls = spark.read.format("seaway").options(**mutual_tls(secure.material, secure)).option("subscribe", topic)
    assert over_tls.load().count() == 200
    with pytest.raises(Exception, match=r"Listing the cluster's topics failed: _AUTHENTICATION .*Invalid username or "
                                        r"password.*check the kafka\.\* security settings"):
        spark.read.format("seaway").options(**sasl(secure, "wrong")).option("subscribe", topic).option(
            "fetchOffset.numRetries", "1").load().count()
