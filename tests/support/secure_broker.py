"""A secured Seaway broker for tests: SSL, SASL_SSL and SASL_PLAINTEXT listeners, ACLs on.

The broker listens on four listeners at once, each with its own port:

- ``PLAINTEXT`` (principal User:ANONYMOUS),
- ``SSL`` with ``ssl.client.auth=required`` (mutual TLS; the principal is the certificate DN),
- ``SASL_SSL`` and ``SASL_PLAINTEXT`` with PLAIN (JAAS users admin and alice) and SCRAM-SHA-256/512,

with the StandardAuthorizer on and ``super.users=User:admin;User:CN=client-admin,...``.
Certificates come from :mod:`tests.support.tls_material`. Used by the broker's security tests
(tests/broker/security, one broker per package) and by tests/security (the REST APIs and the
clients of the worker and the registry against it).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.broker import READY, BrokerProcess
from tests.support.tls_material import Material

__all__ = ["ADMIN_DN", "ADMIN_PASSWORD", "ALICE_PLAIN_PASSWORD", "LISTENERS", "PLAIN_JAAS", "SecureBroker",
           "broker_ports", "secure_overrides", "start_secure"]

ADMIN_PASSWORD = "admin-secret"
ALICE_PLAIN_PASSWORD = "alice-plain-secret"
ADMIN_DN = "CN=client-admin,OU=seaway-tests,O=Seaway,C=NL"
PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
              f'password="{ADMIN_PASSWORD}" user_admin="{ADMIN_PASSWORD}" user_alice="{ALICE_PLAIN_PASSWORD}";')


@dataclass
class SecureBroker:
    process: BrokerProcess
    ports: dict[str, int]
    material: Material

    def bootstrap(self, listener: str) -> str:
        return f"127.0.0.1:{self.ports[listener]}"

    def sasl_config(self, user: str, password: str, mechanism: str = "SCRAM-SHA-512", tls: bool = True,
                    **extra: Any) -> dict[str, Any]:
        """confluent-kafka settings for ``user`` over SASL_SSL (or SASL_PLAINTEXT)."""
        listener = "SASL_SSL" if tls else "SASL_PLAINTEXT"
        config: dict[str, Any] = {
            "bootstrap.servers": self.bootstrap(listener), "security.protocol": listener,
            "sasl.mechanism": mechanism, "sasl.username": user, "sasl.password": password,
        }
        if tls:
            config["ssl.ca.location"] = str(self.material.ca)
        config.update(extra)
        return config

    def admin_config(self, **extra: Any) -> dict[str, Any]:
        return self.sasl_config("admin", ADMIN_PASSWORD, "PLAIN", **extra)


def broker_ports(process: BrokerProcess, names: list[str]) -> dict[str, int]:
    """Each listener's bound port, from the ready line (endpoints in ``listeners`` order)."""
    line = [line for line in process.output if line.startswith(READY)][-1]  # the latest start
    endpoints = line[len(READY):].strip().split(",")
    return {name: int(ep.rsplit(":", 1)[1]) for name, ep in zip(names, endpoints, strict=True)}


def secure_overrides(material: Material, **extra: str) -> dict[str, str]:
    overrides = {
        "listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,SASL_SSL://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(material.server_pem),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(material.ca),
        "listener.name.ssl.ssl.client.auth": "required",
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
        "listener.name.sasl_ssl.plain.sasl.jaas.config": PLAIN_JAAS,
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
        "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config":
            "org.apache.kafka.common.security.scram.ScramLoginModule required;",
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": f"User:admin;User:{ADMIN_DN}",
        "connection.failed.authentication.delay.ms": "10",
        "group.initial.rebalance.delay.ms": "0",
    }
    overrides.update(extra)
    return overrides


LISTENERS = ["PLAINTEXT", "SSL", "SASL_SSL", "SASL_PLAINTEXT"]


def start_secure(data: Path, material: Material, **extra: str) -> SecureBroker:
    """A broker of the caller's own (stop it with ``.process.stop()``)."""
    process = BrokerProcess(data, secure_overrides(material, **extra)).start()
    return SecureBroker(process, broker_ports(process, LISTENERS), material)
