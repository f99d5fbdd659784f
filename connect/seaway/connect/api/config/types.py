"""Configuration value types and their parsing (Kafka's ``ConfigDef.Type`` and ``parseType``).

Plugins receive configs as strings (from REST JSON or properties files); :func:`parse_value`
turns each into its typed Python value, raising :class:`ConfigError` naming the key:

=========  ==============================  =========================================
Type       Python value                    accepted input
=========  ==============================  =========================================
BOOLEAN    ``bool``                        bool, "true"/"false" (any case)
STRING     ``str``                         str (trimmed)
INT        ``int`` (32-bit)                int, decimal string
SHORT      ``int`` (16-bit)                int, decimal string
LONG       ``int`` (64-bit)                int, decimal string
DOUBLE     ``float``                       int, float, numeric string
LIST       ``list[str]``                   list, comma-separated string ("" -> [])
CLASS      ``type``                        a class, or an installed plugin's name (see class_names)
PASSWORD   :class:`Password`               Password, str
=========  ==============================  =========================================
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any, Final

from seaway.connect.api.config.class_names import load_class
from seaway.connect.api.errors import ConfigError

__all__ = [
    "NO_DEFAULT",
    "ClassLoader",
    "ConfigType",
    "Importance",
    "Password",
    "Width",
    "convert_to_string",
    "load_class",
    "parse_value",
]


class ConfigType(enum.Enum):
    """Kafka's ``ConfigDef.Type``; the value is the name the REST API prints."""

    BOOLEAN = "BOOLEAN"
    STRING = "STRING"
    INT = "INT"
    SHORT = "SHORT"
    LONG = "LONG"
    DOUBLE = "DOUBLE"
    LIST = "LIST"
    CLASS = "CLASS"
    PASSWORD = "PASSWORD"


class Importance(enum.Enum):
    HIGH = "HIGH"
    MEDIUM = "MEDIUM"
    LOW = "LOW"


class Width(enum.Enum):
    """How wide a UI should draw the input (Kafka's ``ConfigDef.Width``)."""

    NONE = "NONE"
    SHORT = "SHORT"
    MEDIUM = "MEDIUM"
    LONG = "LONG"


class _NoDefault(enum.Enum):
    NO_DEFAULT = "NO_DEFAULT"

    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Final = _NoDefault.NO_DEFAULT
"""Kafka's ``ConfigDef.NO_DEFAULT_VALUE``: the key is required."""


class Password:
    """A secret config value; ``str()`` and ``repr()`` print ``[hidden]`` so it never reaches a log."""

    __slots__ = ("_value",)
    HIDDEN: Final = "[hidden]"

    def __init__(self, value: str) -> None:
        self._value = value

    @property
    def value(self) -> str:
        """The secret itself; read it only where it is used."""
        return self._value

    def __str__(self) -> str:
        return self.HIDDEN

    def __repr__(self) -> str:
        return f"Password({self.HIDDEN})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Password) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


ClassLoader = Callable[[str], type]

_INT_BITS = {ConfigType.SHORT: 16, ConfigType.INT: 32, ConfigType.LONG: 64}


def parse_value(name: str, value: Any, config_type: ConfigType,
                class_loader: ClassLoader = load_class) -> Any:
    """Parse one raw value to its typed form; ``None`` stays ``None``. :class:`ConfigError` on bad input."""
    if value is None:
        return None
    if isinstance(value, str):
        value = value.strip()
    if config_type is ConfigType.BOOLEAN:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        raise ConfigError.invalid(name, value, "Expected value to be either true or false")
    if config_type is ConfigType.STRING:
        if isinstance(value, str):
            return value
        raise ConfigError.invalid(name, value, "Expected value to be a string, but it was a "
                                  + type(value).__name__)
    if config_type in _INT_BITS:
        bits = _INT_BITS[config_type]
        if isinstance(value, str):
            try:
                value = int(value, 10)
            except ValueError:
                raise ConfigError.invalid(name, value, "Not a number of type " + config_type.value) from None
        if not isinstance(value, int) or isinstance(value, bool):
            raise ConfigError.invalid(name, value, "Expected value to be a " + _int_word(config_type))
        if not -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
            raise ConfigError.invalid(name, value, "Not a number of type " + config_type.value)
        return value
    if config_type is ConfigType.DOUBLE:
        if isinstance(value, bool):
            raise ConfigError.invalid(name, value, "Expected value to be a double")
        if isinstance(value, int | float):
            return float(value)
        try:
            return float(value)
        except (TypeError, ValueError):
            raise ConfigError.invalid(name, value, "Not a number of type DOUBLE") from None
    if config_type is ConfigType.LIST:
        if isinstance(value, list | tuple):
            return list(value)
        if isinstance(value, str):
            return [] if not value else [item.strip() for item in value.split(",")]
        raise ConfigError.invalid(name, value, "Expected a comma separated list.")
    if config_type is ConfigType.CLASS:
        if isinstance(value, type):
            return value
        if isinstance(value, str):
            try:
                return class_loader(value)
            except ImportError as e:
                raise ConfigError.invalid(name, value, str(e)) from None
        raise ConfigError.invalid(name, value, "Expected a Class instance or class name.")
    # PASSWORD
    if isinstance(value, Password):
        return value
    if isinstance(value, str):
        return Password(value)
    raise ConfigError.invalid(name, value, "Expected value to be a string")


def _int_word(config_type: ConfigType) -> str:
    return {"INT": "32-bit integer", "SHORT": "16-bit integer", "LONG": "64-bit integer"}[config_type.value]


def convert_to_string(value: Any, config_type: ConfigType | None = None) -> str | None:
    """Kafka's ``ConfigDef.convertToString``: the string a UI shows for a parsed value."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    if isinstance(value, type):
        return f"{value.__module__}.{value.__qualname__}"
    return str(value)
