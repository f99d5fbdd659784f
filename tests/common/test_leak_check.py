"""The suite's leak check (tests/support/leaks.py) fails the test that leaves a Kafka client open,
and only that one: a pytest run of its own on a file of small tests, each a way tests hold clients."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

CASES = '''
import weakref
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient

KEPT = []
NOWHERE = {"bootstrap.servers": "127.0.0.1:9", "log_level": 0}


def test_kept_in_a_global() -> None:
    KEPT.append(Producer(NOWHERE))


def test_next_test_is_not_blamed() -> None:
    pass


def test_closed() -> None:
    Consumer({**NOWHERE, "group.id": "g"}).close()
    producer = Producer(NOWHERE)
    producer.close()
    KEPT.append(producer)  # closed: its object may live on


def test_dropped() -> None:
    Producer(NOWHERE)
    AdminClient(NOWHERE)


@pytest.fixture
def admin() -> Iterator[AdminClient]:
    yield AdminClient(NOWHERE)  # no close() exists: pytest drops it after the test


def test_fixture_value(admin: AdminClient) -> None:
    assert admin is not None


def test_failing_with_one_open() -> None:
    producer = Producer(NOWHERE)
    assert producer is None


class _Referent:
    pass


class _WeakDelegate:
    """What object proxies in libraries do: ``__class__`` answers for the referent, which may be gone."""

    def __init__(self, target: object) -> None:
        self._target = weakref.ref(target)

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        target = self._target()
        if target is None:
            raise ReferenceError("weakly-referenced object no longer exists")
        return type(target)


def test_leaked_beside_a_dead_weak_proxy() -> None:
    referent = _Referent()
    KEPT.append(_WeakDelegate(referent))
    del referent
    KEPT.append(Producer(NOWHERE))  # the check now walks every object, the dead proxy too


def test_after_the_dead_proxy() -> None:
    pass
'''


@pytest.mark.timeout(120)
def test_a_leaked_client_fails_its_own_test_only(tmp_path: Path) -> None:
    (tmp_path / "test_cases.py").write_text(CASES, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("SEAWAY_LEAK_REPORT", None)
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "tests.support.leaks", "-p", "no:cacheprovider",
                           "-q", "-rA", str(tmp_path / "test_cases.py")], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=100)
    out = done.stdout
    assert "ERROR test_cases.py::test_kept_in_a_global" in out, out
    assert re.search(r"test_cases.py::test_kept_in_a_global left \d+ librdkafka thread\(s\) running after it ended",
                     out), out
    assert "Producer (held by list" in out, out
    assert re.search(r"test_cases.py::test_leaked_beside_a_dead_weak_proxy left \d+ librdkafka thread\(s\)", out), out
    assert "ReferenceError" not in out, out
    for passing in ("test_next_test_is_not_blamed", "test_closed", "test_dropped", "test_fixture_value",
                    "test_after_the_dead_proxy"):
        assert f"PASSED test_cases.py::{passing}" in out, out
        assert f"ERROR test_cases.py::{passing}" not in out, out
    assert "FAILED test_cases.py::test_failing_with_one_open" in out, out
    assert "ERROR test_cases.py::test_failing_with_one_open" not in out, out
    assert "1 failed, 7 passed, 2 errors" in out, out
