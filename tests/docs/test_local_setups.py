"""docs/local-setups.md, run as written: the S3 sink on moto's server, the first SCRAM user, a second cluster.

Every ``bash`` block marked ``<!-- run: <section> -->`` is run in order, as one bash script
(``set -euo pipefail``) from the repository root, the way the page tells a reader to paste them.
Only two things change: the ports (9092, 8081, 8083 of ``scripts/up.sh``'s ``seaway up``, and
the page's own 5000, 9192, 9292) become free ones, and ``~/seaway-howto`` a temporary folder.
The S3 and mirror sections need ``scripts/up.sh`` running: the test runs ``seaway up`` on those
ports. The ``text`` blocks after a section's commands are its expected output: each of their
lines must appear in what the script printed (a cluster id is random, so that line is skipped).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.test_cli_up import start_up
from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "local-setups.md"
UP_PORTS = {"9092": "broker", "8081": "registry", "8083": "rest"}


def section(name: str) -> tuple[str, list[str]]:
    """The section's marked ``bash`` blocks joined, and the lines of its ``text`` blocks."""
    text = PAGE.read_text()
    blocks = re.findall(rf"<!-- run: {name} -->\n```bash\n(.*?)```", text, re.S)
    assert blocks, f"no runnable blocks for {name!r} in {PAGE}"
    first = text.index(f"<!-- run: {name} -->")
    last = text.rindex(f"<!-- run: {name} -->")
    following = text.find("\n## ", last)
    body = text[first:following if following >= 0 else len(text)]
    expected = [line for block in re.findall(r"```text\n(.*?)```", body, re.S) for line in block.splitlines()
                if line.strip() and "cluster.id" not in line]
    return "".join(blocks), expected


def run_section(name: str, ports: dict[str, int], home: Path, timeout: float) -> str:
    """Run the section's script; its output (stdout and stderr). Fails with the output on a non-zero exit."""
    script, expected = section(name)
    for port, actual in ports.items():
        script = re.sub(rf"(?<![0-9]){port}(?![0-9])", str(actual), script)
    script = script.replace("~/seaway-howto", str(home))
    # background servers go when the script ends, also when it fails half-way
    prelude = "set -euo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n"
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.Popen(["bash", "-c", prelude + script], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        raise AssertionError(f"{name}: still running after {timeout} s:\n{output}") from None
    assert proc.returncode == 0, f"{name}: exit status {proc.returncode}:\n{output}"
    missing = [line for line in expected if line not in output]
    assert not missing, f"{name}: expected output missing {missing}:\n{output}"
    return output


@pytest.fixture
def up(tmp_path: Path) -> Iterator[dict[str, int]]:
    """``seaway up`` (what scripts/up.sh runs) on free ports: {doc port: actual port}."""
    ports = {"9092": free_port(), "8081": free_port(), "8083": free_port()}
    proc, _parts, _output = start_up(tmp_path / "up-data", ports=(ports["9092"], ports["8081"], ports["8083"]))
    try:
        yield ports
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)


@pytest.mark.timeout(300)
def test_the_s3_sink_on_a_local_s3_server(up: dict[str, int], tmp_path: Path) -> None:
    output = run_section("s3", {**up, "5000": free_port()}, tmp_path / "howto", timeout=240)
    assert "topics/orders/partition=0/orders+0+0000000000.snappy.parquet" in output


@pytest.mark.timeout(120)
def test_the_first_scram_user_of_a_scram_only_broker(tmp_path: Path) -> None:
    output = run_section("scram", {"9192": free_port()}, tmp_path / "howto", timeout=100)
    assert re.search(r"Formatting metadata directory scram-data with cluster.id \S+\.", output), output
    assert (tmp_path / "howto" / "scram" / "scram-data" / "__cluster_metadata-0").is_dir()


@pytest.mark.timeout(300)
def test_a_second_cluster_to_mirror_to(up: dict[str, int], tmp_path: Path) -> None:
    run_section("mirror", {**up, "9292": free_port()}, tmp_path / "howto", timeout=240)
