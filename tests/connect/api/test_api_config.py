"""ConfigDef parsing, validators, validate(), ConfigKeyInfo, AbstractConfig, Password."""

from typing import Any

import pytest
from seaway.connect.api import (
    NO_DEFAULT,
    AbstractConfig,
    CaseInsensitiveValidString,
    CompositeValidator,
    ConfigDef,
    ConfigError,
    ConfigType,
    Importance,
    LambdaValidator,
    ListSize,
    NonEmptyString,
    NonEmptyStringWithoutControlChars,
    Password,
    Range,
    Recommender,
    ValidList,
    ValidString,
    Width,
)
from seaway.connect.api.config import allow_class_names
from seaway.connect.converters import JsonConverter


@pytest.mark.parametrize(("config_type", "raw", "parsed"), [
    (ConfigType.BOOLEAN, "TRUE", True),
    (ConfigType.BOOLEAN, " false ", False),
    (ConfigType.BOOLEAN, True, True),
    (ConfigType.STRING, "  padded ", "padded"),
    (ConfigType.INT, "2147483647", 2147483647),
    (ConfigType.SHORT, "-32768", -32768),
    (ConfigType.LONG, "9223372036854775807", 2**63 - 1),
    (ConfigType.DOUBLE, "1.5", 1.5),
    (ConfigType.DOUBLE, 2, 2.0),
    (ConfigType.LIST, "a, b ,c", ["a", "b", "c"]),
    (ConfigType.LIST, "", []),
    (ConfigType.LIST, ["x"], ["x"]),
    (ConfigType.CLASS, "JsonConverter", JsonConverter),  # an installed plugin, by entry-point name
    (ConfigType.CLASS, "seaway.connect.converters:JsonConverter", JsonConverter),  # ... or by its target
    (ConfigType.CLASS, "seaway.connect.converters.JsonConverter", JsonConverter),
    (ConfigType.PASSWORD, "s3cret", Password("s3cret")),
])
def test_parse_every_type(config_type: ConfigType, raw: Any, parsed: Any) -> None:
    definition = ConfigDef().define("k", config_type)
    assert definition.parse({"k": raw})["k"] == parsed


@pytest.mark.parametrize(("config_type", "raw"), [
    (ConfigType.BOOLEAN, "yes"),
    (ConfigType.INT, "2147483648"),
    (ConfigType.SHORT, "40000"),
    (ConfigType.INT, "1.5"),
    (ConfigType.INT, True),
    (ConfigType.DOUBLE, "abc"),
    (ConfigType.CLASS, "no.such.module.Thing"),
    (ConfigType.CLASS, "collections.OrderedDict"),  # importable, but not a plugin nor allowlisted
    (ConfigType.CLASS, "..x"),
    (ConfigType.STRING, 5),
])
def test_parse_errors_name_the_key(config_type: ConfigType, raw: Any) -> None:
    definition = ConfigDef().define("my.key", config_type)
    with pytest.raises(ConfigError, match=r"for configuration my\.key") as info:
        definition.parse({"my.key": raw})
    assert info.value.name == "my.key"


def test_missing_required_and_defaults() -> None:
    definition = (ConfigDef().define("required", ConfigType.STRING)
                  .define("optional", ConfigType.INT, "5").define("nullable", ConfigType.STRING, None))
    with pytest.raises(ConfigError, match=r'Missing required configuration "required" which has no default value\.'):
        definition.parse({})
    assert definition.parse({"required": "x"}) == {"required": "x", "optional": 5, "nullable": None}


def test_bad_default_fails_at_definition_time() -> None:
    with pytest.raises(ConfigError):
        ConfigDef().define("n", ConfigType.INT, 0, Range.at_least(1))
    with pytest.raises(ConfigError, match="defined twice"):
        ConfigDef().define("n", ConfigType.INT, 1).define("n", ConfigType.INT, 1)


def test_validators() -> None:
    cases: list[tuple[Any, Any, Any, str]] = [
        (Range.at_least(1), 1, 0, "at least 1"),
        (Range.between(1, 10), 10, 11, "no more than 10"),
        (ValidString.in_("a", "b"), "a", "A", "one of: a, b"),
        (CaseInsensitiveValidString.in_("BASE64", "NUMERIC"), "numeric", "hex", "case insensitive"),
        (ValidList.in_("x", "y"), ["x", "y"], ["x", "z"], "one of: x, y"),
        (NonEmptyString(), "a", " ", "non-empty"),
        (NonEmptyStringWithoutControlChars(), "a", "a\nb", "control"),
        (ListSize.at_most_of_size(1), ["a"], ["a", "b"], "maximum list size"),
        (CompositeValidator.of(NonEmptyString(), ValidString.in_("a")), "a", "b", "one of"),
    ]
    for validator, good, bad, message in cases:
        validator.ensure_valid("k", good)
        with pytest.raises(ConfigError, match=message):
            validator.ensure_valid("k", bad)

    def even(name: str, value: Any) -> None:
        if value % 2:
            raise ConfigError.invalid(name, value, "must be even")

    lam = LambdaValidator.with_(even, "even numbers")
    lam.ensure_valid("k", 2)
    with pytest.raises(ConfigError, match="Invalid value 3 for configuration k: must be even"):
        lam.ensure_valid("k", 3)
    assert str(lam) == "even numbers" and str(Range.between(1, 10)) == "[1,...,10]"


class _TablesRecommender(Recommender):
    def valid_values(self, name: str, parsed_config: Any) -> list[Any]:
        return ["users", "orders"] if parsed_config.get("mode") == "table" else []

    def visible(self, name: str, parsed_config: Any) -> bool:
        return bool(parsed_config.get("mode") == "table")


def test_validate_collects_every_error_and_runs_recommenders() -> None:
    definition = (ConfigDef()
                  .define("url", ConfigType.STRING, NO_DEFAULT, NonEmptyString(), Importance.HIGH, "URL")
                  .define("batch", ConfigType.INT, 100, Range.at_least(1), Importance.LOW, "Batch")
                  .define("flag", ConfigType.BOOLEAN, False)
                  .define("mode", ConfigType.STRING, "table", ValidString.in_("table", "query"))
                  .define("table", ConfigType.STRING, None, recommender=_TablesRecommender()))
    values = {v.name: v for v in definition.validate({"batch": "0", "flag": "maybe", "mode": "table"})}
    assert list(values) == ["url", "batch", "flag", "mode", "table"]
    assert values["url"].errors == ['Missing required configuration "url" which has no default value.']
    assert values["batch"].errors == ["Invalid value 0 for configuration batch: Value must be at least 1"]
    assert values["flag"].errors and "true or false" in values["flag"].errors[0]
    assert values["mode"].errors == [] and values["mode"].value == "table"
    assert values["table"].recommended_values == ["users", "orders"] and values["table"].visible
    hidden = {v.name: v for v in definition.validate({"url": "x", "mode": "query"})}
    assert not hidden["table"].visible and hidden["table"].recommended_values == []
    assert all(not v.errors for v in hidden.values())


def test_config_key_info_matches_the_rest_shape() -> None:
    definition = (ConfigDef()
                  .define("topics", ConfigType.LIST, ["a", "b"], None, Importance.HIGH, "Topics.",
                          "Common", 1, Width.LONG, "Topics", ("other",))
                  .define("secret", ConfigType.PASSWORD, NO_DEFAULT, None, Importance.HIGH, "Secret.")
                  .define_internal("internal.only", ConfigType.STRING, "x"))
    infos = [i.to_dict() for i in definition.config_key_infos()]
    assert infos == [
        {"name": "topics", "type": "LIST", "required": False, "default_value": "a,b", "importance": "HIGH",
         "documentation": "Topics.", "group": "Common", "order": 1, "width": "LONG", "display_name": "Topics",
         "dependents": ["other"]},
        {"name": "secret", "type": "PASSWORD", "required": True, "default_value": None, "importance": "HIGH",
         "documentation": "Secret.", "group": None, "order": -1, "width": "NONE", "display_name": "secret",
         "dependents": []},
    ]
    assert definition.groups() == ["Common"]
    assert list(definition.config_keys()) == ["topics", "secret", "internal.only"]


def test_password_is_hidden() -> None:
    password = Password("hunter2")
    assert str(password) == "[hidden]" and "hunter2" not in repr(password)
    assert password.value == "hunter2"
    config = AbstractConfig(ConfigDef().define("pw", ConfigType.PASSWORD), {"pw": "hunter2"})
    assert "hunter2" not in repr(config) and "hunter2" not in str(config.values())
    assert config.get_password("pw") == Password("hunter2")


def test_abstract_config_typed_getters_and_prefixes() -> None:
    definition = (ConfigDef().define("name", ConfigType.STRING).define("tasks", ConfigType.INT, 1)
                  .define("topics", ConfigType.LIST, "").define("ratio", ConfigType.DOUBLE, 0.5)
                  .define("on", ConfigType.BOOLEAN, True))
    config = AbstractConfig(definition, {"name": "c", "tasks": "3", "topics": "x,y",
                                         "transforms.a.type": "T", "transforms.a.field": "f", "extra": 1})
    assert config.get_string("name") == "c" and config.get_int("tasks") == 3
    assert config.get_list("topics") == ["x", "y"] and config.get_double("ratio") == 0.5
    assert config.get_boolean("on") is True
    assert config.originals_with_prefix("transforms.a.") == {"type": "T", "field": "f"}
    assert config.originals_with_prefix("transforms.a.", strip=False) == {
        "transforms.a.type": "T", "transforms.a.field": "f"}
    assert config.originals()["extra"] == 1 and config.originals_strings()["extra"] == "1"
    with pytest.raises(ConfigError, match="Unknown configuration"):
        config.get("nope")
    with pytest.raises(ConfigError):
        config.get_int("name")


def test_embed_prefixes_child_keys() -> None:
    child = ConfigDef().define("field", ConfigType.STRING, NO_DEFAULT, None, Importance.HIGH, "Field.")
    parent = ConfigDef().embed("transforms.a.", "Transforms: a", 0, child)
    assert parent.config_keys()["transforms.a.field"].group == "Transforms: a"
    assert parent.parse({"transforms.a.field": "x"}) == {"transforms.a.field": "x"}


class Allowed:
    """Named by the allowlist test below."""


def test_class_values_import_only_installed_plugins_or_allowlisted_names() -> None:
    import sys

    definition = ConfigDef().define("k", ConfigType.CLASS)
    for name in ("this.X", "this:X"):  # a module whose import has a side effect (it prints)
        with pytest.raises(ConfigError, match=r"plugin\.allowlist"):
            definition.parse({"k": name})
    assert "this" not in sys.modules
    with pytest.raises(ConfigError, match=r"plugin\.allowlist"):
        definition.parse({"k": f"{__name__}.Allowed"})
    allow_class_names([f"{__name__}.Allowed"])
    assert definition.parse({"k": f"{__name__}.Allowed"})["k"] is Allowed
    assert definition.parse({"k": f"{__name__}:Allowed"})["k"] is Allowed


def test_a_class_default_in_code_is_trusted() -> None:
    import collections

    definition = ConfigDef().define("k", ConfigType.CLASS, "collections.OrderedDict")
    assert definition.parse({})["k"] is collections.OrderedDict
