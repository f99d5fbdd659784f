"""JAAS configuration text, parsed as Java's ``ConfigFile`` and Kafka's ``JaasConfig`` read it.

Two forms:

- a ``sasl.jaas.config`` value: exactly one login module entry,
  ``<LoginModuleClass> <flag> [key=value ...];`` (:func:`parse_jaas`);
- a JAAS file, as ``-Djava.security.auth.login.config`` names it: named sections of entries,
  ``KafkaConnect { <entry>; <entry>; };`` (:func:`parse_jaas_file`), with ``//`` and ``/* */``
  comments.

The flag is required, requisite, sufficient or optional; a value is a bare word or a
double-quoted string (``\\"`` and ``\\\\`` escapes). Errors say what is wrong, never the
values (they hold passwords).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["JaasEntry", "parse_jaas", "parse_jaas_file"]

_FLAGS = ("required", "requisite", "sufficient", "optional")
_SPECIAL = "=;{}"
_COMMENTS = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/', re.DOTALL)


@dataclass(frozen=True)
class JaasEntry:
    module: str
    flag: str
    options: dict[str, str] = field(default_factory=dict)

    def plain_users(self) -> dict[str, str]:
        """``user_<name>`` options as {name: password}."""
        return {k[len("user_"):]: v for k, v in self.options.items() if k.startswith("user_")}

    def __repr__(self) -> str:  # options hold passwords
        return f"JaasEntry({self.module} {self.flag}, options={sorted(self.options)})"


def _tokens(text: str) -> list[tuple[str, bool]]:
    """(token, was quoted) pairs; ``=``, ``;``, ``{`` and ``}`` are tokens of their own."""
    out: list[tuple[str, bool]] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char.isspace():
            i += 1
        elif char in _SPECIAL:
            out.append((char, False))
            i += 1
        elif char == '"':
            i += 1
            buf: list[str] = []
            while i < n and text[i] != '"':
                if text[i] == "\\" and i + 1 < n:
                    i += 1
                buf.append(text[i])
                i += 1
            if i >= n:
                raise ValueError("unterminated quoted value")
            out.append(("".join(buf), True))
            i += 1
        else:
            start = i
            while i < n and not text[i].isspace() and text[i] not in _SPECIAL + '"':
                i += 1
            out.append((text[start:i], False))
    return out


def _entries(tokens: list[tuple[str, bool]], i: int, stop: str | None) -> tuple[list[JaasEntry], int]:
    """Entries from ``tokens[i:]`` up to the ``stop`` token (None: the end); returns (entries, next index)."""
    entries: list[JaasEntry] = []
    while i < len(tokens) and (stop is None or tokens[i] != (stop, False)):
        module, quoted = tokens[i]
        if quoted or module in _SPECIAL:
            raise ValueError("expected a login module class name")
        if i + 1 >= len(tokens) or tokens[i + 1][0].lower() not in _FLAGS:
            raise ValueError(f"login module {module} needs a control flag ({', '.join(_FLAGS)})")
        flag = tokens[i + 1][0].lower()
        i += 2
        options: dict[str, str] = {}
        while i < len(tokens) and tokens[i] != (";", False):
            key, key_quoted = tokens[i]
            if key_quoted or key in _SPECIAL or i + 2 >= len(tokens) or tokens[i + 1] != ("=", False):
                raise ValueError(f"options of {module} must be key=value pairs")
            value, value_quoted = tokens[i + 2]
            if not value_quoted and value in _SPECIAL:
                raise ValueError(f"option {key} of {module} has no value")
            options[key] = value
            i += 3
        if i >= len(tokens):
            raise ValueError(f"the entry for {module} must end with ';'")
        i += 1
        entries.append(JaasEntry(module, flag, options))
    return entries, i


def parse_jaas(text: str) -> JaasEntry:
    """One login module entry (a ``sasl.jaas.config`` value); raises ValueError saying what is wrong."""
    entries, _ = _entries(_tokens(text), 0, None)
    if len(entries) != 1:
        raise ValueError(f"JAAS config property contains {len(entries)} login modules, should be 1 module")
    return entries[0]


def parse_jaas_file(text: str) -> dict[str, list[JaasEntry]]:
    """A JAAS file's sections: {name: entries}; raises ValueError saying what is wrong."""
    tokens = _tokens(_COMMENTS.sub(lambda m: m.group(0) if m.group(0).startswith('"') else " ", text))
    sections: dict[str, list[JaasEntry]] = {}
    i = 0
    while i < len(tokens):
        name, quoted = tokens[i]
        if quoted or name in _SPECIAL or i + 1 >= len(tokens) or tokens[i + 1] != ("{", False):
            raise ValueError("expected a section: Name { LoginModule flag key=value...; };")
        entries, i = _entries(tokens, i + 2, "}")
        if i >= len(tokens):
            raise ValueError(f"section {name} is not closed with '}};'")
        i += 1
        if i < len(tokens) and tokens[i] == (";", False):
            i += 1
        else:
            raise ValueError(f"section {name} must end with '}};'")
        if name in sections:
            raise ValueError(f"section {name} appears twice")
        sections[name] = entries
    return sections
