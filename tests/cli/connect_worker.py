"""Run ``seaway connect standalone`` as a real process for tests; yields its REST URL."""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import httpx

from tests.cli.clirun import SEAWAY
from tests.support.ports import free_port
from tests.support.process import stop


@contextlib.contextmanager
def connect_worker(bootstrap: str, data_dir: Path, timeout: float = 30,
                   extra: Mapping[str, str] | None = None) -> Iterator[str]:
    data_dir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    props = data_dir / "worker.properties"
    props.write_text(f"bootstrap.servers={bootstrap}\nlisteners=http://127.0.0.1:{port}\n"
                     f"offset.storage.file.filename={data_dir / 'connect.offsets'}\n"
                     "key.converter=org.apache.kafka.connect.storage.StringConverter\n"
                     "value.converter=org.apache.kafka.connect.storage.StringConverter\n"
                     "offset.flush.interval.ms=500\n"
                     + "".join(f"{k}={v}\n" for k, v in (extra or {}).items()))
    log = (data_dir / "worker.log").open("wb")
    proc = subprocess.Popen([SEAWAY, "connect", "standalone", str(props)], stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            assert proc.poll() is None, (data_dir / "worker.log").read_text()
            assert time.monotonic() < deadline, "worker not healthy: " + (data_dir / "worker.log").read_text()
            try:
                if httpx.get(url + "/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        yield url
    finally:
        stop(proc, 20)
        log.close()
