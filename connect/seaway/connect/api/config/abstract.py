"""AbstractConfig: a plugin's props parsed once against its ConfigDef, with typed getters.

    class FileSourceConfig(AbstractConfig):
        def __init__(self, props: Mapping[str, str]) -> None:
            super().__init__(CONFIG_DEF, props)

    config = FileSourceConfig(props)          # ConfigError naming the key if invalid
    config.get_string("file"); config.get_int("batch.size")

Unknown keys are kept in :meth:`originals`, so prefixed groups (``transforms.x.*``,
``producer.override.*``) can be handed on with :meth:`originals_with_prefix`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seaway.connect.api.config.definition import ConfigDef
from seaway.connect.api.config.types import Password, convert_to_string
from seaway.connect.api.errors import ConfigError

__all__ = ["AbstractConfig"]


class AbstractConfig:
    """Parsed configuration (Kafka's ``AbstractConfig``). Immutable after construction."""

    def __init__(self, definition: ConfigDef, originals: Mapping[str, Any]) -> None:
        for key in originals:
            if not isinstance(key, str):
                raise ConfigError(f"Key must be a string instead of {type(key).__name__}")
        self._definition = definition
        self._originals = dict(originals)
        self._values = definition.parse(self._originals)

    @property
    def definition(self) -> ConfigDef:
        return self._definition

    def get(self, key: str) -> Any:
        """The parsed value of a defined key; :class:`ConfigError` for an undefined one."""
        try:
            return self._values[key]
        except KeyError:
            raise ConfigError(f"Unknown configuration '{key}'", name=key) from None

    def _typed(self, key: str, expected: type | tuple[type, ...]) -> Any:
        value = self.get(key)
        if value is not None and not isinstance(value, expected):
            raise ConfigError(f"Configuration '{key}' is a {type(value).__name__}, not the type requested",
                              name=key)
        return value

    def get_string(self, key: str) -> str | None:
        return self._typed(key, str)  # type: ignore[no-any-return]

    def get_int(self, key: str) -> int | None:
        return self._typed(key, int)  # type: ignore[no-any-return]

    def get_short(self, key: str) -> int | None:
        return self._typed(key, int)  # type: ignore[no-any-return]

    def get_long(self, key: str) -> int | None:
        return self._typed(key, int)  # type: ignore[no-any-return]

    def get_double(self, key: str) -> float | None:
        return self._typed(key, float)  # type: ignore[no-any-return]

    def get_boolean(self, key: str) -> bool | None:
        return self._typed(key, bool)  # type: ignore[no-any-return]

    def get_list(self, key: str) -> list[str] | None:
        return self._typed(key, list)  # type: ignore[no-any-return]

    def get_class(self, key: str) -> type | None:
        return self._typed(key, type)  # type: ignore[no-any-return]

    def get_password(self, key: str) -> Password | None:
        return self._typed(key, Password)  # type: ignore[no-any-return]

    def values(self) -> dict[str, Any]:
        """Every defined key's parsed value."""
        return dict(self._values)

    def originals(self) -> dict[str, Any]:
        """The props as given, including keys the definition does not know."""
        return dict(self._originals)

    def originals_strings(self) -> dict[str, str]:
        """The originals, every value as a string (Kafka's ``originalsStrings``)."""
        return {k: v if isinstance(v, str) else (convert_to_string(v) or "")
                for k, v in self._originals.items()}

    def originals_with_prefix(self, prefix: str, strip: bool = True) -> dict[str, Any]:
        """The originals whose key starts with ``prefix``; the prefix is removed if ``strip``."""
        n = len(prefix) if strip else 0
        return {k[n:]: v for k, v in self._originals.items() if k.startswith(prefix)}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AbstractConfig):
            return NotImplemented
        return type(self) is type(other) and self._originals == other._originals

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shown = dict(self._values.items())  # Password values print as [hidden]
        return f"{type(self).__name__}({shown})"
