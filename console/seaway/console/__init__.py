"""Seaway's web console: connectors, topics and messages, consumer groups and lag, schemas and health.

A FastAPI app with server-rendered pages (Jinja2) and htmx for the parts that refresh or validate
as you type, its assets served from the package (no CDN). It talks to Kafka through the Kafka
protocol (confluent-kafka), to Connect and the registry through their REST APIs, and never
imports their servers (an import-linter contract): it works the same against Apache Kafka, Kafka
Connect and Confluent Schema Registry. ``seaway console`` runs it alone; ``seaway up`` starts it
beside the broker, the registry and the worker. See README.md beside this file and docs/console.md.
"""

from __future__ import annotations

from seaway.console.settings import ConsoleSettings, SettingsError, parse_settings

__all__ = ["ConsoleSettings", "SettingsError", "create_app", "parse_settings"]


def __getattr__(name: str) -> object:
    if name == "create_app":  # FastAPI and the pages load only when an app is built
        from seaway.console.app import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
