"""A ConfigDef as a Markdown table (Kafka's ``ConfigDef.toHtml``/``toRst``, in Markdown).

The docs' config reference is generated from the same tables that parse the configs, so a key's
documented type, default and valid values cannot drift from what the code accepts.
"""

from __future__ import annotations

from seaway.configdef.definition import ConfigDef, ConfigKey

__all__ = ["render_markdown"]

_HEADER = ("| Name | Type | Default | Valid values | Importance | Description |\n"
           "|------|------|---------|--------------|------------|-------------|\n")


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


def _row(key: ConfigKey) -> str:
    valid = str(key.validator) if key.validator is not None else ""
    cells = (f"`{key.name}`", key.type.value, _default(key), _cell(valid), key.importance.value.lower(),
             _cell(key.documentation))
    return "| " + " | ".join(cells) + " |\n"


def render_markdown(definition: ConfigDef, heading: str | None = None, intro: str = "") -> str:
    """The keys of ``definition`` (internal ones left out) in definition order as one Markdown table."""
    out = f"## {heading}\n\n" if heading else ""
    if intro:
        out += intro.strip() + "\n\n"
    out += _HEADER
    out += "".join(_row(key) for key in definition.config_keys().values() if not key.internal)
    return out
