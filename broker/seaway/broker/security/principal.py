"""Who a connection is: Kafka's ``KafkaPrincipal`` and its default principal builder.

As Kafka's ``DefaultKafkaPrincipalBuilder`` builds it:

- PLAINTEXT, and SSL without a client certificate: ``User:ANONYMOUS``;
- SSL with a client certificate: ``User:<subject DN>``, the DN in RFC 2253 form
  (``CN=alice,OU=eng,O=acme``) mapped through ``ssl.principal.mapping.rules``;
- SASL_PLAINTEXT and SASL_SSL: ``User:<SASL authorization id>`` (the user name).

``ssl.principal.mapping.rules`` is Kafka's list of ``DEFAULT`` and
``RULE:pattern/replacement/[LU]`` entries, tried in order: the first rule whose pattern
matches the whole DN gives the name (``L``/``U`` lower- or upper-case it). No matching rule
fails the TLS client's authentication, as in Kafka. Patterns are Python regular
expressions; Java's ``$1`` group references in the replacement are understood.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["ANONYMOUS", "KafkaPrincipal", "NoMatchingRuleError", "SslPrincipalMapper", "parse_principal"]

USER_TYPE = "User"


@dataclass(frozen=True, slots=True)
class KafkaPrincipal:
    principal_type: str
    name: str

    def __str__(self) -> str:
        return f"{self.principal_type}:{self.name}"


ANONYMOUS = KafkaPrincipal(USER_TYPE, "ANONYMOUS")


def parse_principal(text: str) -> KafkaPrincipal:
    """``User:alice`` -> KafkaPrincipal; raises ValueError without a ``type:`` prefix."""
    principal_type, sep, name = text.partition(":")
    if not sep or not principal_type:
        raise ValueError(f"{text!r} is not a principal (expected Type:name, e.g. User:alice)")
    return KafkaPrincipal(principal_type, name)


class NoMatchingRuleError(ValueError):
    """No ``ssl.principal.mapping.rules`` entry applies to a certificate's DN."""


_RULE = re.compile(r"\s*(DEFAULT|RULE:((?:\\.|[^\\/])*)/((?:\\.|[^\\/])*)/([LU]?)[^,\n]*?|([^,\n]*?))\s*(?:[,\n]\s*|$)")


@dataclass(frozen=True, slots=True)
class _Rule:
    pattern: re.Pattern[str] | None  # None: DEFAULT
    replacement: str
    case: str

    def apply(self, dn: str) -> str | None:
        if self.pattern is None:
            return dn
        if self.pattern.fullmatch(dn) is None:
            return None
        result = self.pattern.sub(self.replacement, dn)
        if self.case == "L":
            return result.lower()
        if self.case == "U":
            return result.upper()
        return result


def _python_replacement(java: str) -> str:
    """Java's ``$1`` / ``\\$`` replacement syntax in Python's ``re.sub`` form."""
    out: list[str] = []
    i = 0
    while i < len(java):
        char = java[i]
        if char == "\\" and i + 1 < len(java):
            out.append(java[i + 1].replace("\\", "\\\\"))
            i += 2
        elif char == "$" and i + 1 < len(java) and java[i + 1].isdigit():
            j = i + 1
            while j < len(java) and java[j].isdigit():
                j += 1
            out.append(f"\\g<{java[i + 1:j]}>")
            i = j
        else:
            out.append("\\\\" if char == "\\" else char)
            i += 1
    return "".join(out)


class SslPrincipalMapper:
    """``ssl.principal.mapping.rules`` parsed once; :meth:`name` maps a DN."""

    def __init__(self, rules: str = "DEFAULT") -> None:
        self.rules: list[_Rule] = []
        text = rules.strip()
        pos = 0
        while pos < len(text):
            match = _RULE.match(text, pos)
            if match is None or match.end() == pos:
                raise ValueError(f"Invalid rule: {text[pos:]!r}")
            pos = match.end()
            if match.group(1) == "DEFAULT":
                self.rules.append(_Rule(None, "", ""))
            elif match.group(5) is not None:
                raise ValueError(f"Invalid rule: {match.group(5)!r}")
            else:
                try:
                    pattern = re.compile(match.group(2))
                except re.error as exc:
                    raise ValueError(f"Invalid rule pattern {match.group(2)!r}: {exc}") from None
                self.rules.append(_Rule(pattern, _python_replacement(match.group(3)), match.group(4)))
        if not self.rules:
            self.rules.append(_Rule(None, "", ""))

    def name(self, dn: str) -> str:
        for rule in self.rules:
            result = rule.apply(dn)
            if result is not None:
                if not result:
                    raise NoMatchingRuleError(f"Rule mapped {dn!r} to an empty name")
                return result
        raise NoMatchingRuleError(f"No rules apply to {dn}, rules {self.rules}")
