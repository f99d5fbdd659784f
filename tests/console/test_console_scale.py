"""Every page renders, in chromium, with 1,000 topics, 200 connectors and 100 consumer groups.

The cluster is filled in bulk, once for the module, through the public APIs: one CreateTopics for
the 1,000 topics, 200 connectors created STOPPED (no tasks to run) through Connect's REST API a
few at a time, 100 groups by committing an offset for each (OffsetCommit through the admin API),
20 registry subjects. Each page is then loaded in the browser, which must show the expected rows
and no error; the time to the first byte of each page is printed (bench/console.py measures it).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

from tests.console.console_support import ConsoleProcess, Stack, browser_page, start_stack

pytestmark = pytest.mark.timeout(300)

TOPICS, CONNECTORS, GROUPS, SUBJECTS = 1000, 200, 100, 20


def populate(stack: Stack) -> None:
    """1,000 topics, 200 stopped connectors, 100 groups, 20 subjects (bench/console.py uses it too)."""
    started = time.monotonic()
    admin = AdminClient({"bootstrap.servers": stack.bootstrap})
    futures = admin.create_topics([NewTopic(f"scale-{i:04d}", 1, 1) for i in range(TOPICS)], request_timeout=120)
    for future in futures.values():
        future.result(timeout=180)

    def connector(i: int) -> None:
        answer = httpx.post(f"{stack.connect_url}/connectors", timeout=120, json={
            "name": f"scale-connector-{i:03d}", "initial_state": "STOPPED",
            "config": {"connector.class": "FileStreamSource", "file": f"/nonexistent/{i}.txt",
                       "topic": f"scale-{i:04d}"}})
        assert answer.status_code == 201, answer.text
    print(f"{TOPICS} topics in {time.monotonic() - started:.1f} s")
    started = time.monotonic()
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(connector, range(CONNECTORS)))
    print(f"{CONNECTORS} connectors in {time.monotonic() - started:.1f} s")
    started = time.monotonic()
    commits = [admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(
        f"scale-group-{i:03d}", [TopicPartition(f"scale-{i % 10:04d}", 0, 0)])])[f"scale-group-{i:03d}"]
        for i in range(GROUPS)]
    for future in commits:
        future.result(timeout=60)
    print(f"{GROUPS} groups in {time.monotonic() - started:.1f} s")
    for i in range(SUBJECTS):
        schema = {"type": "record", "name": f"R{i}", "fields": [{"name": "x", "type": "string"}]}
        answer = httpx.post(f"{stack.registry_url}/subjects/scale-subject-{i:02d}/versions", timeout=30,
                            json={"schema": json.dumps(schema)},
                            headers={"Content-Type": "application/vnd.schemaregistry.v1+json"})
        assert answer.status_code == 200, answer.text


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with start_stack(tmp_path_factory.mktemp("console-scale"), "console-scale", avro=False) as s:
        started = time.monotonic()
        populate(s)
        print(f"populated in {time.monotonic() - started:.1f} s")
        yield s


@pytest.fixture(scope="module")
def console(stack: Stack) -> Iterator[ConsoleProcess]:
    with ConsoleProcess(*stack.console_args()) as c:
        yield c


def _ttfb(url: str) -> float:
    with httpx.Client(timeout=60) as client:
        started = time.perf_counter()
        with client.stream("GET", url) as response:
            next(response.iter_raw())
            assert response.status_code == 200, url
            return time.perf_counter() - started


def test_every_page_renders_at_scale(stack: Stack, console: ConsoleProcess) -> None:
    base = console.url
    deadline = time.monotonic() + 60
    while httpx.get(base + "/groups", timeout=60).text.count('href="/groups/scale-group-') < GROUPS:
        assert time.monotonic() < deadline, "the lag watcher never sampled the 100 groups"
        time.sleep(0.5)
    errors: list[str] = []
    checks: list[tuple[str, str, int]] = [
        ("/", "h1", 1),
        ("/topics", "table tbody tr", 100),
        ("/topics?q=scale-0&internal=false&page=10",
         'table tbody tr a[href^="/topics/scale-09"]:not([href$="/messages"])', 100),
        ("/connectors", 'table tbody tr a[href^="/connectors/connect/scale-connector-"]', CONNECTORS),
        ("/connectors?state=STOPPED", 'table tbody tr a[href^="/connectors/connect/scale-connector-"]', CONNECTORS),
        ("/groups", 'table tbody tr a[href^="/groups/scale-group-"]', GROUPS),
        ("/schemas", 'table tbody tr a[href^="/schemas/scale-subject-"]', SUBJECTS),
        ("/health", 'section.card[data-part="broker"]', 1),
        ("/topics/scale-0000", 'a[href^="/groups/scale-group-"]', GROUPS // 10),
        ("/topics/scale-0000/messages", "table.messages", 1),
        ("/groups/scale-group-000", "#total-lag", 1),
        ("/connectors/connect/scale-connector-000", "#connector-status", 1),
        ("/connectors/connect/scale-connector-000/edit", "#connector-form", 1),
        ("/schemas/scale-subject-00", "#schema-text-current", 1),
    ]
    timings = {path: _ttfb(base + path) for path, _, _ in checks}
    with browser_page() as page:
        page.on("console", lambda m: errors.append(f"{m.type}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        for path, selector, expected in checks:
            response = page.goto(base + path)
            assert response is not None and response.status == 200, path
            found = page.locator(selector).count()
            assert found == expected, (path, selector, found)
            assert page.locator(".error-box").count() == 0, (path, page.locator(".error-box").all_inner_texts())
        page.goto(base + "/connectors")
        total = page.locator("p.muted", has_text="connectors").first.inner_text()
        assert f"{CONNECTORS} of {CONNECTORS} connectors" in total, total
        page.goto(base + "/topics?q=scale-0")
        assert page.locator("nav.pager", has_text="page 1 of 10").count() == 1
    assert not errors, errors
    for path, seconds in timings.items():
        print(f"TTFB {path}: {seconds * 1000:.0f} ms")
