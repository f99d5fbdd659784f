"""Configuration value types and their parsing (Kafka's ``ConfigDef.Type`` and ``parseType``).

The types, :class:`Password`, ``NO_DEFAULT`` and the parsing rules are the config engine's
(:mod:`seaway.configdef.types`, shared with the broker and the registry). What Connect adds:
:func:`parse_value` resolves CLASS values with the plugin loader (:func:`load_class`: installed
plugins and ``plugin.allowlist`` entries only) and raises Connect's :class:`ConfigError`.
"""

from __future__ import annotations

from typing import Any

from seaway.configdef import NO_DEFAULT, ClassLoader, ConfigException, ConfigType, Importance, Password, Width
from seaway.configdef import convert_to_string as convert_to_string
from seaway.configdef import parse_value as _parse_value
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


def parse_value(name: str, value: Any, config_type: ConfigType, class_loader: ClassLoader = load_class) -> Any:
    """Parse one raw value to its typed form; ``None`` stays ``None``. :class:`ConfigError` on bad input."""
    try:
        return _parse_value(name, value, config_type, class_loader)
    except ConfigException as e:
        raise ConfigError(str(e), name=e.name, value=e.value, reason=e.reason) from None
