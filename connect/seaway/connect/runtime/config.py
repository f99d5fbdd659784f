"""Worker and connector configuration: Kafka's ``WorkerConfig``, ``StandaloneConfig`` and the
``ConnectorConfig`` definitions (the parsed connector value is :mod:`.connector_config`).

Each is a ConfigDef, so one definition feeds parsing, the ``/connector-plugins/{type}/config``
listing and validation errors that name the field. The connector definition is *enriched* per
config, as Kafka's ``ConnectorConfig.enrich`` does: every alias in ``transforms``/``predicates``
adds ``transforms.<alias>.type`` and the SMT's own keys under ``transforms.<alias>.``, so
validation reports them by their full names.

Keys of Seaway's own: ``plugin.allowlist`` (Python paths a config may name besides installed
plugins: see :mod:`seaway.connect.runtime.plugins`), ``rest.request.max.bytes`` (the REST
body limit) and ``rest.request.read.timeout.ms`` (how long a REST client may take to send a
request's head, and then its body: :mod:`seaway.http_timeouts`; Jetty's 30000 by default).

``plugin.path`` (Kafka's directories of plugin jars) is accepted, so Kafka's worker files and
container images (``CONNECT_PLUGIN_PATH``) start, but a worker that has one logs a warning at
start that it is not used (plugins are Python distributions found through their entry points,
Python paths are imported only when listed in ``plugin.allowlist``), and a connector class that
is not found says so too: a Java plugin in that directory will never be loaded, and a silent
acceptance would leave its user guessing. Also accepted and not acted on: in standalone mode, a
connector's ``offsets.storage.topic`` (Kafka ignores it there too). Exactly-once source support (KIP-618:
``exactly.once.support``, ``transaction.boundary``) needs a distributed worker with
``exactly.once.source.support=enabled``; a standalone worker refuses that key with any other
value than ``disabled``, so nobody believes they have a guarantee they do not.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from seaway.connect.api import (
    NO_DEFAULT,
    AbstractConfig,
    CaseInsensitiveValidString,
    ConfigDef,
    ConfigError,
    ConfigType,
    ConfigValue,
    Importance,
    NonEmptyString,
    NonEmptyStringWithoutControlChars,
    Range,
    Validator,
    ValidString,
)
from seaway.connect.api.config.validators import LambdaValidator
from seaway.connect.converters import SimpleHeaderConverter
from seaway.connect.runtime.herder import DEFAULT_REST_REQUEST_MAX_BYTES
from seaway.connect.runtime.plugins import PluginKind, Plugins
from seaway.connect.runtime.worker_security import (
    WorkerClientSecurity,
    check_rest_keys,
    resolve_worker_placeholders,
)
from seaway.connect.runtime.worker_settings import RestSettings, StandaloneSettings, WorkerSettings
from seaway.http_timeouts import DEFAULT_READ_TIMEOUT_MS
from seaway.librdkafka_log import client_logging
from seaway.security.kafka_client import is_security_key

__all__ = [
    "EXACTLY_ONCE_SOURCE_SUPPORT",
    "PLUGIN_ALLOWLIST",
    "REST_REQUEST_MAX_BYTES",
    "REST_REQUEST_READ_TIMEOUT_MS",
    "StandaloneConfig",
    "WorkerConfig",
    "allow_listed",
    "connector_config_def",
    "enrich",
    "sink_config_def",
    "source_config_def",
    "validate_sink_topics",
    "worker_config_def",
]

_H, _M, _L = Importance.HIGH, Importance.MEDIUM, Importance.LOW

log = logging.getLogger(__name__)

PLUGIN_ALLOWLIST = "plugin.allowlist"
REST_REQUEST_MAX_BYTES = "rest.request.max.bytes"
REST_REQUEST_READ_TIMEOUT_MS = "rest.request.read.timeout.ms"


def _loader(plugins: Plugins, *kinds: PluginKind) -> Any:
    """A class loader trying each plugin kind in turn (CLASS keys take aliases)."""
    def load(name: str) -> type:
        errors = []
        for kind in kinds:
            try:
                return plugins.find(kind, name)
            except ConfigError as e:
                errors.append(str(e))
        raise ImportError(errors[0] if errors else f"Class {name} cannot be found")
    return load


def worker_config_def(plugins: Plugins, *, standalone: bool = True) -> ConfigDef:
    d = ConfigDef(class_loader=_loader(plugins, PluginKind.CONVERTER, PluginKind.HEADER_CONVERTER))
    (d.define("bootstrap.servers", ConfigType.LIST, "localhost:9092", None, _H,
              "host:port pairs used to connect to the Kafka-protocol cluster.")
     .define("key.converter", ConfigType.CLASS, NO_DEFAULT, None, _H,
             "Converter for record keys (alias or Kafka class name of an installed converter).")
     .define("value.converter", ConfigType.CLASS, NO_DEFAULT, None, _H, "Converter for record values.")
     .define("header.converter", ConfigType.CLASS, SimpleHeaderConverter, None, _L,
             "HeaderConverter for record headers.")
     .define("task.shutdown.graceful.timeout.ms", ConfigType.LONG, 5000, Range.at_least(0), _L,
             "How long to wait for tasks to shut down gracefully (total, across tasks).")
     .define("offset.flush.interval.ms", ConfigType.LONG, 60000, Range.at_least(0), _L,
             "Interval at which to commit task offsets.")
     .define("offset.flush.timeout.ms", ConfigType.LONG, 5000, Range.at_least(0), _L,
             "Maximum time to wait for records to flush and offsets to commit before cancelling.")
     .define("listeners", ConfigType.LIST, "http://:8083", None, _L, "REST API listener URLs.")
     .define("rest.advertised.host.name", ConfigType.STRING, None, None, _L, "Host name given to other workers.")
     .define("rest.advertised.port", ConfigType.INT, None, None, _L, "Port given to other workers.")
     .define("rest.advertised.listener", ConfigType.STRING, None, None, _L, "http or https.")
     .define("admin.listeners", ConfigType.LIST, None, None, _L,
             "Listeners of /admin/loggers (unset: the REST listeners; empty: none). HTTPS ones take "
             "admin.listeners.https.ssl.* (all or nothing, else the ssl.* keys).")
     .define("rest.extension.classes", ConfigType.LIST, "", None, _L,
             "Only org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension: HTTP Basic "
             "authentication from the JAAS file named by java.security.auth.login.config (a worker key, or "
             "-Djava.security.auth.login.config=... in KAFKA_OPTS).")
     .define("plugin.path", ConfigType.LIST, None, None, _L,
             "Not used (a warning at start says so): plugins are Python distributions found through their entry "
             "points (pip install them); Python paths are imported only when listed in plugin.allowlist.")
     .define(PLUGIN_ALLOWLIST, ConfigType.LIST, "", None, _M,
             "Python paths a connector config may name besides installed plugins (entry points): "
             "module.Class, module:Class, or module.* for every class of a module. Nothing else is imported.")
     .define(REST_REQUEST_MAX_BYTES, ConfigType.INT, DEFAULT_REST_REQUEST_MAX_BYTES, Range.at_least(1), _L,
             "Largest REST request body accepted; a larger one is refused with 413 before it is read.")
     .define(REST_REQUEST_READ_TIMEOUT_MS, ConfigType.INT, DEFAULT_READ_TIMEOUT_MS, Range.at_least(1), _L,
             "How long a REST client may take to send a request's head, and then its body (ms); a slower "
             "one is answered 408 and disconnected (Jetty's idle timeout, 30000, as a deadline).")
     .define("config.providers", ConfigType.LIST, "", None, _L,
             "Names of ConfigProviders; each needs config.providers.<name>.class (+ .param.*).")
     .define("connector.client.config.override.policy", ConfigType.STRING, "All",
             ValidString.in_("All", "None", "Principal"), _M,
             "Which producer/consumer/admin.override.* a connector may set.")
     .define("topic.creation.enable", ConfigType.BOOLEAN, True, None, _L,
             "Let source connectors create their topics (topic.creation.*).")
     .define("topic.tracking.enable", ConfigType.BOOLEAN, True, None, _L, "Track topics used by connectors.")
     .define("topic.tracking.allow.reset", ConfigType.BOOLEAN, True, None, _L, "Allow resetting tracked topics.")
     .define("client.id", ConfigType.STRING, "", None, _L, "Prefix-free client id for the worker's own clients.")
     .define("metrics.sample.window.ms", ConfigType.LONG, 30000, Range.at_least(1), _L,
             "The window of one sample of the /metrics averages, maxima and percentages.")
     .define("metrics.num.samples", ConfigType.INT, 2, Range.at_least(1), _L,
             "Samples kept for the /metrics averages, maxima and percentages."))
    if standalone:
        d.define("offset.storage.file.filename", ConfigType.STRING, NO_DEFAULT, None, _H,
                 "File to store source connector offsets in.")
    return d


def allow_listed(plugins: Plugins, props: Mapping[str, Any]) -> None:
    """Give ``plugins`` the ``plugin.allowlist`` before anything is parsed (converters may be on it)."""
    raw = props.get(PLUGIN_ALLOWLIST)
    entries = raw if isinstance(raw, list | tuple) else str(raw or "").split(",")
    try:
        plugins.allow(str(e) for e in entries)
    except ImportError as e:
        raise ConfigError.invalid(PLUGIN_ALLOWLIST, raw, str(e)) from None


class WorkerConfig(AbstractConfig):
    """A worker's configuration: parsed and checked once, at start, into the frozen values of
    :mod:`.worker_settings` (``common``, ``rest``, ``client_security``) that the runtime reads."""

    STANDALONE = False
    client_security: WorkerClientSecurity
    common: WorkerSettings
    rest: RestSettings

    def __init__(self, props: Mapping[str, Any], plugins: Plugins | None = None) -> None:
        self.plugins = plugins or Plugins()
        allow_listed(self.plugins, props)
        props = resolve_worker_placeholders(props, self.plugins)  # ${file:...} secrets, as Kafka's worker
        super().__init__(worker_config_def(self.plugins, standalone=self.STANDALONE), props)
        self._check_security()
        self._settle()
        self._unused_plugin_path()

    def _settle(self) -> None:
        """The typed values, built from the parsed (and so validated) settings."""
        self.common = WorkerSettings.of(self)
        self.rest = RestSettings.of(self)

    def _unused_plugin_path(self) -> None:
        """Say that ``plugin.path`` is not used, at start and where a plugin is not found."""
        paths = self.common.plugin_path
        if paths:
            self.plugins.unused_plugin_path = ",".join(paths)
            log.warning("plugin.path=%s is not used: Seaway does not load Java plugins from directories. Install "
                        "a plugin's Python distribution into the worker's environment (its entry points make it "
                        "known), or list Python paths in plugin.allowlist", self.plugins.unused_plugin_path)

    def _check_security(self) -> None:
        """Refuse to start on security settings Seaway cannot honour (ConfigError naming the key)."""
        check_rest_keys(self.originals(), [str(c) for c in self.get("rest.extension.classes")])
        self.client_security = WorkerClientSecurity(self.originals())

    def security_client_config(self) -> dict[str, Any]:
        """The worker's own clients' security settings (top-level keys), in librdkafka's names, and
        their librdkafka lines sent through Python logging (:mod:`seaway.librdkafka_log`)."""
        return {**self.client_security.translated, **client_logging()}

    def admin_client_config(self) -> dict[str, Any]:
        """An admin client of the worker: bootstrap, the top-level security settings, then ``admin.*``."""
        return self.client_security.translate(
            {"bootstrap.servers": self.bootstrap_servers, **self.client_security.top_level,
             **self.client_security.prefixed("admin.")}, "admin.")

    @property
    def bootstrap_servers(self) -> str:
        return self.common.bootstrap

    def client_props(self, prefix: str, *, security: bool = True) -> dict[str, str]:
        """Worker-level ``producer.*`` / ``consumer.*`` / ``admin.*`` (prefix stripped).

        Values are trimmed, as Kafka's clients trim every value they parse with their ConfigDef
        (librdkafka does not, and a properties file keeps a value's trailing white space).
        ``security=False`` leaves out the security settings (the worker's own clients take the
        top-level ones: :mod:`seaway.connect.runtime.worker_security`). Security settings are as
        the user wrote them: translate the merged config with ``client_security.translate``.
        """
        props = self.client_security.prefixed(prefix)
        return props if security else {k: v for k, v in props.items() if not is_security_key(k)}

    def converter_props(self, key: str) -> dict[str, Any]:
        return self.originals_with_prefix(key + ".")

    def provider_configs(self) -> dict[str, tuple[str, dict[str, Any]]]:
        """``name -> (class name, params)`` of every configured config provider."""
        out = {}
        for name in self.common.config_providers:
            cls = self.originals().get(f"config.providers.{name}.class")
            if not cls:
                raise ConfigError(f"Missing config.providers.{name}.class", name=f"config.providers.{name}.class")
            out[name] = (str(cls), self.originals_with_prefix(f"config.providers.{name}.param."))
        return out

    def worker_id(self) -> str:
        _, host, port = self.rest.advertised()
        return f"{host}:{port}"


EXACTLY_ONCE_SOURCE_SUPPORT = "exactly.once.source.support"


class StandaloneConfig(WorkerConfig):
    """Standalone mode: adds the required ``offset.storage.file.filename``.

    ``exactly.once.source.support`` is a distributed worker's key: Kafka's standalone worker
    does not know it (and would only warn); here any value but ``disabled`` is an error
    naming it, because a standalone worker has no transactions and no fencing to offer.
    """

    STANDALONE = True
    standalone: StandaloneSettings

    def __init__(self, props: Mapping[str, Any], plugins: Plugins | None = None) -> None:
        value = props.get(EXACTLY_ONCE_SOURCE_SUPPORT)
        if value is not None and str(value).strip().lower() != "disabled":
            raise ConfigError.invalid(EXACTLY_ONCE_SOURCE_SUPPORT, value,
                                      "exactly-once source support is only available in distributed mode "
                                      "(seaway connect distributed), as in Kafka Connect")
        super().__init__(props, plugins)

    def _settle(self) -> None:
        super()._settle()
        self.standalone = StandaloneSettings.of(self)


# -- connector configs -----------------------------------------------------------------------

def _unique_aliases(name: str, value: Any) -> None:
    if value and len(set(value)) != len(value):
        raise ConfigError.invalid(name, value, "Duplicate alias provided.")


def connector_config_def(plugins: Plugins) -> ConfigDef:
    d = ConfigDef(class_loader=_loader(plugins, PluginKind.CONVERTER, PluginKind.HEADER_CONVERTER))
    unique = LambdaValidator.with_(_unique_aliases, lambda: "unique transformation aliases")
    tolerance = CaseInsensitiveValidString.in_("none", "all")
    (d.define("name", ConfigType.STRING, NO_DEFAULT, NonEmptyStringWithoutControlChars(), _H,
              "Globally unique name to use for this connector.", "Common", 1, display_name="Connector name")
     .define("connector.class", ConfigType.STRING, NO_DEFAULT, None, _H,
             "Name or alias of an installed connector (e.g. FileStreamSource), or a Python path listed in the "
             "worker's plugin.allowlist.", "Common", 2,
             display_name="Connector class")
     .define("tasks.max", ConfigType.INT, 1, Range.at_least(1), _H, "Maximum number of tasks.", "Common", 3,
             display_name="Tasks max")
     .define("tasks.max.enforce", ConfigType.BOOLEAN, True, None, _L,
             "Fail if the connector generates more task configs than tasks.max.", "Common", 4)
     .define("key.converter", ConfigType.CLASS, None, None, _L, "Overrides the worker's key.converter.",
             "Common", 5)
     .define("value.converter", ConfigType.CLASS, None, None, _L, "Overrides the worker's value.converter.",
             "Common", 6)
     .define("header.converter", ConfigType.CLASS, None, None, _L,
             "Overrides the worker's header.converter.", "Common", 7)
     .define("config.action.reload", ConfigType.STRING, "restart", CaseInsensitiveValidString.in_("none", "restart"),
             _L, "Restart the connector when an external config provider's values change (or none).",
             "Common", 8)
     .define("transforms", ConfigType.LIST, "", unique, _L, "Aliases of the transformations to apply.",
             "Transforms", 0)
     .define("predicates", ConfigType.LIST, "", unique, _L, "Aliases of the predicates used by transforms.",
             "Predicates", 0)
     .define("errors.retry.timeout", ConfigType.LONG, 0, Range.at_least(-1), _M,
             "Max ms to retry a failed operation; -1 retries forever, 0 not at all.", "Error Handling", 1)
     .define("errors.retry.delay.max.ms", ConfigType.LONG, 60000, Range.at_least(1), _M,
             "Max ms between consecutive retries (jitter is added).", "Error Handling", 2)
     .define("errors.tolerance", ConfigType.STRING, "none", tolerance, _M,
             "none: an error fails the task; all: problematic records are skipped.", "Error Handling", 3)
     .define("errors.log.enable", ConfigType.BOOLEAN, False, None, _M,
             "Log each error and the failed operation.", "Error Handling", 4)
     .define("errors.log.include.messages", ConfigType.BOOLEAN, False, None, _M,
             "Include the record in the error log.", "Error Handling", 5))
    return d


def sink_config_def(plugins: Plugins) -> ConfigDef:
    d = connector_config_def(plugins)
    (d.define("topics", ConfigType.LIST, "", None, _H, "Topics to consume.", "Common", 4)
     .define("topics.regex", ConfigType.STRING, "", None, _H, "Regex of topics to consume.", "Common", 4)
     .define("errors.deadletterqueue.topic.name", ConfigType.STRING, "", None, _M,
             "Dead letter queue topic for records that failed conversion or transformation.", "Error Handling", 6)
     .define("errors.deadletterqueue.topic.replication.factor", ConfigType.SHORT, 3, None, _M,
             "Replication factor when creating the dead letter queue topic.", "Error Handling", 7)
     .define("errors.deadletterqueue.context.headers.enable", ConfigType.BOOLEAN, False, None, _M,
             "Add __connect.errors.* headers describing the error to DLQ records.", "Error Handling", 8))
    return d


def _at_least_zero_or_null(name: str, value: Any) -> None:
    if value is not None and value < 0:
        raise ConfigError.invalid(name, value, "Value must be at least 0")


def source_config_def(plugins: Plugins) -> ConfigDef:
    d = connector_config_def(plugins)
    (d.define("topic.creation.groups", ConfigType.LIST, "", None, _L, "Topic creation groups besides default.",
              "Topic Creation", 0)
     .define("topic.creation.default.replication.factor", ConfigType.INT, None, None, _L,
             "Replication factor of topics this connector creates (-1: broker default).", "Topic Creation", 1)
     .define("topic.creation.default.partitions", ConfigType.INT, None, None, _L,
             "Partitions of topics this connector creates (-1: broker default).", "Topic Creation", 2)
     .define("exactly.once.support", ConfigType.STRING, "requested",
             CaseInsensitiveValidString.in_("requested", "required"), _M,
             "requested or required. With 'required', creating or validating the connector fails unless this "
             "worker has exactly.once.source.support=enabled and the connector declares it can give exactly-once "
             "delivery with this config (SourceConnector.exactly_once_support).", "Exactly Once Support", 1,
             display_name="Exactly once support")
     .define("transaction.boundary", ConfigType.STRING, "poll",
             CaseInsensitiveValidString.in_("poll", "interval", "connector"), _M,
             "With exactly-once support: 'poll' commits a transaction per batch the task returns from poll(), "
             "'interval' every transaction.boundary.interval.ms, 'connector' when the task asks through its "
             "TransactionContext (the connector must support it).", "Exactly Once Support", 2,
             display_name="Transaction Boundary")
     .define("transaction.boundary.interval.ms", ConfigType.LONG, None,
             LambdaValidator(_at_least_zero_or_null, "[0,...]"), _L,
             "With transaction.boundary=interval: how often to commit (default: the worker's "
             "offset.flush.interval.ms).", "Exactly Once Support", 3, display_name="Transaction boundary interval")
     .define("offsets.storage.topic", ConfigType.STRING, None, NonEmptyString(), _L,
             "A separate offsets topic for this connector (created compacted if missing); empty: the worker's "
             "offset.storage.topic. Distributed mode only: standalone mode ignores it, as Kafka does.",
             "offsets.topic", 1, display_name="Offsets topic"))
    return d


def enrich(plugins: Plugins, base: ConfigDef, props: Mapping[str, Any]) -> ConfigDef:
    """``base`` plus, per transform/predicate alias, its type key and its own keys (prefixed)."""
    d = ConfigDef(base)
    defined_predicates = _aliases(props.get("predicates"))
    for section, kind in (("transforms", PluginKind.TRANSFORMATION), ("predicates", PluginKind.PREDICATE)):
        group_name = "Transforms" if section == "transforms" else "Predicates"
        for alias in _aliases(props.get(section)):
            prefix = f"{section}.{alias}."
            group = f"{group_name}: {alias}"
            negate_alone = section == "transforms" and prefix + "negate" in props and prefix + "predicate" not in props
            d.define(prefix + "type", ConfigType.STRING, NO_DEFAULT, _PluginExists(plugins, kind, prefix, negate_alone),
                     _H, f"Class for the '{alias}' {kind.label}.", group, -2,
                     display_name=f"{group_name} type for {alias}")
            if section == "transforms":
                d.define(prefix + "predicate", ConfigType.STRING, None, _PredicateDefined(defined_predicates), _M,
                         "Alias of a predicate deciding when this transformation applies.", group, -1)
                d.define(prefix + "negate", ConfigType.BOOLEAN, False, None, _M,
                         "Apply the transformation when the predicate does NOT match.", group, 0)
            type_name = props.get(prefix + "type")
            if not type_name:
                continue
            try:
                child = plugins.new_instance(kind, str(type_name)).config()
            except Exception:
                continue
            d.embed(prefix, group, 1, child)
    return d


def _aliases(raw: Any) -> list[str]:
    return list(dict.fromkeys(a.strip() for a in str(raw or "").split(",") if a.strip()))


class _PluginExists(Validator):
    """The type names a plugin; for a transform, also Kafka's check that ``negate`` comes with a ``predicate``."""

    def __init__(self, plugins: Plugins, kind: PluginKind, prefix: str = "", negate_alone: bool = False) -> None:
        self._plugins, self._kind, self._prefix, self._negate_alone = plugins, kind, prefix, negate_alone

    def ensure_valid(self, name: str, value: Any) -> None:
        if value is None:
            return
        if self._negate_alone:
            raise ConfigError(f"Config '{self._prefix}negate' was provided but there is no config "
                              f"'{self._prefix}predicate' defining a predicate to be negated.", name=name, value=value)
        try:
            self._plugins.find(self._kind, str(value))
        except ConfigError as e:
            raise ConfigError.invalid(name, value, str(e)) from None

    def __str__(self) -> str:
        return f"a {self._kind.label} plugin"


class _PredicateDefined(Validator):
    """A transform's ``predicate`` must be one of the ``predicates`` aliases (Kafka finds out only when the
    task starts, failing it; a 400 naming the key is kinder and loses nothing: such a config never runs)."""

    def __init__(self, defined: list[str]) -> None:
        self._defined = defined

    def ensure_valid(self, name: str, value: Any) -> None:
        if value and value not in self._defined:
            raise ConfigError.invalid(name, value, "not one of the aliases in 'predicates' "
                                      f"({', '.join(self._defined) or 'none defined'})")

    def __str__(self) -> str:
        return "an alias listed in 'predicates'"


def validate_sink_topics(props: Mapping[str, Any], values: dict[str, ConfigValue]) -> None:
    """SinkConnectorConfig's cross-key checks, added to the ``topics`` / ``topics.regex`` values."""
    topics = [t.strip() for t in str(props.get("topics") or "").split(",") if t.strip()]
    regex = str(props.get("topics.regex") or "").strip()
    errors: list[str] = []
    if topics and regex:
        errors.append("topics and topics.regex are mutually exclusive options, but both are set.")
    elif not topics and not regex:
        errors.append("Must configure one of topics or topics.regex")
    for err in errors:
        for key in ("topics", "topics.regex"):
            values.setdefault(key, ConfigValue(key, props.get(key))).add_error_message(err)
    dlq = str(props.get("errors.deadletterqueue.topic.name") or "").strip()
    if dlq and dlq in topics:
        key = "errors.deadletterqueue.topic.name"
        values.setdefault(key, ConfigValue(key, dlq)).add_error_message(
            f"The DLQ topic '{dlq}' may not be included in the list of topics ('topics'='{','.join(topics)}') "
            "consumed by the connector")
