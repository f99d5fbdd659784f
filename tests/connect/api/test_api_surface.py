"""Guards the public surface of seaway.connect.api: additions and removals must be deliberate."""

import ast
import pathlib

import seaway.connect.api as api

EXPECTED = {
    # errors
    "AlreadyExistsError", "ConfigError", "ConnectError", "DataError", "IllegalWorkerStateError",
    "NotFoundError", "RetriableError", "SchemaBuilderError", "SchemaProjectorError",
    # data
    "ConnectSchema", "Date", "Decimal", "Field", "Schema", "SchemaAndValue", "SchemaBuilder",
    "SchemaType", "Struct", "Time", "Timestamp", "Values", "java_string",
    # records and headers
    "ConnectRecord", "Header", "Headers", "OffsetAndMetadata", "RecordMetadata", "SinkRecord",
    "SourceRecord", "TimestampType", "TopicPartition",
    # the same records as columns (batches.py)
    "BytesRecordBatch", "SinkRecordBatch", "SourceRecordBatch",
    # connectors and tasks
    "Connector", "ConnectorContext", "Task", "group_partitions",
    "ConnectorTransactionBoundaries", "ExactlyOnceSupport", "OffsetStorageReader", "SourceConnector",
    "SourceConnectorContext", "SourceTask", "SourceTaskContext", "TransactionBoundary",
    "TransactionContext",
    "ErrantRecordReporter", "SinkConnector", "SinkConnectorContext", "SinkTask", "SinkTaskContext",
    # config
    "NO_DEFAULT", "AbstractConfig", "CaseInsensitiveValidString", "CompositeValidator", "Config",
    "ConfigDef", "ConfigKey", "ConfigKeyInfo", "ConfigType", "ConfigValue", "Importance",
    "LambdaValidator", "ListSize", "NonEmptyString", "NonEmptyStringWithoutControlChars",
    "NonNullValidator", "Password", "Range", "Recommender", "ValidList", "ValidString", "Validator",
    "Width",
    # converters, config providers, transforms
    "CONVERTER_TYPE_CONFIG", "Converter", "ConverterType", "HeaderConverter",
    "ConfigData", "ConfigProvider",
    "Predicate", "Transformation",
}


def test_all_is_exactly_the_expected_names() -> None:
    assert set(api.__all__) == EXPECTED
    assert len(api.__all__) == len(set(api.__all__)), "duplicate names in __all__"


def test_every_name_is_importable() -> None:
    for name in api.__all__:
        assert getattr(api, name) is not None, name


def test_api_package_imports_only_the_standard_library_and_itself() -> None:
    import sys

    root = pathlib.Path(api.__file__).parent
    # seaway.configdef: the config engine the API's ConfigDef is built on (stdlib-only itself, checked in
    # tests/common/test_configdef.py)
    allowed_internal = ("seaway.connect.api", "seaway.errors", "seaway.configdef")
    for path in root.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                modules = [node.module]
            elif isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            else:
                continue
            for module in modules:
                top = module.split(".")[0]
                if module.startswith(allowed_internal) or top == "__future__":
                    continue
                assert top in sys.stdlib_module_names, f"{path.name} imports {module}"
