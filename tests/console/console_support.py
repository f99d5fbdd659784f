"""The console's tests: a real broker, registry, Connect worker and ``seaway console``, and Debian's chromium.

Every server is a process on loopback, as an operator runs them; the console is started with
``seaway console`` (so the command, its flags and its ready line are exercised too). The browser
is Debian's ``/usr/bin/chromium`` driven by Playwright (its own browser downloads are never used);
without it the browser tests skip, except in CI (``CI`` set), where they fail saying what to
install. ``SEAWAY_CONSOLE_SCREENSHOTS=1`` makes the browser tests write their screenshots into
docs/images/ (the ones docs/console.md shows); otherwise they are not taken, so CI never rewrites
the tree.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.connect.distributed.dist_support import WorkerProcess, free_port, worker_properties
from tests.schema_registry.registry_support import RegistryProcess
from tests.support.broker import BrokerProcess

__all__ = ["CHROMIUM", "ConsoleProcess", "Stack", "browser_page", "csrf_of", "screenshot", "start_stack"]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
DOCS_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"
READY = "seaway console ready on "
_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


class ConsoleProcess:
    """``seaway console ...`` as a subprocess; ``url`` once it printed its ready line."""

    def __init__(self, *args: str) -> None:
        self.args = [sys.executable, "-m", "seaway.cli.main", "console", "--port", "0", *args]
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""
        self.output: list[str] = []
        self._pump: threading.Thread | None = None

    def start(self, timeout: float = 60.0) -> ConsoleProcess:
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     env={**os.environ, "PYTHONUNBUFFERED": "1"})
        ready: queue.Queue[str | None] = queue.Queue()
        proc = self.proc

        def pump() -> None:
            assert proc.stdout is not None
            with proc.stdout:
                for line in proc.stdout:
                    self.output.append(line)
                    if line.startswith(READY):
                        ready.put(line[len(READY):].strip())
            ready.put(None)

        self._pump = threading.Thread(target=pump, daemon=True)
        self._pump.start()
        try:
            url = ready.get(timeout=timeout)
        except queue.Empty:
            url = None
        if url is None:
            self.stop()
            raise RuntimeError("seaway console did not start:\n" + "".join(self.output[-40:]))
        self.url = url
        return self

    def stop(self, timeout: float = 20.0) -> int | None:
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self._pump is not None:
            self._pump.join(5)
        return self.proc.returncode

    def __enter__(self) -> ConsoleProcess:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()


class Stack:
    """A broker (with its /metrics listener), a registry and a Connect worker writing Avro through it."""

    def __init__(self, directory: Path, group: str, *, worker_extra: dict[str, str] | None = None,
                 registry_overrides: tuple[str, ...] = (), avro: bool = True) -> None:
        self.directory = directory
        self.metrics_port = free_port()
        self.broker = BrokerProcess(directory / "broker", {
            "group.initial.rebalance.delay.ms": "0", "group.min.session.timeout.ms": "1000",
            "offsets.topic.num.partitions": "3", "metrics.listener": f"127.0.0.1:{self.metrics_port}"})
        self.group = group
        self.worker_extra = dict(worker_extra or {})
        self.registry_overrides = registry_overrides
        self.avro = avro
        self.registry: RegistryProcess | None = None
        self.worker: WorkerProcess | None = None

    @property
    def bootstrap(self) -> str:
        return self.broker.bootstrap

    @property
    def metrics_url(self) -> str:
        return f"http://127.0.0.1:{self.metrics_port}/metrics"

    @property
    def connect_url(self) -> str:
        assert self.worker is not None
        return self.worker.url

    @property
    def registry_url(self) -> str:
        assert self.registry is not None
        return self.registry.url

    def start(self) -> Stack:
        self.broker.start()
        self.registry = RegistryProcess(self.bootstrap, "kafkastore.topic.replication.factor=1",
                                        *self.registry_overrides).start()
        extra = {"offset.flush.interval.ms": "500", "consumer.auto.offset.reset": "earliest", **self.worker_extra}
        if self.avro:
            extra.update({"value.converter": "io.confluent.connect.avro.AvroConverter",
                          "value.converter.schema.registry.url": self.registry.url})
        props = worker_properties(self.bootstrap, free_port(), self.group, session_ms=6000, heartbeat_ms=500,
                                  delay_ms=0, extra=extra)
        self.worker = WorkerProcess(self.directory / "worker", props).start()
        return self

    def console_args(self) -> list[str]:
        return ["--bootstrap-server", self.bootstrap, "--connect", f"connect={self.connect_url}",
                "--schema-registry-url", self.registry_url, "--broker-metrics-url", self.metrics_url,
                "--override", "lag.sample.interval.ms=1000"]

    def stop(self) -> None:
        for part in (self.worker, self.registry):
            if part is not None:
                part.stop() if isinstance(part, WorkerProcess) else part.kill()
        self.broker.stop()


@contextmanager
def start_stack(directory: Path, group: str, **kwargs: Any) -> Iterator[Stack]:
    stack = Stack(directory, group, **kwargs)
    try:
        yield stack.start()
    finally:
        stack.stop()


def _chromium_or_skip() -> None:
    if not os.access(CHROMIUM, os.X_OK):
        message = (f"the console's browser tests need Debian's chromium at {CHROMIUM} "
                   "(apt-get install chromium; scripts/test.sh installs it)")
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


@contextmanager
def browser_page() -> Iterator[Any]:
    """One headless chromium and a page in it, 1280x800; dialogs (confirmations) are accepted."""
    _chromium_or_skip()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("playwright is not installed (pip install -e '.[dev]')")
        pytest.skip("playwright is not installed")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.set_default_timeout(30_000)
            page.on("dialog", lambda dialog: dialog.accept())
            yield page
        finally:
            browser.close()


def screenshot(page: Any, name: str) -> None:
    """docs/images/console-<name>.png, only when SEAWAY_CONSOLE_SCREENSHOTS=1."""
    if os.environ.get("SEAWAY_CONSOLE_SCREENSHOTS") == "1":
        DOCS_IMAGES.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(DOCS_IMAGES / f"console-{name}.png"))


def csrf_of(client: httpx.Client, url: str) -> str:
    """The CSRF token of the client's session (a page is fetched to open it)."""
    page = client.get(url)
    found = _CSRF.search(page.text)
    assert found, page.text[:500]
    return found.group(1)
