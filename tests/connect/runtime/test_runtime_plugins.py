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


def test_plugins_are_listed_under_kafkas_class_names() -> None:
    """``GET /connector-plugins`` shows what Kafka users and UIs know: Kafka's class names for Seaway's
    versions of Kafka's plugins, the Java name a plugin's entry point declares (Confluent's JDBC), the
    Python path for the rest; every old name still resolves. (It listed Python paths:
    ``seaway.connectors.file.sink.FileStreamSinkConnector``.)"""
    plugins = Plugins()
    listed = {(d.type, d.class_name) for d in plugins.descriptors(include_broken=False)}
    expected = {
        ("sink", "org.apache.kafka.connect.file.FileStreamSinkConnector"),
        ("source", "org.apache.kafka.connect.file.FileStreamSourceConnector"),
        ("source", "org.apache.kafka.connect.mirror.MirrorSourceConnector"),
        ("converter", "org.apache.kafka.connect.json.JsonConverter"),
        ("converter", "org.apache.kafka.connect.storage.StringConverter"),
        ("converter", "org.apache.kafka.connect.converters.ByteArrayConverter"),
        ("header_converter", "org.apache.kafka.connect.storage.SimpleHeaderConverter"),
        ("transformation", "org.apache.kafka.connect.transforms.Cast$Value"),
        ("transformation", "org.apache.kafka.connect.transforms.RegexRouter"),
        ("predicate", "org.apache.kafka.connect.transforms.predicates.TopicNameMatches"),
        ("config_provider", "org.apache.kafka.common.config.provider.FileConfigProvider"),
        ("sink", "io.confluent.connect.jdbc.JdbcSinkConnector"),
        ("converter", "io.confluent.connect.avro.AvroConverter"),
        ("sink", "seaway.connectors.spark_sink.task.SparkParquetSinkConnector"),  # no Java class: its path
    }
    assert expected <= listed, expected - listed
    assert not [name for _, name in listed if name.startswith(("seaway.connectors.file", "seaway.transforms."))]
    avro = [d for d in plugins.descriptors(PluginKind.CONVERTER) if "AvroConverter" in d.class_name]
    assert len(avro) == 1  # two entry points, one plugin
    from seaway.connectors.file import FileStreamSinkConnector
    from seaway.transforms import CastValue

    for name in ("org.apache.kafka.connect.file.FileStreamSinkConnector", "FileStreamSink",
                 "seaway.connectors.file.sink.FileStreamSinkConnector",
                 "seaway.connectors.file.sink:FileStreamSinkConnector"):
        assert plugins.find(PluginKind.CONNECTOR, name) is FileStreamSinkConnector
    for name in ("org.apache.kafka.connect.transforms.Cast$Value", "Cast$Value", "seaway.transforms.cast.CastValue"):
        assert plugins.find(PluginKind.TRANSFORMATION, name) is CastValue


def test_plugin_path_is_not_silently_accepted(caplog: pytest.LogCaptureFixture) -> None:
    """Kafka's ``plugin.path`` (directories of jars) starts the worker, as Kafka's files and images carry it,
    but is said to be unused at start and where a plugin is not found. (It was accepted without a word.)"""
    from seaway.connect.runtime.config import StandaloneConfig

    base = {"key.converter": "StringConverter", "value.converter": "StringConverter",
            "offset.storage.file.filename": "x"}
    with caplog.at_level("WARNING", logger="seaway.connect.runtime.config"):
        quiet = StandaloneConfig(base)
        assert not caplog.records
        config = StandaloneConfig({**base, "plugin.path": "/usr/share/java, /opt/connectors"})
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warned) == 1, warned
    assert warned[0].startswith("plugin.path=/usr/share/java,/opt/connectors is not used")
    assert "plugin.allowlist" in warned[0] and "entry points" in warned[0]
    with pytest.raises(ConfigError) as unknown:
        config.plugins.find(PluginKind.CONNECTOR, "io.debezium.connector.mysql.MySqlConnector")
    assert "plugin.path=/usr/share/java,/opt/connectors is not used" in str(unknown.value)
    with pytest.raises(ConfigError) as without:
        quiet.plugins.find(PluginKind.CONNECTOR, "io.debezium.connector.mysql.MySqlConnector")
    assert "plugin.path" not in str(without.value)
