"""One unit for every CLI timeout: milliseconds, Kafka's, with ``--timeout-ms``.

``--timeout`` used to be seconds in ``topics``, ``users``, ``produce``, ``consume`` and ``connectors``
and milliseconds in ``groups`` (Kafka's ``kafka-consumer-groups.sh --timeout``). Now every command
takes ``--timeout-ms`` (kafka-console-consumer.sh's name); ``groups`` keeps Kafka's ``--timeout``,
in milliseconds as Kafka's. The old seconds-valued ``--timeout`` is refused with a hint giving the
equivalent, never read as milliseconds (``--timeout 30`` would otherwise be 30 ms, or, worse,
argparse's abbreviation of ``--timeout-ms``).
"""

from __future__ import annotations

import time

import pytest

from tests.cli.clirun import seaway
from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(120)

DOWN = ("--bootstrap-server", "127.0.0.1:1")
# (the command before the option, the command after it): where each command takes its options
COMMANDS: list[tuple[tuple[str, ...], tuple[str, ...]]] = [
    (("topics", "list", *DOWN), ()),
    (("topics", "create", "t", *DOWN), ()),
    (("topics", *DOWN), ("list",)),
    (("users", "list", *DOWN), ()),
    (("produce", "t", *DOWN), ()),
    (("consume", "t", *DOWN), ()),
    (("connectors", "--url", "http://127.0.0.1:1"), ("list",)),
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: "-".join(c[0][:2] + c[1]))
@pytest.mark.parametrize("spelling", [("--timeout", "5"), ("--timeout=5",)], ids=["separate", "equals"])
def test_the_seconds_timeout_is_refused_with_a_hint(command: tuple[tuple[str, ...], tuple[str, ...]],
                                                    spelling: tuple[str, ...]) -> None:
    before, after = command
    done = seaway(*before, *spelling, *after, timeout=30)
    err = done.stderr.decode()
    assert done.returncode == 2, err
    assert "--timeout (seconds) is gone" in err and "write --timeout-ms 5000" in err, err


def test_timeout_ms_is_milliseconds_everywhere() -> None:
    """An unreachable cluster: each command gives up after its --timeout-ms, and says so in ms."""
    for command in (("topics", "list"), ("users", "list"), ("groups", "list"), ("produce", "t"),
                    ("consume", "t")):
        started = time.monotonic()
        done = seaway(*command, "--bootstrap-server", "127.0.0.1:1", "--timeout-ms", "1200", stdin=b"x\n",
                      timeout=30)
        took = time.monotonic() - started
        err = done.stderr.decode().strip().splitlines()
        assert done.returncode == 1 and len(err) == 1, (command, err)
        assert err[0].startswith("Error: no answer from the cluster at 127.0.0.1:1 within 1200 ms"), (command, err)
        assert 1.2 <= took < 15, (command, took)


def test_groups_takes_kafkas_timeout_in_milliseconds_and_timeout_ms_alike(shared_broker: BrokerProcess) -> None:
    for option in ("--timeout", "--timeout-ms"):
        done = seaway("groups", "list", "--bootstrap-server", "127.0.0.1:1", option, "1000", timeout=30)
        assert done.stderr.decode().startswith("Error: no answer from the cluster at 127.0.0.1:1 within 1000 ms")
        ok = seaway("groups", "list", "--bootstrap-server", shared_broker.bootstrap, option, "20000")
        assert ok.returncode == 0, ok.stderr


@pytest.mark.parametrize("value", ["0", "-5", "1.5", "soon"])
def test_timeout_ms_must_be_whole_positive_milliseconds(value: str) -> None:
    for before, after in ((("topics", "list"), ()), (("groups", "list"), ()), (("consume", "t"), ()),
                          (("connectors",), ("list",))):
        done = seaway(*before, f"--timeout-ms={value}", *after, timeout=30)
        err = done.stderr.decode()
        assert done.returncode == 2 and "--timeout-ms" in err and "milliseconds" in err, (before, err)


def test_consume_timeout_ms_is_kafkas_silence_limit(shared_broker: BrokerProcess, topic_name: str) -> None:
    """kafka-console-consumer.sh's --timeout-ms: exit after this long without a record."""
    b = ["--bootstrap-server", shared_broker.bootstrap]
    assert seaway("topics", "create", topic_name, *b).returncode == 0
    assert seaway("produce", topic_name, "--timeout-ms", "20000", *b, stdin=b"a\nb\n").returncode == 0
    started = time.monotonic()
    done = seaway("consume", topic_name, "--from-beginning", "--timeout-ms", "1500", *b)
    assert (done.returncode, done.stdout) == (0, b"a\nb\n"), done.stderr
    assert time.monotonic() - started >= 1.5
