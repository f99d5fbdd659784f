"""ConfigDef: the typed, documented definition of a plugin's configuration (Kafka's ``ConfigDef``).

Every connector, converter, transformation and predicate returns one from ``config()``. The
runtime uses it three ways:

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

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from seaway.connect.api.config.class_names import import_class
from seaway.connect.api.config.types import (
    NO_DEFAULT,
    ClassLoader,
    ConfigType,
    Importance,
    Width,
    convert_to_string,
    load_class,
    parse_value,
)
from seaway.connect.api.config.validators import Recommender, Validator
from seaway.connect.api.errors import ConfigError

__all__ = ["Config", "ConfigDef", "ConfigKey", "ConfigKeyInfo", "ConfigValue"]


@dataclass(frozen=True, slots=True)
class ConfigKeyInfo:
    """A key as ``GET /connector-plugins/{type}/config`` shows it (Kafka's ``ConfigKeyInfo``)."""

    name: str
    type: str
    required: bool
    default_value: str | None
    importance: str
    documentation: str | None
    group: str | None
    order: int
    width: str
    display_name: str
    dependents: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """The REST JSON object, with Kafka's field names."""
        return {"name": self.name, "type": self.type, "required": self.required,
                "default_value": self.default_value, "importance": self.importance,
                "documentation": self.documentation, "group": self.group, "order": self.order,
                "width": self.width, "display_name": self.display_name, "dependents": list(self.dependents)}


@dataclass(frozen=True, slots=True)
class ConfigKey:
    """One defined key. ``default`` is already parsed; ``NO_DEFAULT`` means required."""

    name: str
    type: ConfigType
    default: Any
    validator: Validator | None
    importance: Importance
    documentation: str
    group: str | None = None
    order_in_group: int = -1
    width: Width = Width.NONE
    display_name: str | None = None
    dependents: tuple[str, ...] = ()
    recommender: Recommender | None = None
    internal: bool = False

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT

    @property
    def required(self) -> bool:
        return self.default is NO_DEFAULT

    def info(self) -> ConfigKeyInfo:
        return ConfigKeyInfo(
            name=self.name, type=self.type.value, required=self.required,
            default_value=convert_to_string(self.default, self.type) if self.has_default else None,
            importance=self.importance.value, documentation=self.documentation, group=self.group,
            order=self.order_in_group, width=self.width.value,
            display_name=self.display_name or self.name, dependents=self.dependents)


@dataclass(slots=True)
class ConfigValue:
    """The validation result of one key (Kafka's ``ConfigValue``)."""

    name: str
    value: Any = None
    recommended_values: list[Any] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    visible: bool = True

    def add_error_message(self, message: str) -> None:
        self.errors.append(message)


@dataclass(slots=True)
class Config:
    """What ``Connector.validate`` returns: one :class:`ConfigValue` per key."""

    config_values: list[ConfigValue]

    @property
    def error_count(self) -> int:
        return sum(len(v.errors) for v in self.config_values)


def _missing(name: str) -> ConfigError:
    return ConfigError(f'Missing required configuration "{name}" which has no default value.', name=name)


class _PrefixedRecommender(Recommender):
    """A child's recommender seen through :meth:`ConfigDef.embed`: strips the prefix from names."""

    def __init__(self, prefix: str, inner: Recommender) -> None:
        self._prefix, self._inner = prefix, inner

    def _unprefixed(self, parsed: Mapping[str, Any]) -> dict[str, Any]:
        n = len(self._prefix)
        return {k[n:]: v for k, v in parsed.items() if k.startswith(self._prefix)}

    def valid_values(self, name: str, parsed_config: Mapping[str, Any]) -> list[Any]:
        return self._inner.valid_values(name[len(self._prefix):], self._unprefixed(parsed_config))

    def visible(self, name: str, parsed_config: Mapping[str, Any]) -> bool:
        return self._inner.visible(name[len(self._prefix):], self._unprefixed(parsed_config))


class ConfigDef:
    """An ordered set of :class:`ConfigKey`; ``define`` returns ``self`` so definitions chain."""

    def __init__(self, base: ConfigDef | None = None, *, class_loader: ClassLoader = load_class) -> None:
        self._keys: dict[str, ConfigKey] = {}
        self._class_loader: ClassLoader = class_loader
        if base is not None:
            self._extend(base)

    def _extend(self, base: ConfigDef) -> None:
        """Start from ``base``: its keys, and its class loader (a copy's CLASS keys resolve as the original's)."""
        self._keys.update(base._keys)
        self._class_loader = base._class_loader

    def define(self, name: str, type: ConfigType, default: Any = NO_DEFAULT,
               validator: Validator | None = None, importance: Importance = Importance.MEDIUM,
               documentation: str = "", group: str | None = None, order_in_group: int = -1,
               width: Width = Width.NONE, display_name: str | None = None,
               dependents: Iterable[str] = (), recommender: Recommender | None = None,
               *, internal: bool = False) -> ConfigDef:
        """Add a key; the default is parsed and validated now, so a bad one fails at import time."""
        if name in self._keys:
            raise ConfigError(f"Configuration {name} is defined twice.", name=name)
        if default is not NO_DEFAULT:
            # a default is written in code, so a CLASS default may be any importable path
            loader = import_class if type is ConfigType.CLASS and isinstance(default, str) else self._class_loader
            default = parse_value(name, default, type, loader)
            if validator is not None and default is not None:
                validator.ensure_valid(name, default)
        self._keys[name] = ConfigKey(name, type, default, validator, importance, documentation, group,
                                     order_in_group, width, display_name, tuple(dependents), recommender,
                                     internal)
        return self

    def define_internal(self, name: str, type: ConfigType, default: Any = NO_DEFAULT,
                        importance: Importance = Importance.LOW, documentation: str = "") -> ConfigDef:
        """A key for the framework's own use: parsed like others, hidden from ``config_key_infos``."""
        return self.define(name, type, default, None, importance, documentation, internal=True)

    def define_key(self, key: ConfigKey) -> ConfigDef:
        if key.name in self._keys:
            raise ConfigError(f"Configuration {key.name} is defined twice.", name=key.name)
        self._keys[key.name] = key
        return self

    def embed(self, prefix: str, group: str, start_order: int, child: ConfigDef) -> ConfigDef:
        """Add ``child``'s keys under ``prefix`` in ``group`` (how transforms' keys join a connector's)."""
        for order, key in enumerate(child._keys.values(), start=start_order):
            recommender = _PrefixedRecommender(prefix, key.recommender) if key.recommender else None
            self.define_key(ConfigKey(prefix + key.name, key.type, key.default, key.validator,
                                      key.importance, key.documentation, group, order, key.width,
                                      key.display_name, tuple(prefix + d for d in key.dependents),
                                      recommender, key.internal))
        return self

    # -- introspection --------------------------------------------------------------------------
    def config_keys(self) -> dict[str, ConfigKey]:
        """The keys by name, in definition order."""
        return dict(self._keys)

    def names(self) -> set[str]:
        return set(self._keys)

    def groups(self) -> list[str]:
        """Group names in order of first definition."""
        return list(dict.fromkeys(k.group for k in self._keys.values() if k.group is not None))

    def config_key_infos(self) -> list[ConfigKeyInfo]:
        return [k.info() for k in self._keys.values() if not k.internal]

    def __contains__(self, name: object) -> bool:
        return name in self._keys

    def __len__(self) -> int:
        return len(self._keys)

    # -- parsing and validation -----------------------------------------------------------------
    def _parse_key(self, key: ConfigKey, props: Mapping[str, Any]) -> Any:
        if key.name in props:
            value = parse_value(key.name, props[key.name], key.type, self._class_loader)
        elif key.has_default:
            value = key.default
        else:
            raise _missing(key.name)
        if key.validator is not None:
            key.validator.ensure_valid(key.name, value)
        return value

    def parse(self, props: Mapping[str, Any]) -> dict[str, Any]:
        """Typed values of every defined key; :class:`ConfigError` naming the first bad key.

        Keys in ``props`` that are not defined are ignored here (``AbstractConfig`` keeps them
        as originals, e.g. for prefixed client overrides).
        """
        return {key.name: self._parse_key(key, props) for key in self._keys.values()}

    def validate(self, props: Mapping[str, Any]) -> list[ConfigValue]:
        """One :class:`ConfigValue` per key with *all* errors collected, and recommendations filled in."""
        results: dict[str, ConfigValue] = {}
        parsed: dict[str, Any] = {}
        for key in self._keys.values():
            result = ConfigValue(key.name)
            try:
                result.value = parsed[key.name] = self._parse_key(key, props)
            except ConfigError as e:
                result.value = props.get(key.name)
                parsed[key.name] = None
                result.add_error_message(str(e))
            results[key.name] = result
        for key in self._keys.values():
            if key.recommender is None:
                continue
            result = results[key.name]
            try:
                result.recommended_values = list(key.recommender.valid_values(key.name, parsed))
                result.visible = key.recommender.visible(key.name, parsed)
            except ConfigError as e:
                result.add_error_message(str(e))
        return list(results.values())
