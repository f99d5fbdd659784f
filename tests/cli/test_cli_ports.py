"""A server command whose port another process holds says so in one line (issue 15.5).

Before, ``seaway broker`` and ``seaway connect`` printed a traceback (the connect worker only
after it had joined its cluster) and ``seaway registry`` did not name the port.
"""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.clirun import seaway
from tests.support.broker import BrokerProcess


@pytest.fixture
def held_port() -> Iterator[int]:
    """A port another process (here: this one) listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


def _one_line(result: subprocess.CompletedProcess[bytes], port: int) -> str:
    stderr = result.stderr.decode()
    assert result.returncode != 0, stderr
    assert "Traceback" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert str(port) in lines[0] and "in use" in lines[0], lines[0]
    return lines[0]


@pytest.mark.timeout(60)
def test_broker_on_a_taken_port(held_port: int, tmp_path: Path) -> None:
    result = seaway("broker", "--log-level", "WARNING", "--override", f"log.dirs={tmp_path}",
                    "--override", f"listeners=PLAINTEXT://127.0.0.1:{held_port}")
    assert _one_line(result, held_port).startswith("seaway broker: cannot listen:")


@pytest.mark.timeout(60)
def test_registry_on_a_taken_port(held_port: int) -> None:
    result = seaway("registry", "--memory", "--override", f"listeners=http://127.0.0.1:{held_port}")
    assert _one_line(result, held_port) == (f"seaway registry: listeners=http://127.0.0.1:{held_port}: "
                                            f"port {held_port} on 127.0.0.1 is already in use by another process")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("mode", ["standalone", "distributed"])
def test_connect_on_a_taken_port(held_port: int, tmp_path: Path, mode: str,
                                shared_broker: BrokerProcess) -> None:
    props = tmp_path / "worker.properties"
    props.write_text(f"bootstrap.servers={shared_broker.bootstrap}\n"
                     f"listeners=http://127.0.0.1:{held_port}\n"
                     f"offset.storage.file.filename={tmp_path / 'offsets'}\n"
                     "group.id=g\nconfig.storage.topic=c\noffset.storage.topic=o\nstatus.storage.topic=s\n"
                     "key.converter=org.apache.kafka.connect.storage.StringConverter\n"
                     "value.converter=org.apache.kafka.connect.storage.StringConverter\n")
    result = seaway("connect", mode, str(props))
    assert _one_line(result, held_port) == (f"seaway connect: listeners=http://127.0.0.1:{held_port}: "
                                            f"port {held_port} on 127.0.0.1 is already in use by another process")
