"""Field paths of KIP-821 (``field.syntax.version``): V1 names a top-level field, V2 a dotted path.

In V2, ``a.b.c`` walks nested structs/maps; a step wrapped in backticks may contain dots
(```a.b`.c`` is the steps ``a.b`` and ``c``), and a backtick inside such a step is escaped
with a backslash. A path ending in a dot has a final empty step.
"""

from __future__ import annotations

import enum
from typing import Any

from seaway.connect.api import (
    CaseInsensitiveValidString,
    ConfigDef,
    ConfigError,
    ConfigType,
    Field,
    Importance,
    Schema,
    Struct,
)
from seaway.transforms.util import require_map_or_null, require_struct_or_null

__all__ = ["FIELD_SYNTAX_VERSION_CONFIG", "FieldSyntaxVersion", "SingleFieldPath", "define_field_syntax_version"]

FIELD_SYNTAX_VERSION_CONFIG = "field.syntax.version"


class FieldSyntaxVersion(enum.Enum):
    V1 = "V1"
    V2 = "V2"

    @classmethod
    def from_config(cls, value: str) -> FieldSyntaxVersion:
        try:
            return cls[value.upper()]
        except KeyError:
            raise ConfigError.invalid(FIELD_SYNTAX_VERSION_CONFIG, value,
                                      "Unrecognized field syntax version") from None


def define_field_syntax_version(config_def: ConfigDef) -> ConfigDef:
    return config_def.define(
        FIELD_SYNTAX_VERSION_CONFIG, ConfigType.STRING, "V1", CaseInsensitiveValidString.in_("V1", "V2"),
        Importance.HIGH,
        "Defines the version of the syntax to access fields. If set to `V1`, then the field paths are limited to "
        "access the elements at the root level of the struct or map. If set to `V2`, the syntax will support "
        "accessing nested elements. To access nested elements, dotted notation is used. If dots are already "
        "included in the field name, then backtick pairs can be used to wrap field names containing dots. E.g. "
        "to access the subfield `baz` from a field named \"foo.bar\" in a struct/map the following format can be "
        "used to access its elements: \"`foo.bar`.baz\".")


def _v2_steps(path: str) -> list[str]:
    steps: list[str] = []
    i, n = 0, len(path)
    while i < n:
        if path[i] != "`":
            dot = path.find(".", i)
            if dot < 0:
                steps.append(path[i:])
                i = n
            else:
                steps.append(path[i:dot])
                i = dot + 1
            continue
        opened = i
        i += 1
        start = i
        text: list[str] = []
        while True:
            i = path.find("`", i)
            if i < 0:
                raise _incomplete(path, opened)
            escaped = path[i - 1] == "\\"
            if i >= n - 1:  # the closing backtick ends the path
                if escaped:
                    raise _incomplete(path, opened)
                text.append(path[start:i])
                steps.append("".join(text))
                i += 1
                break
            if path[i + 1] != ".":  # a backtick inside the step
                i += 1
                continue
            if escaped:
                text.append(path[start:i - 1] + "`")
                i += 1
                start = i
                continue
            text.append(path[start:i])
            steps.append("".join(text))
            i += 2
            break
    if path.endswith("."):
        steps.append("")
    return steps


def _incomplete(path: str, at: int) -> ConfigError:
    return ConfigError(f"Incomplete backtick pair in path: [{path}], consider adding a backslash before backtick "
                       f"at position {at} to escape it")


class SingleFieldPath:
    """A parsed path; looks up a field in a schema and a value in a Struct or dict."""

    __slots__ = ("path", "steps", "version")

    def __init__(self, path: str, version: FieldSyntaxVersion) -> None:
        self.path = path
        self.version = version
        self.steps: tuple[str, ...] = (path,) if version is FieldSyntaxVersion.V1 else tuple(_v2_steps(path))

    def field_from(self, schema: Schema | None) -> Field | None:
        if schema is None:
            return None
        current = schema
        for step in self.steps[:-1]:
            field = current.field(step)
            if field is None:
                return None
            current = field.schema
        return current.field(self.steps[-1])

    def value_from_struct(self, struct: Struct | None, replace_null_with_default: bool = True) -> Any:
        current = struct
        for step in self.steps[:-1]:
            if current is None or current.schema.field(step) is None:
                return None
            current = require_struct_or_null(current.get(step), "nested field access")
        if current is None or current.schema.field(self.steps[-1]) is None:
            return None
        last = self.steps[-1]
        return current.get(last) if replace_null_with_default else current.get_without_default(last)

    def value_from_map(self, mapping: dict[str, Any] | None) -> Any:
        current = mapping
        for step in self.steps[:-1]:
            if current is None:
                return None
            current = require_map_or_null(current.get(step), "nested field access")
        return None if current is None else current.get(self.steps[-1])

    def __repr__(self) -> str:
        return f"SingleFieldPath({self.path!r}, {self.version.name})"
