"""DistributedConfig (Kafka's names and defaults, CONNECT_* environment variables) and request signing."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest
from seaway.connect.api import ConfigError
from seaway.connect.runtime.distributed.config import DistributedConfig, props_from_env
from seaway.connect.runtime.distributed.signing import generate_key, sign, signature_headers, verify
from seaway.connect.runtime.herder import BadRequestError, HerderError

BASE = {"group.id": "g", "config.storage.topic": "c", "offset.storage.topic": "o", "status.storage.topic": "s",
        "key.converter": "StringConverter", "value.converter": "StringConverter"}


def test_defaults_are_kafkas() -> None:
    c = DistributedConfig(BASE)
    assert c.get("session.timeout.ms") == 10000 and c.get("heartbeat.interval.ms") == 3000
    assert c.get("rebalance.timeout.ms") == 60000 and c.get("scheduled.rebalance.max.delay.ms") == 300000
    assert c.get("offset.storage.partitions") == 25 and c.get("status.storage.partitions") == 5
    assert c.get("config.storage.replication.factor") == 3 and c.get("connect.protocol") == "sessioned"
    assert c.get("inter.worker.key.ttl.ms") == 3600000
    assert c.client_id("configs") == "g-configs"


def test_required_keys_and_validation() -> None:
    with pytest.raises(ConfigError, match=r"group\.id"):
        DistributedConfig({k: v for k, v in BASE.items() if k != "group.id"})
    with pytest.raises(ConfigError, match=r"connect\.protocol"):
        DistributedConfig({**BASE, "connect.protocol": "fast"})
    with pytest.raises(ConfigError, match=r"offset\.storage\.partitions"):
        DistributedConfig({**BASE, "offset.storage.partitions": "0"})
    assert DistributedConfig({**BASE, "offset.storage.partitions": "-1"}).get("offset.storage.partitions") == -1
    with pytest.raises(ConfigError, match="verification"):
        DistributedConfig({**BASE, "inter.worker.signature.algorithm": "HmacSHA512"})


def test_environment_variables_in_the_container_convention() -> None:
    env = {"CONNECT_BOOTSTRAP_SERVERS": "broker:9092", "CONNECT_GROUP_ID": "from-env",
           "CONNECT_REST_ADVERTISED_HOST_NAME": "w1", "CONNECT_CONSUMER_MAX__POLL__RECORDS": "5",
           "CONNECT_LOG4J_ROOT_LOGLEVEL": "WARN", "PATH": "/bin"}
    assert props_from_env(env) == {"bootstrap.servers": "broker:9092", "group.id": "from-env",
                                   "rest.advertised.host.name": "w1", "consumer.max_poll_records": "5"}
    c = DistributedConfig.from_sources(BASE, env)
    assert c.group_id == "from-env" and c.bootstrap_servers == "broker:9092"
    assert c.advertised_url() == "http://w1:8083"


def test_signatures_are_hmac_of_the_body_and_verified() -> None:
    key = generate_key("HmacSHA256")
    assert len(key.key) == 32
    body = b'[{"a":"b"}]'
    expected = base64.b64encode(hmac.new(key.key, body, hashlib.sha256).digest()).decode()
    assert sign(key.key, "HmacSHA256", body) == expected
    headers = signature_headers(key, "HmacSHA256", body)
    assert headers == {"X-Connect-Authorization": expected, "X-Connect-Request-Signature-Algorithm": "HmacSHA256"}
    verify(key, ["HmacSHA256"], body, expected, "HmacSHA256")
    with pytest.raises(BadRequestError, match="missing required signature"):
        verify(key, ["HmacSHA256"], body, None, None)
    with pytest.raises(BadRequestError, match="HmacMD5"):
        verify(key, ["HmacSHA256"], body, expected, "HmacMD5")
    with pytest.raises(HerderError) as no_key:
        verify(None, ["HmacSHA256"], body, expected, "HmacSHA256")
    assert no_key.value.status == 503
    with pytest.raises(HerderError) as forged:
        verify(key, ["HmacSHA256"], body + b" ", expected, "HmacSHA256")
    assert forged.value.status == 403 and str(forged.value) == "Internal request contained invalid signature."
