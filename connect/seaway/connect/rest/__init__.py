"""Kafka Connect's REST API for a Seaway worker: ``create_app(herder)`` (see README.md)."""

from seaway.connect.rest.app import DEFAULT_REQUEST_TIMEOUT, create_app

__all__ = ["DEFAULT_REQUEST_TIMEOUT", "create_app"]
