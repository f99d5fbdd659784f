"""Fixtures of the security tests: certificates, and one secured broker for the package.

The shared broker listens on four listeners at once, each with its own port:

- ``PLAINTEXT`` (principal User:ANONYMOUS),
- ``SSL`` with ``ssl.client.auth=required`` (mutual TLS; the principal is the certificate DN),
- ``SASL_SSL`` and ``SASL_PLAINTEXT`` with PLAIN (JAAS users admin and alice) and SCRAM-SHA-256/512,

with the StandardAuthorizer on and ``super.users=User:admin;User:CN=client-admin,...``. Tests
that change ACLs or users use names of their own, so they can share it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.broker import BrokerProcess
from tests.support.secure_broker import LISTENERS, SecureBroker, broker_ports, secure_overrides
from tests.support.tls_material import Material, make_material


@pytest.fixture(scope="package")
def material(tmp_path_factory: pytest.TempPathFactory) -> Material:
    return make_material(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="package")
def secure_broker(tmp_path_factory: pytest.TempPathFactory, material: Material) -> Iterator[SecureBroker]:
    data = tmp_path_factory.mktemp("secure-broker")
    with BrokerProcess(data, secure_overrides(material)) as process:
        yield SecureBroker(process, broker_ports(process, LISTENERS), material)
