"""Built-in config providers and placeholder resolution (KIP-297, Kafka's ``ConfigTransformer``).

A worker configured with::

    config.providers=file,env,dir
    config.providers.file.class=FileConfigProvider
    config.providers.env.class=EnvVarConfigProvider
    config.providers.dir.class=DirectoryConfigProvider

resolves, in connector configs, ``${file:/etc/db.properties:password}`` (a key of a
``.properties`` file), ``${env:DB_PASSWORD}`` (an environment variable; ``${env::VAR}`` also
works, as Kafka writes it) and ``${dir:/run/secrets:db_password}`` (a file's whole content in a
directory). Placeholders are resolved only when a connector or task starts (and for
validation); stored configs, ``GET .../config``, statuses and logs keep the placeholders.

``EnvVarConfigProvider`` takes Kafka's ``env.var.allowlist`` parameter
(``config.providers.env.param.env.var.allowlist=DB_PASSWORD,API_KEY``): when set, only those
variables may be read. File and directory providers take ``allowed.paths`` (a comma list of
directories) the same way.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import traceback
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from seaway.connect.api import ConfigData, ConfigError, ConfigProvider
from seaway.properties import load_properties_file

__all__ = [
    "REDACTOR",
    "ConfigTransformer",
    "DirectoryConfigProvider",
    "EnvVarConfigProvider",
    "FileConfigProvider",
    "SecretRedactor",
    "TransformResult",
    "has_placeholders",
    "scrub",
]

PLACEHOLDER = re.compile(r"\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}")
"""Kafka's ``ConfigTransformer.DEFAULT_PATTERN``: ``${provider:[path:]key}``."""


def has_placeholders(value: str | None) -> bool:
    return value is not None and PLACEHOLDER.search(value) is not None


class _PathGuard:
    """``allowed.paths``: restricts which files a provider may read (Kafka's AllowedPaths)."""

    def __init__(self) -> None:
        self.allowed: list[Path] | None = None

    def configure(self, configs: Mapping[str, Any]) -> None:
        raw = str(configs.get("allowed.paths", "") or "").strip()
        self.allowed = [Path(p.strip()).resolve() for p in raw.split(",") if p.strip()] if raw else None

    def check(self, path: str) -> Path | None:
        resolved = Path(path).resolve()
        if self.allowed is None or any(resolved == a or a in resolved.parents for a in self.allowed):
            return resolved
        return None


class FileConfigProvider(ConfigProvider):
    """``${file:<path>:<key>}``: a key of a ``.properties`` file (re-read on every resolution).

    The file is read as Kafka's provider reads it, with ``java.util.Properties.load``'s rules
    (:mod:`seaway.properties`): a value keeps its trailing white space.
    """

    def __init__(self) -> None:
        self._guard = _PathGuard()

    def configure(self, configs: Mapping[str, Any]) -> None:
        self._guard.configure(configs)

    def get(self, path: str, keys: Iterable[str] | None = None) -> ConfigData:
        if not path:
            return ConfigData({})
        resolved = self._guard.check(path)
        if resolved is None:
            return ConfigData({})
        try:
            props = load_properties_file(resolved)
        except OSError as e:
            raise ConfigError(f"Could not read properties from file {path}: {e.strerror}") from None
        except ValueError as e:  # not UTF-8, or a malformed \uXXXX escape Java would refuse too
            raise ConfigError(f"Could not read properties from file {path}: {e}") from None
        if keys is None:
            return ConfigData(props)
        wanted = set(keys)
        return ConfigData({k: v for k, v in props.items() if k in wanted})


class DirectoryConfigProvider(ConfigProvider):
    """``${dir:<directory>:<file>}``: a file's content (e.g. Docker/Kubernetes secrets)."""

    def __init__(self) -> None:
        self._guard = _PathGuard()

    def configure(self, configs: Mapping[str, Any]) -> None:
        self._guard.configure(configs)

    def get(self, path: str, keys: Iterable[str] | None = None) -> ConfigData:
        directory = self._guard.check(path) if path else None
        if directory is None or not directory.is_dir():
            return ConfigData({})
        names = [p.name for p in directory.iterdir() if p.is_file()] if keys is None else list(keys)
        data: dict[str, str] = {}
        for name in names:
            candidate = directory / name
            if candidate.parent != directory or not candidate.is_file():
                continue  # no escaping the directory with "../x"
            data[name] = candidate.read_text(encoding="utf-8")
        return ConfigData(data)


class EnvVarConfigProvider(ConfigProvider):
    """``${env:<VAR>}``: environment variables, optionally limited by ``env.var.allowlist``."""

    def __init__(self) -> None:
        self._allowlist: set[str] | None = None

    def configure(self, configs: Mapping[str, Any]) -> None:
        raw = str(configs.get("env.var.allowlist", "") or "").strip()
        self._allowlist = {v.strip() for v in raw.split(",") if v.strip()} if raw else None

    def get(self, path: str, keys: Iterable[str] | None = None) -> ConfigData:
        if path:
            return ConfigData({})  # Kafka: a path is not supported; nothing is returned
        env = {k: v for k, v in os.environ.items() if self._allowlist is None or k in self._allowlist}
        if keys is None:
            return ConfigData(env)
        return ConfigData({k: env[k] for k in keys if k in env})


@dataclass(frozen=True, slots=True)
class TransformResult:
    """Resolved configs plus the secret values substituted in (to scrub them from traces)."""

    data: dict[str, str]
    secrets: frozenset[str] = field(default_factory=frozenset)
    ttls: dict[str, int] = field(default_factory=dict)


class ConfigTransformer:
    """Replaces ``${provider:[path:]key}`` with provider values; unknown references stay as they are."""

    def __init__(self, providers: Mapping[str, ConfigProvider]) -> None:
        self._providers = dict(providers)

    @property
    def providers(self) -> dict[str, ConfigProvider]:
        return dict(self._providers)

    def transform(self, configs: Mapping[str, str | None]) -> TransformResult:
        wanted: dict[tuple[str, str], set[str]] = {}
        for value in configs.values():
            for m in PLACEHOLDER.finditer(value or ""):
                if m.group(1) in self._providers:
                    wanted.setdefault((m.group(1), m.group(3) or ""), set()).add(m.group(4))
        if not wanted:
            return TransformResult({k: v for k, v in configs.items() if v is not None})
        found: dict[tuple[str, str], Mapping[str, str]] = {}
        ttls: dict[str, int] = {}
        for (provider, path), keys in wanted.items():
            data = self._providers[provider].get(path, keys)
            found[(provider, path)] = data.data
            if data.ttl is not None:
                ttls[path] = data.ttl
        secrets: set[str] = set()

        def substitute(m: re.Match[str]) -> str:
            values = found.get((m.group(1), m.group(3) or ""))
            if values is None or m.group(4) not in values:
                return m.group(0)
            secret = values[m.group(4)]
            if secret:
                secrets.add(secret)
            return secret

        resolved = {k: PLACEHOLDER.sub(substitute, v) for k, v in configs.items() if v is not None}
        return TransformResult(resolved, frozenset(secrets), ttls)


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret replaced by ``[hidden]`` (for traces and log lines)."""
    for secret in sorted(secrets, key=len, reverse=True):
        if len(secret) >= 3:
            text = text.replace(secret, "[hidden]")
    return text


class SecretRedactor(logging.Filter):
    """A logging filter replacing every resolved secret with ``[hidden]``, message and traceback alike.

    The worker registers the values it substituted for placeholders; the runtime's loggers
    carry this filter, so an exception whose message quotes a secret (a failed login, say) is
    logged without it. Plugins' own loggers are theirs to keep clean.
    """

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._secrets: frozenset[str] = frozenset()

    def add(self, secrets: Iterable[str]) -> None:
        with self._lock:
            self._secrets = self._secrets | {s for s in secrets if len(s) >= 3}

    def filter(self, record: logging.LogRecord) -> bool:
        secrets = self._secrets
        if not secrets:
            return True
        message = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            message += "\n" + "".join(traceback.format_exception(record.exc_info[1])).rstrip()
            record.exc_info = None
            record.exc_text = None
        if any(s in message for s in secrets):
            message = scrub(message, secrets)
        record.msg, record.args = message, ()
        return True


REDACTOR = SecretRedactor()
"""The process-wide redactor the runtime's loggers use."""
