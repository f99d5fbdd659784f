"""The README's first pipeline, walked in the console alone, in headless chromium.

One broker, registry, Connect worker (values as Avro through the registry, as ``seaway up``) and
``seaway console`` for the module, and one browser. The walk: create a FileStreamSource from the
form built from its ConfigDef, see it RUNNING, browse its topic's messages decoded from Avro
(and filter them), see a sink's consumer group lag fall to 0; then break the connector in the
form and read the validation error beside the field (and the save refused), create a sink that
fails from the raw JSON editor and read its task's trace, stop the sink and reset its group's
offsets, dry run first.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import AdminClient

from tests.console.console_support import ConsoleProcess, Stack, browser_page, screenshot, start_stack

pytestmark = pytest.mark.timeout(300)

LINES = 1000


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with start_stack(tmp_path_factory.mktemp("console-walk"), "console-walk") as s:
        yield s


@pytest.fixture(scope="module")
def console(stack: Stack) -> Iterator[ConsoleProcess]:
    with ConsoleProcess(*stack.console_args()) as c:
        yield c


@pytest.fixture(scope="module")
def page(console: ConsoleProcess) -> Iterator[Any]:
    with browser_page() as p:
        yield p


def _committed(bootstrap: str, group: str, topic: str) -> int | None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    future = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group, [TopicPartition(topic, 0)])])
    result = future[group].result(timeout=20)
    offset = result.topic_partitions[0].offset
    return None if offset < 0 else int(offset)


def _commit(bootstrap: str, group: str, topic: str, offset: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    request = [ConsumerGroupTopicPartitions(group, [TopicPartition(topic, 0, offset)])]
    admin.alter_consumer_group_offsets(request)[group].result(timeout=20)


def _members(bootstrap: str, group: str) -> int:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    return len(admin.describe_consumer_groups([group])[group].result(timeout=10).members)


def _wait(check: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}; last: {last!r}")


def test_walk_the_first_pipeline(stack: Stack, console: ConsoleProcess, page: Any, tmp_path: Path) -> None:
    source = tmp_path / "input.txt"
    source.write_text("".join(f"line {i}\n" for i in range(1, LINES + 1)))
    base = console.url

    # 1. create the FileStreamSource from the form the plugin's ConfigDef describes
    page.goto(base + "/connectors")
    page.get_by_role("link", name="New connector").click()
    page.get_by_role("link", name="org.apache.kafka.connect.file.FileStreamSourceConnector").click()
    page.fill("#f-name", "lines")
    page.fill("#f-file", str(source))
    page.fill("#f-topic", "lines")
    screenshot(page, "connector-form")
    page.get_by_role("button", name="Create", exact=True).click()
    page.wait_for_url("**/connectors/connect/lines?m=*")
    page.locator("#connector-status", has_text="Connector RUNNING").wait_for()
    page.locator("#task-0", has_text="RUNNING").wait_for()
    worker_view = httpx.get(f"{stack.connect_url}/connectors/lines/config", timeout=10).json()
    assert worker_view["file"] == str(source) and worker_view["topic"] == "lines"

    # 2. the topic's messages, decoded from Avro through the registry, newest first; a filter
    def all_written() -> bool:
        page.goto(base + "/topics/lines/messages?limit=5")
        return '"line 1000"' in page.content()
    _wait(all_written, 60, "the source to write every line")
    rows = page.locator("table.messages tbody tr")
    assert rows.count() == 5
    first = rows.nth(0).inner_text()
    assert '"line 1000"' in first and "AVRO · SCHEMA" in first.upper(), first
    page.fill("input[name=filter]", "line 42")
    page.fill("input[name=limit]", "100")
    page.get_by_role("button", name="Show").click()
    page.wait_for_url("**filter=line+42**")
    texts = page.locator("table.messages tbody tr").all_inner_texts()
    assert len(texts) == 11 and all("line 42" in t for t in texts), texts  # line 42 and lines 420..429
    assert sum('"line 42"' in t for t in texts) == 1
    screenshot(page, "messages")

    # 3. a sink's consumer group: its lag, shown at 1000 (committed at 0), falls to 0
    _commit(stack.bootstrap, "connect-lines-out", "lines", 0)
    page.goto(base + "/groups/connect-lines-out")
    page.locator("#total-lag", has_text="1\u202f000").wait_for()
    out = tmp_path / "out.txt"
    created = httpx.put(f"{stack.connect_url}/connectors/lines-out/config", timeout=30, json={
        "connector.class": "FileStreamSink", "file": str(out), "topics": "lines"})
    assert created.status_code == 201, created.text
    page.locator("#total-lag", has_text=re.compile(r"^0$")).wait_for(timeout=60_000)  # htmx refreshes it
    assert page.locator("#group-lag .badge", has_text="OK").count() >= 1
    screenshot(page, "group-lag")

    # 4. break the source in the form: the worker's error appears beside the field, the save is refused
    page.goto(base + "/connectors/connect/lines/edit")
    page.fill("#f-tasks_2e_max", "abc")
    page.press("#f-tasks_2e_max", "Tab")
    error = page.locator("#err-tasks_2e_max li")
    error.wait_for()
    assert "Invalid value abc for configuration tasks.max" in error.inner_text()
    page.get_by_role("button", name="Save", exact=True).click()
    page.locator("#err-tasks_2e_max li", has_text="Invalid value abc").wait_for()
    assert "Not saved" in page.content()
    screenshot(page, "validation")
    assert httpx.get(f"{stack.connect_url}/connectors/lines/config", timeout=10).json().get("tasks.max") != "abc"

    # 5. a sink created from the raw JSON editor fails its task: its trace is on the connector's page
    page.goto(base + "/connectors/new?plugin=FileStreamSink")
    page.locator("summary", has_text="Edit as JSON").click()
    page.fill("textarea[name=raw]", '{"name": "broken-sink", "connector.class": "FileStreamSink", '
              '"topics": "lines", "file": "/nonexistent/dir/out.txt"}')
    page.get_by_role("button", name="Create from JSON").click()
    page.wait_for_url("**/connectors/connect/broken-sink?m=*")
    trace = page.locator("#task-0 pre.trace")
    trace.wait_for(timeout=60_000)
    assert "Couldn't find or create file '/nonexistent/dir/out.txt'" in trace.inner_text()
    assert "Traceback" in trace.inner_text()
    screenshot(page, "failed-task")

    # 6. stop the sink, reset its group's offsets: the dry run changes nothing, then execute
    page.goto(base + "/connectors/connect/lines-out")
    page.get_by_role("button", name="Stop", exact=True).click()
    page.wait_for_url("**/connectors/connect/lines-out?m=*")
    _wait(lambda: _members(stack.bootstrap, "connect-lines-out") == 0, 60, "the stopped sink's group to empty")
    page.goto(base + "/groups/connect-lines-out")
    page.select_option("select[name=method]", "to-offset")
    page.fill("input[name=value]", "250")
    page.get_by_role("button", name="Dry run").click()
    plan = page.locator("#reset-plan tbody tr")
    plan.first.wait_for()
    assert plan.count() == 1
    cells = plan.first.locator("td").all_inner_texts()
    assert cells[:4] == ["lines", "0", "1\u202f000", "250"], cells
    screenshot(page, "reset-dry-run")
    assert _committed(stack.bootstrap, "connect-lines-out", "lines") == LINES  # the dry run changed nothing
    page.get_by_role("button", name="Execute this plan").click()
    page.locator(".notice", has_text="offsets of 1 partition(s) reset").wait_for()
    assert _committed(stack.bootstrap, "connect-lines-out", "lines") == 250


def test_reset_refused_while_the_group_is_active(stack: Stack, console: ConsoleProcess, tmp_path: Path) -> None:
    """Kafka's rule and message: a group with members is not reset, even with a plan in hand."""
    out = tmp_path / "active.txt"
    created = httpx.put(f"{stack.connect_url}/connectors/active-sink/config", timeout=30, json={
        "connector.class": "FileStreamSink", "file": str(out), "topics": "lines"})
    assert created.status_code == 201, created.text
    _wait(lambda: _members(stack.bootstrap, "connect-active-sink") > 0, 60, "the sink's group to have a member")
    with httpx.Client(base_url=console.url, timeout=30) as client:
        from tests.console.console_support import csrf_of

        token = csrf_of(client, "/groups/connect-active-sink")
        answer = client.post("/groups/connect-active-sink/reset", data={
            "csrf_token": token, "execute": "true", "plan": '[{"topic": "lines", "partition": 0, "new": 0}]'})
    assert answer.status_code == 409, answer.text[:300]
    assert "Assignments can only be reset if the group &#39;connect-active-sink&#39; is inactive" in answer.text
    assert _committed(stack.bootstrap, "connect-active-sink", "lines") != 0
