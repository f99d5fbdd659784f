"""Plugin configuration: ConfigDef, validators, AbstractConfig (``org.apache.kafka.common.config``)."""

from seaway.connect.api.config.abstract import AbstractConfig
from seaway.connect.api.config.class_names import ClassAllowlist, allow_class_names, import_class
from seaway.connect.api.config.definition import Config, ConfigDef, ConfigKey, ConfigKeyInfo, ConfigValue
from seaway.connect.api.config.types import (
    NO_DEFAULT,
    ConfigType,
    Importance,
    Password,
    Width,
    convert_to_string,
    load_class,
    parse_value,
)
from seaway.connect.api.config.validators import (
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
    "AbstractConfig",
    "CaseInsensitiveValidString",
    "ClassAllowlist",
    "CompositeValidator",
    "Config",
    "ConfigDef",
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
    "allow_class_names",
    "convert_to_string",
    "import_class",
    "load_class",
    "parse_value",
]
