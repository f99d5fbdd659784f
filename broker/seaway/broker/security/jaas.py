"""``sasl.jaas.config`` values: one JAAS login module entry, parsed as Kafka's ``JaasConfig``.

Syntax: ``<LoginModuleClass> <flag> [key=value ...];`` where the flag is required,
requisite, sufficient or optional and a value is a bare word or a double-quoted string
(``\\"`` and ``\\\\`` escapes). Exactly one module per value, as Kafka requires.

The broker understands two modules, as Kafka's broker does:

- ``org.apache.kafka.common.security.plain.PlainLoginModule``: every ``user_<name>="<password>"``
  option is a user the PLAIN mechanism accepts (Kafka's ``PlainServerCallbackHandler``);
  ``username``/``password`` are the broker's own client credentials (unused: one node);
- ``org.apache.kafka.common.security.scram.ScramLoginModule``: SCRAM users come from the
  credential store (``seaway users`` / AlterUserScramCredentials), options are unused.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["PLAIN_MODULE", "SCRAM_MODULE", "JaasEntry", "parse_jaas"]

PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
_FLAGS = ("required", "requisite", "sufficient", "optional")


@dataclass(frozen=True)
class JaasEntry:
    module: str
    flag: str
    options: dict[str, str] = field(default_factory=dict)

    def plain_users(self) -> dict[str, str]:
        """``user_<name>`` options as {name: password}."""
        return {k[len("user_"):]: v for k, v in self.options.items() if k.startswith("user_")}


def _tokens(text: str) -> list[tuple[str, bool]]:
    """(token, was quoted) pairs; ``=`` and ``;`` are tokens of their own."""
    out: list[tuple[str, bool]] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char.isspace():
            i += 1
        elif char in "=;":
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
            while i < n and not text[i].isspace() and text[i] not in '=;"':
                i += 1
            out.append((text[start:i], False))
    return out


def parse_jaas(text: str) -> JaasEntry:
    """One login module entry; raises ValueError saying what is wrong (never the values)."""
    tokens = _tokens(text)
    entries: list[JaasEntry] = []
    i = 0
    while i < len(tokens):
        module, quoted = tokens[i]
        if quoted or module in "=;":
            raise ValueError("expected a login module class name")
        if i + 1 >= len(tokens) or tokens[i + 1][0].lower() not in _FLAGS:
            raise ValueError(f"login module {module} needs a control flag ({', '.join(_FLAGS)})")
        flag = tokens[i + 1][0].lower()
        i += 2
        options: dict[str, str] = {}
        while i < len(tokens) and tokens[i] != (";", False):
            key, key_quoted = tokens[i]
            if key_quoted or key in "=;" or i + 2 >= len(tokens) or tokens[i + 1] != ("=", False):
                raise ValueError(f"options of {module} must be key=value pairs")
            value, value_quoted = tokens[i + 2]
            if not value_quoted and value in "=;":
                raise ValueError(f"option {key} of {module} has no value")
            options[key] = value
            i += 3
        if i >= len(tokens):
            raise ValueError(f"the entry for {module} must end with ';'")
        i += 1
        entries.append(JaasEntry(module, flag, options))
    if len(entries) != 1:
        raise ValueError(f"JAAS config property contains {len(entries)} login modules, should be 1 module")
    return entries[0]
