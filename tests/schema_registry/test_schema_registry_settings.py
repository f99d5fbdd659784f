"""Settings with Confluent's names, and the curated public surface of the package."""

from __future__ import annotations

import importlib

import pytest
from seaway.schema_registry.compatibility import CompatibilityLevel
from seaway.schema_registry.settings import RegistrySettings, SettingsError


def test_defaults_are_confluents() -> None:
    s = RegistrySettings()
    assert s.kafkastore_topic == "_schemas"
    assert s.listeners == "http://127.0.0.1:8081"  # Confluent: 0.0.0.0; Seaway binds loopback unless told
    assert s.compatibility_level is CompatibilityLevel.BACKWARD
    assert s.first_listener == ("http", "127.0.0.1", 8081)
    assert s.leader_eligibility is True and s.mode_mutability is True


def test_dotted_properties_and_deprecated_avro_level() -> None:
    s = RegistrySettings.from_properties(
        {
            "kafkastore.bootstrap.servers": "b1:9092,b2:9092",
            "kafkastore.topic": "_s2",
            "listeners": "http://127.0.0.1:18081",
            "host.name": "reg-1",
            "avro.compatibility.level": "full_transitive",
            "leader.eligibility": "false",
            "some.unknown.property": "x",
        }
    )
    assert s.kafkastore_bootstrap_servers == "b1:9092,b2:9092"
    assert s.kafkastore_topic == "_s2"
    assert s.compatibility_level is CompatibilityLevel.FULL_TRANSITIVE
    assert s.leader_eligibility is False
    assert s.advertised_url == "http://reg-1:18081"
    assert s.to_properties()["kafkastore.topic"] == "_s2"
    both = RegistrySettings(schema_compatibility_level="none", avro_compatibility_level="full")
    assert both.compatibility_level is CompatibilityLevel.NONE


def test_environment_uses_the_container_image_convention(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCHEMA_REGISTRY_KAFKASTORE_BOOTSTRAP_SERVERS", "kafka:29092")
    monkeypatch.setenv("SCHEMA_REGISTRY_SCHEMA_COMPATIBILITY_LEVEL", "forward")
    s = RegistrySettings()
    assert s.kafkastore_bootstrap_servers == "kafka:29092"
    assert s.compatibility_level is CompatibilityLevel.FORWARD


def test_invalid_level_is_rejected() -> None:
    with pytest.raises(SettingsError, match=r"^Invalid value sideways for configuration schema\.compatibility\.level"):
        RegistrySettings(schema_compatibility_level="sideways")


@pytest.mark.parametrize(
    "module",
    ["errors", "schemas", "compatibility", "store", "log", "service", "settings", "app", "client", "serde"],
)
def test_all_names_exist(module: str) -> None:
    mod = importlib.import_module(f"seaway.schema_registry.{module}")
    exported = mod.__all__
    assert len(set(exported)) == len(exported)
    for name in exported:
        assert hasattr(mod, name), f"{module}.__all__ names missing {name}"


def test_keyword_arguments_win_over_the_environment_and_settings_are_immutable(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCHEMA_REGISTRY_KAFKASTORE_TOPIC", "_from_env")
    monkeypatch.setenv("SCHEMA_REGISTRY_HTTP_REQUEST_MAX_SIZE", "1000")
    s = RegistrySettings(kafkastore_topic="_from_kwargs", ssl_keystore_password=" pw ")
    assert (s.kafkastore_topic, s.http_request_max_size) == ("_from_kwargs", 1000)
    assert s.ssl_keystore_password == "pw" and "pw" not in repr(s)  # trimmed as Kafka trims; never shown
    with pytest.raises(AttributeError):
        s.listeners = "http://x:1"
    moved = s.replace(listeners="http://127.0.0.1:1")
    assert (moved.listeners, moved.kafkastore_topic, s.listeners) == ("http://127.0.0.1:1", "_from_kwargs",
                                                                      "http://127.0.0.1:8081")
    monkeypatch.setenv("SCHEMA_REGISTRY_LEADER_ELIGIBILITY", "maybe")
    with pytest.raises(SettingsError, match=r"^Invalid value maybe for configuration leader\.eligibility: Expected "):
        RegistrySettings()
