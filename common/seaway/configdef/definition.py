"""ConfigDef: the typed, documented table of a component's config keys (Kafka's ``ConfigDef``).

One table per component (a plugin, the Connect worker, the broker, a topic, the registry) is the
single place a key's type, default, validation and doc live. Its users:

* :meth:`ConfigDef.parse` turns raw props into typed values or raises naming the first bad key;
  :meth:`ConfigDef.parse_key` does it for one key (the broker parses only the keys it was given);
* :meth:`ConfigDef.validate` checks *every* key, never stopping at the first error, and runs the
  recommenders (Connect's ``PUT /connector-plugins/{type}/config/validate``);
* :meth:`ConfigDef.config_key_infos` describes each key (Connect's ``GET .../config``), and
  :mod:`seaway.configdef.markdown` renders the table for the docs.

Errors are :attr:`ConfigDef.error` (:class:`ConfigException` here); a component's subclass may
rebind it to its own subclass of it, and every error the table raises is then of that type.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

from seaway.configdef.errors import ConfigException
from seaway.configdef.types import (
    NO_DEFAULT,
    ClassLoader,
    ConfigType,
    Importance,
    Width,
    convert_to_string,
    parse_value,
)
from seaway.configdef.validators import Recommender, Validator

__all__ = ["Config", "ConfigDef", "ConfigKey", "ConfigKeyInfo", "ConfigValue"]


@dataclass(frozen=True, slots=True)
class ConfigKeyInfo:
    """A key as Connect's ``GET /connector-plugins/{type}/config`` shows it (Kafka's ``ConfigKeyInfo``)."""

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

    def default_string(self) -> str | None:
        """The default as a properties file would hold it; None when required or null."""
        return convert_to_string(self.default, self.type) if self.has_default else None

    def parse(self, value: Any, class_loader: ClassLoader | None = None) -> Any:
        """``value`` typed and validated; :class:`ConfigException` (or a validator's subclass) naming the key."""
        parsed = parse_value(self.name, value, self.type, class_loader)
        if self.validator is not None:
            self.validator.ensure_valid(self.name, parsed)
        return parsed

    def info(self) -> ConfigKeyInfo:
        return ConfigKeyInfo(
            name=self.name, type=self.type.value, required=self.required, default_value=self.default_string(),
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
    """What Connect's ``Connector.validate`` returns: one :class:`ConfigValue` per key."""

    config_values: list[ConfigValue]

    @property
    def error_count(self) -> int:
        return sum(len(v.errors) for v in self.config_values)


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
    """An ordered set of :class:`ConfigKey`; ``define`` returns ``self`` so definitions chain.

    ``class_loader`` resolves CLASS values given in props (untrusted: the caller decides what may
    be named); ``default_class_loader`` resolves CLASS defaults written in code (trusted), and is
    ``class_loader`` unless given.
    """

    error: ClassVar[type[ConfigException]] = ConfigException

    def __init__(self, base: ConfigDef | None = None, *, class_loader: ClassLoader | None = None,
                 default_class_loader: ClassLoader | None = None) -> None:
        self._keys: dict[str, ConfigKey] = {}
        self._class_loader = class_loader
        self._default_class_loader = default_class_loader or class_loader
        if base is not None:
            self._extend(base)

    def _extend(self, base: ConfigDef) -> None:
        """Start from ``base``: its keys and class loaders (a copy's CLASS keys resolve as the original's)."""
        self._keys.update(base._keys)
        self._class_loader = base._class_loader
        self._default_class_loader = base._default_class_loader

    def _as_error(self, e: ConfigException) -> ConfigException:
        """``e`` as this table's :attr:`error` type (unchanged when it already is one)."""
        if isinstance(e, self.error):
            return e
        return self.error(str(e), name=e.name, value=e.value, reason=e.reason)

    def define(self, name: str, type: ConfigType, default: Any = NO_DEFAULT,
               validator: Validator | None = None, importance: Importance = Importance.MEDIUM,
               documentation: str = "", group: str | None = None, order_in_group: int = -1,
               width: Width = Width.NONE, display_name: str | None = None,
               dependents: Iterable[str] = (), recommender: Recommender | None = None,
               *, internal: bool = False) -> Self:
        """Add a key; the default is parsed and validated now, so a bad one fails at import time."""
        if default is not NO_DEFAULT:
            try:
                default = parse_value(name, default, type, self._default_class_loader)
                if validator is not None and default is not None:
                    validator.ensure_valid(name, default)
            except ConfigException as e:
                raise self._as_error(e) from None
        return self.define_key(ConfigKey(name, type, default, validator, importance, documentation, group,
                                         order_in_group, width, display_name, tuple(dependents), recommender,
                                         internal))

    def define_internal(self, name: str, type: ConfigType, default: Any = NO_DEFAULT,
                        importance: Importance = Importance.LOW, documentation: str = "") -> Self:
        """A key for the framework's own use: parsed like others, hidden from ``config_key_infos``."""
        return self.define(name, type, default, None, importance, documentation, internal=True)

    def define_key(self, key: ConfigKey) -> Self:
        if key.name in self._keys:
            raise self.error(f"Configuration {key.name} is defined twice.", name=key.name)
        self._keys[key.name] = key
        return self

    def embed(self, prefix: str, group: str, start_order: int, child: ConfigDef) -> Self:
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

    def key(self, name: str) -> ConfigKey:
        """The defined key ``name`` (KeyError if undefined)."""
        return self._keys[name]

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
    def parse_key(self, name: str, value: Any) -> Any:
        """One given value of the defined key ``name``, typed and validated (KeyError if undefined)."""
        try:
            return self._keys[name].parse(value, self._class_loader)
        except ConfigException as e:
            raise self._as_error(e) from None

    def _parse_key(self, key: ConfigKey, props: Mapping[str, Any]) -> Any:
        try:
            if key.name in props:
                return key.parse(props[key.name], self._class_loader)
            if not key.has_default:
                raise self.error.missing(key.name)
            if key.validator is not None:
                key.validator.ensure_valid(key.name, key.default)
            return key.default
        except ConfigException as e:
            raise self._as_error(e) from None

    def parse(self, props: Mapping[str, Any]) -> dict[str, Any]:
        """Typed values of every defined key; :attr:`error` naming the first bad key.

        Keys in ``props`` that are not defined are ignored here (Connect's ``AbstractConfig`` keeps
        them as originals, e.g. for prefixed client overrides).
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
            except ConfigException as e:
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
            except ConfigException as e:
                result.add_error_message(str(e))
        return list(results.values())
