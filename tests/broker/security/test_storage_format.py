"""``seaway storage format --add-scram``: the first SCRAM user of a broker that only accepts SCRAM.

Before it, a broker whose one listener was SASL/SCRAM had no way in: creating a user
(AlterUserScramCredentials) needs a login, and the credential store starts empty. Kafka writes
bootstrap credentials at format time (``kafka-storage.sh format --add-scram``); so does this.
The broker here is a real process with only a SASL_PLAINTEXT listener and SCRAM-SHA-256 /
SCRAM-SHA-512 enabled, and the clients are librdkafka's (confluent-kafka) and ``seaway users``.
The argument errors are Kafka's ``ScramParser`` messages.
"""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
from pathlib import Path

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient

from tests.support.broker import BrokerProcess
from tests.support.ports import free_port

JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule required;"


def _storage(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "seaway.cli.main", "storage", *args], capture_output=True,
                          text=True, timeout=60, check=False)


def _scram_only(data: Path, port: int) -> dict[str, str]:
    return {"log.dirs": str(data), "listeners": f"SASL_PLAINTEXT://127.0.0.1:{port}",
            "inter.broker.listener.name": "SASL_PLAINTEXT",
            "sasl.enabled.mechanisms": "SCRAM-SHA-256,SCRAM-SHA-512",
            "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config": JAAS,
            "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config": JAAS}


def _overrides(props: dict[str, str]) -> list[str]:
    return [arg for key, value in props.items() for arg in ("--override", f"{key}={value}")]


def _brokers_seen(port: int, user: str, password: str, mechanism: str) -> int:
    admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{port}", "security.protocol": "SASL_PLAINTEXT",
                         "sasl.mechanism": mechanism, "sasl.username": user, "sasl.password": password})
    try:
        return len(admin.list_topics(timeout=15).brokers)
    finally:
        del admin


@pytest.mark.timeout(120)
def test_format_adds_the_first_users_of_a_scram_only_broker(tmp_path: Path) -> None:
    data, port = tmp_path / "data", free_port()
    props = _scram_only(data, port)
    salt = b"0123456789abcdef"
    salted = hashlib.pbkdf2_hmac("sha512", b"bob-secret", salt, 8192)
    formatted = _storage("format", *_overrides(props),
                         "--add-scram", "SCRAM-SHA-256=[name=admin,password=admin-secret]",
                         "-S", f'SCRAM-SHA-512=[name=bob,iterations=8192,salt="{base64.b64encode(salt).decode()}",'
                               f"saltedpassword={base64.b64encode(salted).decode()}]")
    assert formatted.returncode == 0, formatted.stderr
    assert formatted.stdout.splitlines()[1:] == [
        "Added SCRAM-SHA-256 credential for user admin (iterations 4096).",
        "Added SCRAM-SHA-512 credential for user bob (iterations 8192)."]
    assert "admin-secret" not in formatted.stdout
    meta = dict(line.split("=", 1) for line in (data / "meta.properties").read_text().splitlines())
    assert formatted.stdout.startswith(f"Formatting metadata directory {data} with cluster.id {meta['cluster.id']}.")

    broker = BrokerProcess(data, {k: v for k, v in props.items() if k != "log.dirs"}, port=port).start()
    try:
        assert broker.output and any(meta["cluster.id"] in line for line in broker.output)  # the formatted id
        assert _brokers_seen(port, "admin", "admin-secret", "SCRAM-SHA-256") == 1
        assert _brokers_seen(port, "bob", "bob-secret", "SCRAM-SHA-512") == 1  # from salt + saltedpassword
        with pytest.raises(KafkaException):
            _brokers_seen(port, "admin", "wrong", "SCRAM-SHA-256")
        # the bootstrap user adds the next one through the protocol, as an operator would
        command = tmp_path / "admin.properties"
        command.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\nsasl.jaas.config="
                           "org.apache.kafka.common.security.scram.ScramLoginModule required "
                           'username="admin" password="admin-secret";\n')
        added = subprocess.run([sys.executable, "-m", "seaway.cli.main", "users", "add", "carol", "--mechanism",
                                "SCRAM-SHA-256", "--password-stdin", "--bootstrap-server", f"127.0.0.1:{port}",
                                "--command-config", str(command)], input="carol-secret\n", capture_output=True,
                               text=True, timeout=60, check=False)
        assert added.returncode == 0, added.stderr
        assert _brokers_seen(port, "carol", "carol-secret", "SCRAM-SHA-256") == 1
    finally:
        broker.stop()
    # the broker ran on it: formatted, so refused (credentials now change through the broker only)
    again = _storage("format", *_overrides(props), "--add-scram", "SCRAM-SHA-256=[name=eve,password=x]")
    assert again.returncode == 1
    assert again.stderr.strip() == (f"seaway storage: Log directory {data} is already formatted. Use "
                                    "--ignore-formatted to ignore this directory and format the others.")
    skipped = _storage("format", *_overrides(props), "--ignore-formatted")
    assert (skipped.returncode, skipped.stdout) == (0, "All of the log directories are already formatted.\n")


@pytest.mark.parametrize(("argument", "message"), [
    ("SCRAM-SHA-256", "Failed to find equals sign in SCRAM argument 'SCRAM-SHA-256'"),
    ("SCRAM-SHA-1=[name=a,password=b]", "The add-scram mechanism SCRAM-SHA-1 is not supported."),
    ("SCRAM-SHA-256=name=a,password=b]", "Expected configuration string to start with ["),
    ("SCRAM-SHA-256=[name=a,password=b", "Expected configuration string to end with ]"),
    ("SCRAM-SHA-256=[password=b]", "You must supply 'name' to add-scram"),
    ("SCRAM-SHA-256=[name=a]", "You must supply one of 'password' or 'saltedpassword' to add-scram"),
    ("SCRAM-SHA-256=[name=a,saltedpassword=AAAA]", "You must supply 'salt' with 'saltedpassword' to add-scram"),
    ("SCRAM-SHA-256=[name=a,password=b,iterations=100]",
     "The 'iterations' value must be >= 4096 for add-scram using SCRAM-SHA-256"),
    ("SCRAM-SHA-512=[name=a,password=b,iterations=20000]",
     "The 'iterations' value must be <= 16384 for add-scram using SCRAM-SHA-512"),
    ("SCRAM-SHA-256=[name=a,password=b,iterations=x]", "Failed to parse iterations count: x"),
    ("SCRAM-SHA-256=[name=a,password=b,colour=red]", "Unknown SCRAM configurations: colour"),
    ("SCRAM-SHA-256=[name=a,password]", "No equals sign found in SCRAM component: password"),
])
def test_bad_add_scram_arguments_are_refused_with_kafkas_messages(argument: str, message: str,
                                                                   tmp_path: Path) -> None:
    result = _storage("format", "--override", f"log.dirs={tmp_path / 'data'}", "--add-scram", argument)
    assert result.returncode == 1
    assert result.stderr.strip() == f"seaway storage: {message}"
    assert not (tmp_path / "data").exists()  # nothing written


def test_random_uuid_is_a_cluster_id_format_accepts(tmp_path: Path) -> None:
    made = _storage("random-uuid")
    assert made.returncode == 0
    cluster_id = made.stdout.strip()
    assert len(base64.urlsafe_b64decode(cluster_id + "==")) == 16
    formatted = _storage("format", "--override", f"log.dirs={tmp_path}", "--cluster-id", cluster_id)
    assert formatted.returncode == 0, formatted.stderr
    assert f"cluster.id={cluster_id}\n" in (tmp_path / "meta.properties").read_text()
    bad = _storage("format", "--override", f"log.dirs={tmp_path / 'other'}", "--cluster-id", "not-an-id")
    assert bad.returncode == 1 and "does not appear to be a valid UUID" in bad.stderr
