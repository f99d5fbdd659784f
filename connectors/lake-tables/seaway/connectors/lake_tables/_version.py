"""The distribution's version, reported by the connectors and their tasks."""

VERSION = "0.1.0"
