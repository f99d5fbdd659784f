"""The distribution's version, reported by the connector and its tasks."""

VERSION = "0.1.0"
