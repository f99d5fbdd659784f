"""Secrets in connector configs never reach the browser in clear.

Kafka Connect masks a value whose ConfigDef type is ``PASSWORD`` as ``[hidden]`` in its
validation answers; ``GET /connectors/{c}/config`` and task configs, however, return values as
they were submitted. The console masks them the same way before any page (form, JSON,
``.properties``, task configs) is rendered, by two rules:

* the key's type is ``PASSWORD`` in the plugin's ConfigDef (``/connector-plugins/{p}/config``);
* or its name says it holds a secret, for keys no ConfigDef describes (client overrides such as
  ``producer.override.sasl.jaas.config``, converter settings such as
  ``value.converter.basic.auth.user.info``): see :data:`SECRET_KEY`.

A ``${provider:path:key}`` reference is not a secret (it names where the secret is) and is shown.

When a form comes back, a field still holding :data:`HIDDEN` is given its stored value again
(:func:`unmask`), so editing a connector never requires retyping its passwords and never sends
them to the browser.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

__all__ = ["HIDDEN", "SECRET_KEY", "is_secret", "mask", "unmask"]

HIDDEN = "[hidden]"
"""Connect's own mask (``ConfigInfos``), so a user sees the word they know."""

SECRET_KEY = re.compile(
    r"(password|passwd|secret|credential|token|jaas\.config|user\.info|api\.key|access\.key|private\.key"
    r"|keystore\.key|sasl\.password|key\.password)", re.IGNORECASE)
_NOT_SECRET = ("credentials.source", ".location", ".type", ".algorithm")
"""Settings named like secrets that only say where or what kind (``basic.auth.credentials.source=USER_INFO``)."""
_REFERENCE = re.compile(r"^\$\{[^}]+\}$")


def is_secret(key: str, password_keys: Iterable[str] = ()) -> bool:
    """Whether ``key``'s value is masked (a ConfigDef PASSWORD, or a name that says secret)."""
    if key in set(password_keys):
        return True
    return SECRET_KEY.search(key) is not None and not key.endswith(_NOT_SECRET)


def mask(config: Mapping[str, str | None], password_keys: Iterable[str] = ()) -> dict[str, str | None]:
    """A copy of ``config`` with every secret value replaced by :data:`HIDDEN` (references kept)."""
    keys = set(password_keys)
    out: dict[str, str | None] = {}
    for key, value in config.items():
        if value is not None and value != "" and is_secret(key, keys) and not _REFERENCE.match(value.strip()):
            out[key] = HIDDEN
        else:
            out[key] = value
    return out


def unmask(submitted: Mapping[str, str], stored: Mapping[str, str]) -> dict[str, str]:
    """``submitted`` with each :data:`HIDDEN` value put back from ``stored`` (dropped if there is none)."""
    out: dict[str, str] = {}
    for key, value in submitted.items():
        if value == HIDDEN:
            if key in stored:
                out[key] = stored[key]
            continue
        out[key] = value
    return out
