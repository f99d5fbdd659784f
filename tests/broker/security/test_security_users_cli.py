"""``seaway users`` against the SASL_SSL broker, as an operator runs it (a subprocess each time)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from confluent_kafka import Producer

from tests.support.secure_broker import ADMIN_PASSWORD, ALICE_PLAIN_PASSWORD, SecureBroker

pytestmark = pytest.mark.timeout(120)


def _properties(path: Path, broker: SecureBroker, user: str, password: str) -> Path:
    path.write_text("security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n"
                    f"sasl.username={user}\nsasl.password={password}\nssl.ca.location={broker.material.ca}\n")
    return path


def _users(broker: SecureBroker, config: Path, *args: str,
           stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "seaway.cli.main", "users", "--bootstrap-server",
                           broker.bootstrap("SASL_SSL"), "--command-config", str(config), *args],
                          input=stdin, capture_output=True, text=True, timeout=60)


def test_users_add_list_describe_delete(secure_broker: SecureBroker, tmp_path: Path) -> None:
    admin = _properties(tmp_path / "admin.properties", secure_broker, "admin", ADMIN_PASSWORD)
    added = _users(secure_broker, admin, "add", "erin", "--mechanism", "SCRAM-SHA-256", "--mechanism",
                   "SCRAM-SHA-512", "--iterations", "4096", "--password-stdin", stdin="erin-secret\n")
    assert added.returncode == 0, added.stderr
    assert "Set SCRAM-SHA-512 credentials of user erin" in added.stdout
    listed = _users(secure_broker, admin, "list", "--json")
    assert listed.returncode == 0 and "erin" in json.loads(listed.stdout)
    described = _users(secure_broker, admin, "describe", "erin", "--json")
    assert json.loads(described.stdout) == {"erin": [{"mechanism": "SCRAM-SHA-256", "iterations": 4096},
                                                     {"mechanism": "SCRAM-SHA-512", "iterations": 4096}]}
    # erin can now log in with the password the CLI was given
    producer = Producer(secure_broker.sasl_config("erin", "erin-secret", "SCRAM-SHA-256"))
    assert producer.list_topics(timeout=10).brokers
    deleted = _users(secure_broker, admin, "delete", "erin", "--mechanism", "SCRAM-SHA-256")
    assert deleted.returncode == 0, deleted.stderr
    assert json.loads(_users(secure_broker, admin, "describe", "erin", "--json").stdout) == {
        "erin": [{"mechanism": "SCRAM-SHA-512", "iterations": 4096}]}
    assert _users(secure_broker, admin, "delete", "erin").returncode == 0
    missing = _users(secure_broker, admin, "describe", "erin")
    assert missing.returncode == 1 and "no SCRAM credentials for user(s) erin" in missing.stderr


def test_users_errors_are_one_line(secure_broker: SecureBroker, tmp_path: Path) -> None:
    admin = _properties(tmp_path / "admin.properties", secure_broker, "admin", ADMIN_PASSWORD)
    weak = _users(secure_broker, admin, "add", "frank", "--iterations", "100", "--password-stdin", stdin="pw\n")
    assert weak.returncode == 1 and "UNACCEPTABLE_CREDENTIAL" in weak.stderr and "Too few iterations" in weak.stderr
    no_password = _users(secure_broker, admin, "add", "frank", stdin="")
    assert no_password.returncode == 1 and "no password" in no_password.stderr
    # alice (a PLAIN user without ACLs) may not describe the cluster's users: a clean refusal
    alice = _properties(tmp_path / "alice.properties", secure_broker, "alice", ALICE_PLAIN_PASSWORD)
    refused = _users(secure_broker, alice, "list")
    assert refused.returncode == 1 and "not authorized" in refused.stderr, refused.stderr
    refused = _users(secure_broker, alice, "add", "frank", "--password-stdin", stdin="pw\n")
    assert refused.returncode == 1 and "CLUSTER_AUTHORIZATION_FAILED" in refused.stderr
