"""A pytest plugin: a librdkafka client that outlives its test fails that test.

A confluent-kafka Producer, Consumer or AdminClient that a test forgets keeps its librdkafka
threads running after the test, reconnecting to a broker the test already stopped: it fills the
run's output with ``Connect to ... failed: Connection refused`` and, when a later test gets the
same port, talks to that test's server. So every test's clients must be closed (or dropped) by
the end of the test; this plugin checks that after each test and, if one is left, fails the test
that leaked it and shuts the client down, so its leftovers never reach the next test.

The check looks at librdkafka's own threads (``rdk:*`` in ``/proc/self/task/*/comm``), which exist
exactly while a client does, whichever object holds it: when threads started during the test are
still there after it, the open client objects made during the test and still alive are the leak
(a fixture's own value is not: pytest drops it right after). Clients a fixture of a wider scope
(module, session) owns were made before the test began and are not counted, nor the threads they
start meanwhile (one per broker they learn of). A test that failed anyway has its clients shut
without a second report (its traceback holds them). Registered for the whole suite by
``-p tests.support.leaks`` in pyproject.toml's ``addopts``; ``SEAWAY_LEAK_REPORT=FILE`` lists the
leaks in FILE instead of failing, to survey a whole run at once.
"""

from __future__ import annotations

import contextlib
import gc
import os
import threading
import time
from collections.abc import Generator, Iterator
from typing import Any

import pytest

__all__ = ["kafka_client_threads", "leaked_clients"]

GRACE_S = 5.0
"""How long a client that another thread is closing right now may take to go."""


def kafka_client_threads() -> set[int]:
    """The ids of this process's librdkafka threads (empty where /proc is not there)."""
    found: set[int] = set()
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            with open(f"/proc/self/task/{tid}/comm", encoding="utf-8") as f:
                if f.read().startswith("rdk:"):
                    found.add(int(tid))
        except OSError:  # the thread ended meanwhile
            continue
    return found


def leaked_clients() -> list[Any]:
    """The confluent-kafka client objects still alive and open in this process."""
    try:
        from confluent_kafka import Consumer, Producer
        from confluent_kafka.admin import AdminClient
    except ImportError:
        return []
    kinds = (Producer, Consumer, AdminClient)
    # type(o), not isinstance(o, ...): isinstance asks a weakref.proxy for its referent's class, and
    # a proxy whose referent is gone raises ReferenceError (a library's dead proxy broke every test after it)
    return [o for o in gc.get_objects() if issubclass(type(o), kinds) and not _closed(o)]


def _closed(client: Any) -> bool:
    """Whether ``client`` was closed (its object may outlive its handle); asks without side effects."""
    try:
        from confluent_kafka import Consumer, Producer
    except ImportError:
        return False
    try:
        if isinstance(client, Consumer):
            client.memberid()
        elif isinstance(client, Producer):
            client.purge(in_queue=False, in_flight=False, blocking=False)  # purges nothing
    except RuntimeError:  # "Consumer closed", "Producer has been closed"
        return True
    return False


def _settle(before: set[int]) -> set[int]:
    """The librdkafka threads started during the test that are still there after the grace time."""
    new = kafka_client_threads() - before
    deadline = time.monotonic() + GRACE_S
    while new and time.monotonic() < deadline:
        gc.collect()  # a client only reachable through a reference cycle goes now
        time.sleep(0.05)
        new = kafka_client_threads() - before
    return new


def _thread_names(tids: set[int]) -> str:
    names = []
    for tid in sorted(tids):
        try:
            with open(f"/proc/self/task/{tid}/comm", encoding="utf-8") as f:
                names.append(f.read().strip())
        except OSError:
            names.append(f"{tid} (gone)")
    return ", ".join(names)


def _fixture_held(request: pytest.FixtureRequest) -> set[int]:
    """The ids of objects the test's fixture values hold directly (the value, its items, its attributes)."""
    held: set[int] = set()
    for value in (getattr(request.node, "funcargs", None) or {}).values():
        members: list[Any] = [value]
        if isinstance(value, (tuple, list)):
            members.extend(value)
        elif isinstance(value, dict):
            members.extend(value.values())
        elif hasattr(value, "__dict__"):
            members.extend(vars(value).values())
        held.update(id(m) for m in members)
    return held


def _describe(client: Any) -> str:
    referrers = [type(r).__name__ for r in gc.get_referrers(client) if r is not gc.garbage][:5]
    return f"{type(client).__name__} (held by {', '.join(referrers) or 'nothing visible'})"


SHUT_S = 10.0
"""How long shutting a leaked client may take: a producer's close() flushes what it still holds, for
ever when its broker is gone (the broker fixture is torn down before this check; CI saw one hang the
test's teardown until pytest-timeout killed it)."""


def _shut(client: Any) -> None:
    close = getattr(client, "close", None)
    if close is None:
        return
    purge = getattr(client, "purge", None)  # a Producer: drop what it holds, so close() has nothing to flush
    if purge is not None:
        with contextlib.suppress(Exception):
            purge()

    def shut() -> None:
        with contextlib.suppress(Exception):  # a client closed twice or half-built: it is gone either way
            close()

    closer = threading.Thread(target=shut, name="leak-check-close", daemon=True)
    closer.start()
    closer.join(SHUT_S)  # a close that still hangs is left to its daemon thread: the test fails anyway


_CALL_REPORT = "_seaway_call_report"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, pytest.TestReport,
                                                                                            pytest.TestReport]:
    """Keeps the test body's report on the item, so the teardown check knows whether it failed."""
    report = yield
    if call.when == "call":
        setattr(item, _CALL_REPORT, report)
    return report


@pytest.fixture(autouse=True)
def _no_leaked_kafka_clients(request: pytest.FixtureRequest) -> Iterator[None]:
    before = kafka_client_threads()
    known = {id(c) for c in leaked_clients()} if before else set()
    yield
    call = getattr(request.node, _CALL_REPORT, None)
    if call is not None and call.failed:
        # the failure's traceback holds the test's frames, and with them its clients: shut, not blamed
        for client in leaked_clients():
            if id(client) not in known:
                _shut(client)
        return
    new = _settle(before)
    if not new:
        return
    # a fixture's value lives until pytest drops the test's fixture values, right after this teardown
    # (an AdminClient, which has no close(), goes then): not a leak
    held = _fixture_held(request)
    clients = [c for c in leaked_clients() if id(c) not in known]
    if clients and all(id(c) in held for c in clients):
        return
    clients = [c for c in clients if id(c) not in held]
    if not clients and before:
        # no client of this test is alive: the new threads are an older client's (librdkafka starts a
        # thread per broker as it learns them from metadata, e.g. a module-scoped fixture's consumer)
        return
    described = "; ".join(_describe(c) for c in clients) or (
        f"no Python object left (a client held by C code; threads {_thread_names(new)})")
    for client in clients:
        _shut(client)
    del clients
    gc.collect()
    report = os.environ.get("SEAWAY_LEAK_REPORT")  # a file: leaks listed there instead of failing (a survey)
    if report:
        with open(report, "a", encoding="utf-8") as f:
            f.write(f"{request.node.nodeid}\t{len(new)}\t{described}\n")
        return
    pytest.fail(f"{request.node.nodeid} left {len(new)} librdkafka thread(s) running after it ended: "
                f"{described}. Close every Producer, Consumer and AdminClient a test makes "
                f"(Consumer.close(), Producer.flush() + close(), or drop the last reference).", pytrace=False)
