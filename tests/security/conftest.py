"""One secured broker for tests/security: SASL_SSL with SCRAM-SHA-512 users for the worker and
the registry, each allowed (by ACLs, the StandardAuthorizer being on) what its clients need.

- ``connect`` / ``CONNECT_PASSWORD``: ALL on every topic and group, and on the cluster
  (creating the internal topics);
- ``registry`` / ``REGISTRY_PASSWORD``: ALL on topics and groups (``_schemas`` and its
  leader-election group), and on the cluster.

Certificates come from :mod:`tests.support.tls_material` (the broker's also serve the HTTPS
listeners: SAN 127.0.0.1 and localhost).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

# confluent-kafka re-exports these without __all__; mypy's strict mode cannot tell.
from confluent_kafka.admin import (  # type: ignore[attr-defined]  # re-exported without __all__
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)

from tests.support.secure_broker import SecureBroker, start_secure
from tests.support.tls_material import Material, make_material

CONNECT_PASSWORD = "connect-scram-secret"
REGISTRY_PASSWORD = "registry-scram-secret"
SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"


@dataclass
class Secured:
    broker: SecureBroker
    material: Material
    directory: Path

    @property
    def bootstrap(self) -> str:
        return self.broker.bootstrap("SASL_SSL")

    def java_client(self, user: str, password: str) -> dict[str, str]:
        """A Java client's settings for ``user`` (Kafka's names, as users write them)."""
        return {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
                "sasl.jaas.config": f'{SCRAM_MODULE} required username="{user}" password="{password}";',
                "ssl.truststore.type": "PEM", "ssl.truststore.location": str(self.material.ca)}

    def librdkafka(self, user: str, password: str, **extra: Any) -> dict[str, Any]:
        return self.broker.sasl_config(user, password, "SCRAM-SHA-512", **extra)


def _grant(admin: AdminClient, user: str, password: str) -> None:
    upsert = UserScramCredentialUpsertion(user, ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192),
                                          password.encode())
    for future in admin.alter_user_scram_credentials([upsert]).values():
        future.result(15)
    acls = [AclBinding(kind, name, ResourcePatternType.LITERAL, f"User:{user}", "*", AclOperation.ALL,
                       AclPermissionType.ALLOW)
            for kind, name in ((ResourceType.TOPIC, "*"), (ResourceType.GROUP, "*"),
                               (ResourceType.BROKER, "kafka-cluster"))]
    for future in admin.create_acls(acls).values():
        future.result(15)


@pytest.fixture(scope="package")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Secured]:
    directory = tmp_path_factory.mktemp("secured")
    material = make_material(directory / "tls")
    broker = start_secure(directory / "broker", material, **{
        "group.min.session.timeout.ms": "1000", "group.initial.rebalance.delay.ms": "0"})
    try:
        admin = AdminClient(broker.admin_config())
        _grant(admin, "connect", CONNECT_PASSWORD)
        _grant(admin, "registry", REGISTRY_PASSWORD)
        yield Secured(broker, material, directory)
    finally:
        broker.process.stop()
