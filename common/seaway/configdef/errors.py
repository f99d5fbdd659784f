"""The one exception the config-definition engine raises (Kafka's ``ConfigException``).

It carries the key, the offending value and the reason separately, so each component can
turn it into its own exception type (Connect's ``ConfigError``, the broker's INVALID_CONFIG,
the registry's ``SettingsError``) without parsing a message, while the message itself is
already Kafka's wording: ``Invalid value <v> for configuration <key>: <reason>``.
"""

from __future__ import annotations

from seaway.errors import SeawayError

__all__ = ["ConfigException"]


class ConfigException(SeawayError):
    """A configuration value is missing or invalid; ``name``, ``value``, ``reason`` say which and why."""

    def __init__(self, message: str, *, name: str | None = None, value: object = None,
                 reason: str | None = None) -> None:
        super().__init__(message)
        self.name = name
        self.value = value
        self.reason = reason

    @classmethod
    def invalid(cls, name: str, value: object, reason: str | None = None) -> ConfigException:
        """Kafka's message shape: ``Invalid value <v> for configuration <name>: <reason>``.

        A subclass gets an instance of itself (Connect's ``ConfigError.invalid`` is this method).
        """
        shown = ("true" if value else "false") if isinstance(value, bool) else value  # as Java prints it
        message = f"Invalid value {shown} for configuration {name}"
        if reason:
            message += f": {reason}"
        return cls(message, name=name, value=value, reason=reason)

    @classmethod
    def missing(cls, name: str) -> ConfigException:
        """Kafka's message for a required key that is absent."""
        return cls(f'Missing required configuration "{name}" which has no default value.', name=name,
                   reason="no default value")
