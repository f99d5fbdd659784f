"""ConfigDef: the typed, documented definition of a plugin's configuration (Kafka's ``ConfigDef``).

Every connector, converter, transformation and predicate returns one from ``config()``. The
table itself is the config engine's (:class:`seaway.configdef.ConfigDef`, shared with the broker
and the registry); Connect's subclass raises :class:`ConfigError` and resolves CLASS values with
the plugin loader (installed plugins and ``plugin.allowlist`` only; a CLASS default written in
code may name any importable class). The runtime uses it three ways:

* :meth:`ConfigDef.parse` turns the string props into typed values or raises a
  :class:`ConfigError` naming the key (plugins usually reach it through ``AbstractConfig``);
* :meth:`ConfigDef.validate` checks *every* key, never stopping at the first error, and runs the
  recommenders: this feeds ``PUT /connector-plugins/{type}/config/validate``;
* :meth:`ConfigDef.config_key_infos` describes each key for ``GET /connector-plugins/{type}/config``.

Example::

    CONFIG_DEF = (ConfigDef()
        .define("file", ConfigType.STRING, NO_DEFAULT, NonEmptyString(), Importance.HIGH,
                "Source filename.")
        .define("batch.size", ConfigType.INT, 2000, Range.at_least(1), Importance.LOW,
                "Records per poll."))
"""

from __future__ import annotations

from typing import ClassVar

from seaway.configdef import Config, ConfigException, ConfigKey, ConfigKeyInfo, ConfigValue
from seaway.configdef import ConfigDef as _EngineConfigDef
from seaway.connect.api.config.class_names import import_class, load_class
from seaway.connect.api.config.types import ClassLoader
from seaway.connect.api.errors import ConfigError

__all__ = ["Config", "ConfigDef", "ConfigKey", "ConfigKeyInfo", "ConfigValue"]


class ConfigDef(_EngineConfigDef):
    """An ordered set of :class:`ConfigKey`; ``define`` returns ``self`` so definitions chain."""

    error: ClassVar[type[ConfigException]] = ConfigError

    def __init__(self, base: _EngineConfigDef | None = None, *, class_loader: ClassLoader = load_class) -> None:
        super().__init__(base, class_loader=class_loader, default_class_loader=import_class)
