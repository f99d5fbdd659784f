"""seaway.configdef: Kafka's ConfigDef semantics (types, bounds, lists, validators, defaults, errors, docs)."""

from __future__ import annotations

import ast
import pathlib
import sys
from typing import Any

import pytest
from seaway.configdef import (
    NO_DEFAULT,
    CaseInsensitiveValidString,
    CompositeValidator,
    ConfigDef,
    ConfigException,
    ConfigType,
    Importance,
    LambdaValidator,
    ListSize,
    NonEmptyString,
    NonEmptyStringWithoutControlChars,
    NonNullValidator,
    Password,
    Range,
    Recommender,
    ValidList,
    ValidString,
    convert_to_string,
    parse_value,
    render_markdown,
)
from seaway.errors import SeawayError


def test_wire_codes_are_describe_configs_codes() -> None:
    assert [(t.value, t.wire_code) for t in ConfigType] == [
        ("BOOLEAN", 1), ("STRING", 2), ("INT", 3), ("SHORT", 4), ("LONG", 5), ("DOUBLE", 6), ("LIST", 7),
        ("CLASS", 8), ("PASSWORD", 9)]


@pytest.mark.parametrize(("config_type", "raw", "parsed"), [
    (ConfigType.BOOLEAN, " TRUE ", True), (ConfigType.BOOLEAN, "false", False), (ConfigType.BOOLEAN, False, False),
    (ConfigType.STRING, "  padded ", "padded"),
    (ConfigType.SHORT, "-32768", -32768), (ConfigType.SHORT, "32767", 32767),
    (ConfigType.INT, "-2147483648", -2**31), (ConfigType.INT, "+2147483647", 2**31 - 1), (ConfigType.INT, 7, 7),
    (ConfigType.LONG, "-9223372036854775808", -2**63), (ConfigType.LONG, "9223372036854775807", 2**63 - 1),
    (ConfigType.DOUBLE, "1.5", 1.5), (ConfigType.DOUBLE, 2, 2.0),
    (ConfigType.LIST, "a , b,c", ["a", "b", "c"]), (ConfigType.LIST, "", []), (ConfigType.LIST, ("x",), ["x"]),
    (ConfigType.LIST, "a,,b", ["a", "", "b"]),
    (ConfigType.PASSWORD, "s3cret", Password("s3cret")),
    (ConfigType.CLASS, dict, dict),
    (ConfigType.STRING, None, None),
])
def test_every_type_parses_as_kafka(config_type: ConfigType, raw: Any, parsed: Any) -> None:
    assert parse_value("k", raw, config_type) == parsed


@pytest.mark.parametrize(("config_type", "raw", "reason"), [
    (ConfigType.BOOLEAN, "yes", "Expected value to be either true or false"),
    (ConfigType.BOOLEAN, 1, "Expected value to be either true or false"),
    (ConfigType.STRING, 5, "Expected value to be a string, but it was a int"),
    (ConfigType.SHORT, "32768", "Not a number of type SHORT"),
    (ConfigType.SHORT, "-32769", "Not a number of type SHORT"),
    (ConfigType.INT, "2147483648", "Not a number of type INT"),
    (ConfigType.INT, "-2147483649", "Not a number of type INT"),
    (ConfigType.INT, "1.5", "Not a number of type INT"),
    (ConfigType.INT, "1_000", "Not a number of type INT"),  # Python's int() takes it; Java's parseInt does not
    (ConfigType.INT, True, "Expected value to be a 32-bit integer"),
    (ConfigType.LONG, "9223372036854775808", "Not a number of type LONG"),
    (ConfigType.LONG, "-9223372036854775809", "Not a number of type LONG"),
    (ConfigType.LONG, "abc", "Not a number of type LONG"),
    (ConfigType.DOUBLE, "abc", "Not a number of type DOUBLE"),
    (ConfigType.DOUBLE, True, "Expected value to be a double"),
    (ConfigType.LIST, 5, "Expected a comma separated list."),
    (ConfigType.PASSWORD, 5, "Expected value to be a string"),
    (ConfigType.CLASS, 5, "Expected a Class instance or class name."),
])
def test_bad_values_fail_with_kafkas_reason_naming_the_key(config_type: ConfigType, raw: Any, reason: str) -> None:
    with pytest.raises(ConfigException) as info:
        parse_value("my.key", raw, config_type)
    error = info.value
    assert (error.name, error.reason) == ("my.key", reason)
    shown = ("true" if raw else "false") if isinstance(raw, bool) else raw
    assert str(error) == f"Invalid value {shown} for configuration my.key: {reason}"
    assert isinstance(error, SeawayError)


def test_class_values_go_through_the_callers_loader_only() -> None:
    with pytest.raises(ConfigException, match="no class loader"):
        parse_value("k", "collections.OrderedDict", ConfigType.CLASS)

    def loader(name: str) -> type:
        if name == "dict":
            return dict
        raise ImportError(f"Class {name} cannot be found")

    assert parse_value("k", " dict ", ConfigType.CLASS, loader) is dict
    with pytest.raises(ConfigException, match=r"^Invalid value x for configuration k: Class x cannot be found$"):
        parse_value("k", "x", ConfigType.CLASS, loader)
    table = ConfigDef(class_loader=loader).define("k", ConfigType.CLASS, "dict")
    assert table.parse({})["k"] is dict and table.parse({"k": "dict"})["k"] is dict


def test_ranges_and_their_descriptions() -> None:
    Range.between(1, 10).ensure_valid("k", 10)
    with pytest.raises(ConfigException, match=r"^Invalid value 0 for configuration k: Value must be at least 1$"):
        Range.at_least(1).ensure_valid("k", 0)
    with pytest.raises(ConfigException, match=r"^Invalid value 11 for configuration k: Value must be no more than 10$"):
        Range.between(1, 10).ensure_valid("k", 11)
    with pytest.raises(ConfigException, match="Value must be non-null"):
        Range.at_least(1).ensure_valid("k", None)
    assert (str(Range.at_least(1)), str(Range.between(1, 10)), str(Range(None, 5))) == (
        "[1,...]", "[1,...,10]", "[...,5]")


def test_string_and_list_validators() -> None:
    cases: list[tuple[Any, Any, Any, str]] = [
        (ValidString.in_("a", "b"), "a", "A", "String must be one of: a, b"),
        (CaseInsensitiveValidString.in_("NONE", "REQUIRED"), "required", "x", "one of (case insensitive): NONE"),
        (ValidList.in_("compact", "delete"), ["compact", "delete"], ["compact", "forever"], "one of: compact, delete"),
        (NonEmptyString(), "a", " ", "String must be non-empty"),
        (NonEmptyStringWithoutControlChars(), "a", "a\x07", "control sequences"),
        (NonNullValidator(), 0, None, "entry must be non null"),
        (ListSize.at_most_of_size(1), ["a"], ["a", "b"], "exceeds maximum list size of [1]."),
        (CompositeValidator.of(NonEmptyString(), ValidString.in_("a")), "a", "b", "one of: a"),
    ]
    for validator, good, bad, reason in cases:
        validator.ensure_valid("k", good)
        with pytest.raises(ConfigException) as info:
            validator.ensure_valid("k", bad)
        assert reason in str(info.value)
    with pytest.raises(ConfigException, match=r"^Invalid value forever for configuration k: "):
        ValidList.in_("compact", "delete").ensure_valid("k", ["compact", "forever"])  # the bad item is named
    assert str(ValidString.in_("a", "b")) == "[a, b]"


def test_a_component_rebinds_the_error_type() -> None:
    class ComponentError(ConfigException):
        pass

    class ComponentRange(Range):
        error = ComponentError

    class ComponentDef(ConfigDef):
        error = ComponentError

    with pytest.raises(ComponentError):
        ComponentRange.at_least(1).ensure_valid("k", 0)
    table = ComponentDef().define("k", ConfigType.INT, 1, Range.at_least(1))
    for props in ({"k": "x"}, {"k": "0"}):
        with pytest.raises(ComponentError) as info:
            table.parse(props)
        assert info.value.name == "k"
    with pytest.raises(ComponentError, match="defined twice"):
        table.define("k", ConfigType.INT)


def test_no_default_means_required_and_none_is_a_default() -> None:
    table = (ConfigDef().define("required", ConfigType.STRING).define("optional", ConfigType.INT, "5")
             .define("nullable", ConfigType.STRING, None))
    assert table.key("required").required and not table.key("nullable").required
    with pytest.raises(ConfigException, match=r'^Missing required configuration "required" which has no default'):
        table.parse({})
    assert table.parse({"required": "x"}) == {"required": "x", "optional": 5, "nullable": None}
    assert repr(NO_DEFAULT) == "NO_DEFAULT"
    with pytest.raises(ConfigException, match="Value must be at least 1"):  # a bad default fails at definition
        ConfigDef().define("n", ConfigType.INT, 0, Range.at_least(1))


def test_parse_key_and_validate_collect_every_error() -> None:
    class Modes(Recommender):
        def valid_values(self, name: str, parsed_config: Any) -> list[Any]:
            return ["a", "b"] if parsed_config.get("on") else []

    table = (ConfigDef().define("url", ConfigType.STRING, NO_DEFAULT, NonEmptyString(), Importance.HIGH, "URL")
             .define("batch", ConfigType.INT, 100, Range.at_least(1))
             .define("on", ConfigType.BOOLEAN, True)
             .define("mode", ConfigType.STRING, None, recommender=Modes()))
    assert table.parse_key("batch", " 7 ") == 7
    with pytest.raises(ConfigException, match=r"^Invalid value 0 for configuration batch"):
        table.parse_key("batch", "0")
    values = {v.name: v for v in table.validate({"batch": "0", "on": "maybe"})}
    assert values["url"].errors == ['Missing required configuration "url" which has no default value.']
    assert values["batch"].errors == ["Invalid value 0 for configuration batch: Value must be at least 1"]
    assert values["on"].errors == [
        "Invalid value maybe for configuration on: Expected value to be either true or false"]
    assert values["mode"].recommended_values == [] and not values["mode"].errors
    assert {v.name: v.recommended_values for v in table.validate({"url": "u"})}["mode"] == ["a", "b"]


def test_lambda_validators_and_strings_as_properties_hold_them() -> None:
    def even(name: str, value: Any) -> None:
        if value % 2:
            raise ConfigException.invalid(name, value, "must be even")

    with pytest.raises(ConfigException, match=r"^Invalid value 3 for configuration k: must be even$"):
        LambdaValidator.with_(even, "even numbers").ensure_valid("k", 3)
    assert [convert_to_string(v) for v in (True, ["a", "b"], ("x",), 1.5, None, dict)] == [
        "true", "a,b", "x", "1.5", None, "builtins.dict"]
    assert str(Password("hunter2")) == "[hidden]" and "hunter2" not in repr(Password("hunter2"))


def test_the_markdown_renderer() -> None:
    table = (ConfigDef()
             .define("a.b", ConfigType.INT, 5, Range.between(1, 10), Importance.HIGH, "Some | doc\nover lines.")
             .define("req", ConfigType.STRING, NO_DEFAULT, None, Importance.LOW, "Required.")
             .define("null", ConfigType.LIST, None).define("empty", ConfigType.STRING, "")
             .define_internal("hidden", ConfigType.STRING, "x"))
    assert render_markdown(table, "Things", "Intro.") == (
        "## Things\n\nIntro.\n\n"
        "| Name | Type | Default | Valid values | Importance | Description |\n"
        "| ---- | ---- | ------- | ------------ | ---------- | ----------- |\n"
        "| `a.b` | INT | `5` | [1,...,10] | high | Some \\| doc over lines. |\n"
        "| `req` | STRING | *(required)* |  | low | Required. |\n"
        "| `null` | LIST | null |  | medium |  |\n"
        '| `empty` | STRING | `""` |  | medium |  |\n')
    assert "Importance" not in render_markdown(table, importance=False)
    extra = render_markdown(ConfigDef().define("x", ConfigType.INT, 1), extra=("Also", lambda key: key.name.upper()))
    assert extra.splitlines()[0] == "| Name | Type | Default | Valid values | Importance | Also | Description |"
    assert extra.splitlines()[2] == "| `x` | INT | `1` |  | medium | X |  |"


def test_the_engine_imports_only_the_standard_library_and_the_error_root() -> None:
    root = pathlib.Path(parse_value.__code__.co_filename).parent
    for path in root.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                modules = [node.module]
            elif isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            else:
                continue
            for module in modules:
                if module.startswith(("seaway.configdef", "seaway.errors")) or module == "__future__":
                    continue
                assert module.split(".")[0] in sys.stdlib_module_names, f"{path.name} imports {module}"
