"""Plugin discovery through entry points, aliases, Kafka class names, and broken plugins."""

from __future__ import annotations

from pathlib import Path

import pytest
from seaway.connect.api import ConfigError
from seaway.connect.converters import ByteArrayConverter, JsonConverter, StringConverter
from seaway.connect.runtime.config_providers import FileConfigProvider
from seaway.connect.runtime.plugins import PluginKind, Plugins

from tests.connect.runtime.rt_support import MODULE, CollectingSinkConnector, CounterConnector


def _broken_distribution(root: Path) -> None:
    info = root / "seaway_broken_plugin-0.3.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: seaway-broken-plugin\nVersion: 0.3\n")
    (info / "entry_points.txt").write_text(
        "[seaway.connectors]\nBrokenSource = seaway_missing_module_xyz:BrokenSourceConnector\n"
        f"Counter = {MODULE}:CounterConnector\n")


def test_entry_points_aliases_and_broken_plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _broken_distribution(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    plugins = Plugins()
    # (other installed distributions may have broken plugins too: look at ours only)
    broken = [d for d in plugins.descriptors(PluginKind.CONNECTOR) if d.load_error and "BrokenSource" in d.aliases]
    assert [(d.class_name, d.type, d.load_error is not None and "seaway_missing_module_xyz" in d.load_error)
            for d in broken] == [("seaway_missing_module_xyz.BrokenSourceConnector", "source", True)]
    for name in ("BrokenSource", "seaway_missing_module_xyz:BrokenSourceConnector"):
        with pytest.raises(ConfigError, match="failed to load: ModuleNotFoundError"):
            plugins.find(PluginKind.CONNECTOR, name)
    counter = [d for d in plugins.descriptors(PluginKind.CONNECTOR, include_broken=False)
               if d.class_name.endswith("CounterConnector")]
    assert len(counter) == 1 and counter[0].type == "source" and counter[0].version == "1.0"
    for name in ("Counter", "CounterConnector", f"{MODULE}.CounterConnector", f"{MODULE}:CounterConnector"):
        assert plugins.find(PluginKind.CONNECTOR, name) is CounterConnector
    # importable, but neither an entry point nor allowlisted: refused (and never imported)
    with pytest.raises(ConfigError, match=r"plugin\.allowlist"):
        plugins.find(PluginKind.CONNECTOR, f"{MODULE}:CollectingSinkConnector")
    plugins.allow([f"{MODULE}.*"])
    assert plugins.find(PluginKind.CONNECTOR, f"{MODULE}:CollectingSinkConnector") is CollectingSinkConnector


def test_a_distribution_installed_later_is_found_without_a_restart(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The installed set is rescanned when a sys.path directory changes (pip adds a .dist-info)."""
    monkeypatch.syspath_prepend(str(tmp_path))
    plugins = Plugins()
    with pytest.raises(ConfigError, match="Failed to find"):
        plugins.find(PluginKind.CONNECTOR, "BrokenSource")
    _broken_distribution(tmp_path)  # changes tmp_path's mtime, as pip install does to site-packages
    with pytest.raises(ConfigError, match="failed to load"):
        plugins.find(PluginKind.CONNECTOR, "BrokenSource")
    assert plugins.find(PluginKind.CONNECTOR, "Counter") is CounterConnector


def test_builtin_converters_and_providers_resolve_by_kafka_names() -> None:
    plugins = Plugins()
    assert plugins.find(PluginKind.CONVERTER, "org.apache.kafka.connect.json.JsonConverter") is JsonConverter
    assert plugins.find(PluginKind.CONVERTER, "org.apache.kafka.connect.storage.StringConverter") is StringConverter
    assert plugins.find(PluginKind.CONVERTER,
                        "org.apache.kafka.connect.converters.ByteArrayConverter") is ByteArrayConverter
    assert plugins.find(PluginKind.CONVERTER, "ByteArray") is ByteArrayConverter
    assert plugins.find(PluginKind.CONFIG_PROVIDER,
                        "org.apache.kafka.common.config.provider.FileConfigProvider") is FileConfigProvider
    with pytest.raises(ConfigError, match="Failed to find any class that implements Converter"):
        plugins.find(PluginKind.CONVERTER, "NoSuchConverter")
    with pytest.raises(ConfigError, match="Failed to find any class that implements Converter"):
        plugins.find(PluginKind.CONVERTER, f"{MODULE}:CounterConnector")
    plugins.allow([f"{MODULE}.CounterConnector"])
    with pytest.raises(ConfigError, match="is not a Converter"):
        plugins.find(PluginKind.CONVERTER, f"{MODULE}:CounterConnector")
    for malformed in ("..x", "a..b", "/tmp/x.Y", "x.", ":X", "a.b:", "class.X"):
        with pytest.raises(ConfigError, match="Failed to find"):
            plugins.find(PluginKind.CONNECTOR, malformed)


def test_registered_plugins_without_entry_points() -> None:
    plugins = Plugins(discover=False)
    plugins.register(PluginKind.CONNECTOR, CounterConnector)
    assert plugins.find(PluginKind.CONNECTOR, "Counter") is CounterConnector
    assert [d.type for d in plugins.descriptors()] == ["source"]
    with pytest.raises(TypeError):
        plugins.register(PluginKind.CONVERTER, CounterConnector)


def test_smt_aliases_never_import_a_module_a_config_names() -> None:
    """``seaway.transforms.resolve`` knows the built-ins by Kafka name, alias or path, and nothing else."""
    import sys

    from seaway.transforms import CastValue, resolve

    assert resolve("seaway.transforms.cast:CastValue") is CastValue
    for name in ("this.X", "this:X", "..x"):
        with pytest.raises(ImportError):
            resolve(name)
    assert "this" not in sys.modules
