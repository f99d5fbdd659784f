"""The CLI says why a secured broker refused it, at once, instead of ``_TRANSPORT`` after its timeout.

Against the package's real SASL_SSL broker (SCRAM-SHA-512 users, TLS from tests.support.tls_material),
through the installed ``seaway`` command: a wrong SCRAM password and a missing CA used to print
``_TRANSPORT: Failed to get metadata`` after the whole timeout (30 s) while librdkafka logged in again
and again (4,249 failed logins in one run). Now ``topics``, ``groups``, ``users``, ``produce`` and
``consume`` stop at the first failure with the broker's answer, well inside their timeout, and the
broker sees a handful of failed logins, not thousands.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.cli.clirun import seaway
from tests.security.conftest import CONNECT_PASSWORD, SCRAM_MODULE, Secured

pytestmark = pytest.mark.timeout(180)

COMMANDS: list[tuple[str, ...]] = [
    ("topics", "list"),
    ("groups", "list"),
    ("users", "list"),
    ("produce", "cli-auth-topic"),
    ("consume", "cli-auth-topic", "--from-beginning"),
]


def _client_file(path: Path, secured: Secured, password: str, ca: bool = True) -> Path:
    lines = ["security.protocol=SASL_SSL", "sasl.mechanism=SCRAM-SHA-512",
             f'sasl.jaas.config={SCRAM_MODULE} required username="connect" password="{password}";']
    if ca:
        lines += ["ssl.truststore.type=PEM", f"ssl.truststore.location={secured.material.ca}"]
    path.write_text("\n".join(lines) + "\n")
    return path


def _failed_logins(secured: Secured) -> int:
    return sum("authentication failed" in line for line in secured.broker.process.output)


def _run(secured: Secured, command: tuple[str, ...], config: Path) -> tuple[int, list[str], float]:
    started = time.monotonic()
    done = seaway(*command, "--bootstrap-server", secured.bootstrap, "--command-config", str(config),
                  stdin=b"one record\n", timeout=60)
    return done.returncode, done.stderr.decode().strip().splitlines(), time.monotonic() - started


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_wrong_scram_password_stops_at_once_with_the_brokers_answer(secured: Secured, tmp_path: Path,
                                                                     command: tuple[str, ...]) -> None:
    config = _client_file(tmp_path / "wrong.properties", secured, "not-the-password")
    before = _failed_logins(secured)
    code, lines, took = _run(secured, command, config)
    assert code == 1, lines
    assert len(lines) == 1 and lines[0].startswith("Error: authentication failed: "), lines
    assert "invalid credentials with SASL mechanism SCRAM-SHA-512" in lines[0]
    assert "_TRANSPORT" not in lines[0]
    assert took < 15, f"took {took:.1f}s: the default 30 s timeout ran out"  # the first failure ends it
    time.sleep(1)  # the broker's log lines of the last attempts
    assert _failed_logins(secured) - before <= 5, "kept logging in after the broker refused"


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_missing_ca_says_the_brokers_certificate_is_not_trusted(secured: Secured, tmp_path: Path,
                                                                 command: tuple[str, ...]) -> None:
    config = _client_file(tmp_path / "no-ca.properties", secured, CONNECT_PASSWORD, ca=False)
    code, lines, took = _run(secured, command, config)
    assert code == 1, lines
    assert len(lines) == 1 and lines[0].startswith("Error: TLS handshake failed: "), lines
    assert "certificate verify failed" in lines[0] and "ssl.truststore.location" in lines[0]
    assert took < 15, f"took {took:.1f}s"


def test_the_right_password_still_works(secured: Secured, tmp_path: Path) -> None:
    config = _client_file(tmp_path / "right.properties", secured, CONNECT_PASSWORD)
    created = seaway("topics", "create", "cli-auth-ok", "--if-not-exists", "--bootstrap-server", secured.bootstrap,
                     "--command-config", str(config))
    assert created.returncode == 0, created.stderr
    listed = seaway("topics", "list", "--bootstrap-server", secured.bootstrap, "--command-config", str(config))
    assert listed.returncode == 0 and "cli-auth-ok" in listed.stdout.decode().split(), listed.stderr


def test_an_unreachable_cluster_names_the_last_reason(tmp_path: Path) -> None:
    """No broker at all: the timeout (milliseconds) and librdkafka's reason, not ``_TRANSPORT``."""
    done = seaway("topics", "list", "--bootstrap-server", "127.0.0.1:1", "--timeout-ms", "1500")
    lines = done.stderr.decode().strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1, lines
    assert lines[0].startswith("Error: no answer from the cluster at 127.0.0.1:1 within 1500 ms (last: ")
    assert "Connection refused" in lines[0]
