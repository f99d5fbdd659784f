"""One config-definition engine for every Seaway component (Kafka's ``ConfigDef`` semantics).

Connect's plugin API (``seaway.connect.api.config``), the broker's broker and topic configs and
the schema registry's settings all define their keys here: a key's type, default, validation
and doc live in one :class:`ConfigDef` table, values parse with Kafka's rules and Kafka's error
texts, and :func:`render_markdown` turns a table into the docs' reference. Standard library
only: the engine knows no component (a CLASS value is resolved by a class loader the caller
passes in), and each component maps :class:`ConfigException` to its own exception type.
"""

from seaway.configdef.definition import Config, ConfigDef, ConfigKey, ConfigKeyInfo, ConfigValue
from seaway.configdef.errors import ConfigException
from seaway.configdef.markdown import render_markdown
from seaway.configdef.types import (
    NO_DEFAULT,
    ClassLoader,
    ConfigType,
    Importance,
    Password,
    Width,
    convert_to_string,
    parse_boolean,
    parse_class,
    parse_double,
    parse_integer,
    parse_list,
    parse_password,
    parse_string,
    parse_value,
)
from seaway.configdef.validators import (
    CaseInsensitiveValidString,
    CompositeValidator,
    LambdaValidator,
    ListSize,
    NonEmptyString,
    NonEmptyStringWithoutControlChars,
    NonNullValidator,
    Range,
    Recommender,
    Validator,
    ValidList,
    ValidString,
)

__all__ = [
    "NO_DEFAULT",
    "CaseInsensitiveValidString",
    "ClassLoader",
    "CompositeValidator",
    "Config",
    "ConfigDef",
    "ConfigException",
    "ConfigKey",
    "ConfigKeyInfo",
    "ConfigType",
    "ConfigValue",
    "Importance",
    "LambdaValidator",
    "ListSize",
    "NonEmptyString",
    "NonEmptyStringWithoutControlChars",
    "NonNullValidator",
    "Password",
    "Range",
    "Recommender",
    "ValidList",
    "ValidString",
    "Validator",
    "Width",
    "convert_to_string",
    "parse_boolean",
    "parse_class",
    "parse_double",
    "parse_integer",
    "parse_list",
    "parse_password",
    "parse_string",
    "parse_value",
    "render_markdown",
]
