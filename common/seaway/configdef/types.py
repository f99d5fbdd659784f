"""Config value types and their parsing (Kafka's ``ConfigDef.Type`` and ``ConfigDef.parseType``).

Configs arrive as strings (properties files, REST JSON, environment variables) or already
typed (keyword arguments, code defaults); :func:`parse_value` turns either into the typed
value, with Kafka's own reasons when it cannot (``Not a number of type INT``, ...):

=========  ==============================  =========================================
Type       Python value                    accepted input
=========  ==============================  =========================================
BOOLEAN    ``bool``                        bool, "true"/"false" (any case)
STRING     ``str``                         str (trimmed)
INT        ``int`` (32-bit)                int, decimal string
SHORT      ``int`` (16-bit)                int, decimal string
LONG       ``int`` (64-bit)                int, decimal string
DOUBLE     ``float``                       int, float, numeric string
LIST       ``list[str]``                   list, tuple, comma-separated string ("" -> [])
CLASS      ``type``                        a class, or a name the caller's class loader resolves
PASSWORD   :class:`Password`               Password, str
=========  ==============================  =========================================

Each type also knows its DescribeConfigs wire code (:attr:`ConfigType.wire_code`), so the
broker describes a key with the same enum that parses it.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable
from typing import Any, Final

from seaway.configdef.errors import ConfigException

__all__ = [
    "NO_DEFAULT",
    "ClassLoader",
    "ConfigType",
    "Importance",
    "Password",
    "Width",
    "convert_to_string",
    "parse_boolean",
    "parse_class",
    "parse_double",
    "parse_integer",
    "parse_list",
    "parse_password",
    "parse_string",
    "parse_value",
]


class ConfigType(enum.Enum):
    """Kafka's ``ConfigDef.Type``; the value is the name the REST API and the docs print."""

    BOOLEAN = "BOOLEAN"
    STRING = "STRING"
    INT = "INT"
    SHORT = "SHORT"
    LONG = "LONG"
    DOUBLE = "DOUBLE"
    LIST = "LIST"
    CLASS = "CLASS"
    PASSWORD = "PASSWORD"

    @property
    def wire_code(self) -> int:
        """DescribeConfigs' ``ConfigType`` code (v3+; 0, UNKNOWN, is never a defined key's)."""
        return _WIRE_CODES[self]


_WIRE_CODES: Final = {t: code for code, t in enumerate(ConfigType, start=1)}


class Importance(enum.Enum):
    """Kafka's ``ConfigDef.Importance``: how much a user should care (docs sort by it)."""

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
"""Kafka's ``ConfigDef.NO_DEFAULT_VALUE``: the key is required (``None`` is a default: null)."""


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
"""Resolves a class name to a class, raising ImportError saying why not (the caller decides what
may be named: Connect passes its plugin loader; the engine itself imports nothing)."""

_BITS: Final = {ConfigType.SHORT: 16, ConfigType.INT: 32, ConfigType.LONG: 64}
_BIT_WORDS: Final = {ConfigType.SHORT: "16-bit integer", ConfigType.INT: "32-bit integer",
                     ConfigType.LONG: "64-bit integer"}
_DECIMAL = re.compile(r"[+-]?[0-9]+")  # Java's Integer/Short/Long.parseLong: no "1_000", no other digits


def parse_boolean(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ConfigException.invalid(name, value, "Expected value to be either true or false")


def parse_string(name: str, value: Any) -> str:
    if isinstance(value, str):
        return value
    raise ConfigException.invalid(name, value, "Expected value to be a string, but it was a " + type(value).__name__)


def parse_integer(name: str, value: Any, config_type: ConfigType = ConfigType.INT) -> int:
    """SHORT, INT or LONG: a decimal string or an int within the type's two's-complement range."""
    if isinstance(value, str):
        if not _DECIMAL.fullmatch(value):
            raise ConfigException.invalid(name, value, "Not a number of type " + config_type.value)
        value = int(value, 10)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ConfigException.invalid(name, value, "Expected value to be a " + _BIT_WORDS[config_type])
    bits = _BITS[config_type]
    if not -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
        raise ConfigException.invalid(name, value, "Not a number of type " + config_type.value)
    return value


def parse_double(name: str, value: Any) -> float:
    if isinstance(value, bool):
        raise ConfigException.invalid(name, value, "Expected value to be a double")
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ConfigException.invalid(name, value, "Not a number of type DOUBLE") from None


def parse_list(name: str, value: Any) -> list[str]:
    """Kafka splits on commas with the whitespace around them; an empty string is the empty list."""
    if isinstance(value, list | tuple):
        return list(value)
    if isinstance(value, str):
        return [] if not value else [item.strip() for item in value.split(",")]
    raise ConfigException.invalid(name, value, "Expected a comma separated list.")


def parse_class(name: str, value: Any, class_loader: ClassLoader | None) -> type:
    if isinstance(value, type):
        return value
    if not isinstance(value, str):
        raise ConfigException.invalid(name, value, "Expected a Class instance or class name.")
    if class_loader is None:
        raise ConfigException.invalid(name, value, "Class names are not accepted here (no class loader)")
    try:
        return class_loader(value)
    except ImportError as e:
        raise ConfigException.invalid(name, value, str(e)) from None


def parse_password(name: str, value: Any) -> Password:
    if isinstance(value, Password):
        return value
    if isinstance(value, str):
        return Password(value)
    raise ConfigException.invalid(name, value, "Expected value to be a string")


def parse_value(name: str, value: Any, config_type: ConfigType, class_loader: ClassLoader | None = None) -> Any:
    """Parse one raw value to its typed form (strings trimmed first); ``None`` stays ``None``.

    :class:`ConfigException` naming ``name`` on bad input.
    """
    if value is None:
        return None
    if isinstance(value, str):
        value = value.strip()
    if config_type in _BITS:
        return parse_integer(name, value, config_type)
    if config_type is ConfigType.CLASS:
        return parse_class(name, value, class_loader)
    return _PARSERS[config_type](name, value)


_PARSERS: Final[dict[ConfigType, Callable[[str, Any], Any]]] = {
    ConfigType.BOOLEAN: parse_boolean,
    ConfigType.STRING: parse_string,
    ConfigType.DOUBLE: parse_double,
    ConfigType.LIST: parse_list,
    ConfigType.PASSWORD: parse_password,
}


def convert_to_string(value: Any, config_type: ConfigType | None = None) -> str | None:
    """Kafka's ``ConfigDef.convertToString``: a parsed value as a properties file would hold it."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    if isinstance(value, type):
        return f"{value.__module__}.{value.__qualname__}"
    return str(value)
