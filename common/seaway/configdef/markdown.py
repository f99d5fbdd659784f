"""A ConfigDef as a Markdown table (Kafka's ``ConfigDef.toHtml``/``toRst``, in Markdown).

The docs' config reference is generated from the same tables that parse the configs, so a key's
documented type, default and valid values cannot drift from what the code accepts.
"""

from __future__ import annotations

from collections.abc import Callable

from seaway.configdef.definition import ConfigDef, ConfigKey

__all__ = ["render_markdown"]



def _cell(text: str) -> str:
    """Table-safe text: pipes escaped, line breaks folded into spaces."""
    return " ".join(text.replace("|", "\\|").split())


def _default(key: ConfigKey) -> str:
    if key.required:
        return "*(required)*"
    text = key.default_string()
    if text is None:
        return "null"
    return f"`{text}`" if text else '`""`'


def _line(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |\n"


Column = tuple[str, Callable[[ConfigKey], str]]
"""A component's own column: its title, and the cell of a key (e.g. the broker's synonyms of a topic config)."""


def _row(key: ConfigKey, importance: bool, extra: Column | None) -> str:
    valid = str(key.validator) if key.validator is not None else ""
    cells = [f"`{key.name}`", key.type.value, _default(key), _cell(valid)]
    if importance:
        cells.append(key.importance.value.lower())
    if extra is not None:
        cells.append(_cell(extra[1](key)))
    return _line([*cells, _cell(key.documentation)])


def render_markdown(definition: ConfigDef, heading: str | None = None, intro: str = "",
                    *, importance: bool = True, extra: Column | None = None) -> str:
    """The keys of ``definition`` (internal ones left out) in definition order as one Markdown table.

    ``importance=False`` leaves out the Importance column, for a table whose keys were not ranked
    (every key would read "medium", which says nothing); ``extra`` adds a column before the description.
    """
    out = f"## {heading}\n\n" if heading else ""
    if intro:
        out += intro.strip() + "\n\n"
    columns = ["Name", "Type", "Default", "Valid values", *(["Importance"] if importance else []),
               *([extra[0]] if extra is not None else []), "Description"]
    out += _line(columns) + _line(["-" * len(c) for c in columns])
    out += "".join(_row(key, importance, extra) for key in definition.config_keys().values() if not key.internal)
    return out
