"""max.connections, max.connections.per.ip and max.connections.per.ip.overrides (issue 14, item 4)."""

from __future__ import annotations

import socket
import struct
from contextlib import ExitStack
from pathlib import Path

import pytest
from seaway.broker.config import BrokerConfig, ConfigError

from tests.broker.limits.wire import API_VERSIONS_V0, api_versions, closed_by_peer, connect, recv_exactly
from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(60)


def _served(sock: socket.socket, within: float) -> bool:
    sock.settimeout(within)
    try:
        api_versions(sock)
    except (TimeoutError, ConnectionError):
        return False
    return True


def test_connection_limits_per_address_and_in_total(tmp_path: Path) -> None:
    overrides = {
        "max.connections": "6",
        "max.connections.per.ip": "3",
        "max.connections.per.ip.overrides": "127.0.0.2:4",
    }
    with BrokerProcess(tmp_path / "b", overrides) as broker, ExitStack() as stack:
        first = [stack.enter_context(connect(broker.bootstrap)) for _ in range(3)]
        assert all(_served(sock, 5) for sock in first)
        # A fourth from 127.0.0.1 is over max.connections.per.ip: closed at once, as Kafka does.
        extra = stack.enter_context(connect(broker.bootstrap))
        assert closed_by_peer(extra, 5)
        # 127.0.0.2 has an override of 4, but max.connections=6 admits only 3 more.
        second = [stack.enter_context(connect(broker.bootstrap, source="127.0.0.2")) for _ in range(3)]
        assert all(_served(sock, 5) for sock in second)
        waiting = stack.enter_context(connect(broker.bootstrap, source="127.0.0.2"))  # in the backlog
        waiting.sendall(API_VERSIONS_V0)
        waiting.settimeout(1.5)
        with pytest.raises(TimeoutError):
            waiting.recv(1)  # a 7th connection is not served with max.connections=6
        first.pop().close()  # a slot frees: the waiting connection is accepted and served
        waiting.settimeout(5)
        (size,) = struct.unpack(">i", recv_exactly(waiting, 4))
        assert struct.unpack(">i", recv_exactly(waiting, size)[:4]) == (1,)
        # 127.0.0.2 now holds 4 connections, its override's limit.
        first.pop().close()
        over = stack.enter_context(connect(broker.bootstrap, source="127.0.0.2"))
        assert closed_by_peer(over, 5)
        assert _served(first[0], 5)  # the connections within the limits were never disturbed
        assert broker.alive


@pytest.mark.parametrize(
    ("props", "named"),
    [
        ({"max.connections.per.ip": "0"}, "max.connections.per.ip.overrides"),
        ({"max.connections.per.ip.overrides": "host-without-count"}, "max.connections.per.ip.overrides"),
        ({"max.connections.per.ip.overrides": "10.0.0.1:-3"}, "max.connections.per.ip.overrides"),
        ({"max.connections": "-1"}, "max.connections"),
        ({"socket.request.max.bytes": "2000000", "queued.max.request.bytes": "1000000"},
         "queued.max.request.bytes"),
    ],
)
def test_bad_limit_configs_are_refused_naming_the_key(props: dict[str, str], named: str) -> None:
    with pytest.raises(ConfigError, match=named.replace(".", r"\.")):
        BrokerConfig(props)


def test_limit_configs_parse_as_kafka_does() -> None:
    config = BrokerConfig({"max.connections.per.ip": "0",
                           "max.connections.per.ip.overrides": "broker-host:100, 127.0.0.1:200,[::1]:5"})
    assert config.max_connections_per_ip_overrides_map == {"broker-host": 100, "127.0.0.1": 200, "::1": 5}
    defaults = BrokerConfig({})
    assert defaults.max_connections == defaults.max_connections_per_ip == 2147483647
    assert defaults.queued_max_request_bytes == 268435456
    assert BrokerConfig({"queued.max.request.bytes": "-1"}).queued_max_request_bytes == -1
