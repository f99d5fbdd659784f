"""Runs the example connector in connect/seaway/connect/api/README.md, so the docs cannot rot."""

import pathlib
import re
from collections.abc import Iterable, Mapping
from typing import Any

import seaway.connect.api as api
from seaway.connect.api import OffsetStorageReader, SourceTaskContext

README = pathlib.Path(api.__file__).parent / "README.md"


class _Reader(OffsetStorageReader):
    def __init__(self, stored: dict[str, Any] | None) -> None:
        self.stored = stored

    def offsets(self, partitions: Iterable[Mapping[str, Any]]
                ) -> list[tuple[Mapping[str, Any], dict[str, Any] | None]]:
        return [(p, self.stored) for p in partitions]


class _TaskContext(SourceTaskContext):
    def __init__(self, stored: dict[str, Any] | None) -> None:
        self.reader = _Reader(stored)

    def configs(self) -> dict[str, str]:
        return {}

    def offset_storage_reader(self) -> OffsetStorageReader:
        return self.reader


def _example() -> dict[str, Any]:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    namespace: dict[str, Any] = {}
    exec(blocks[-1], namespace)
    return namespace


def test_readme_connector_runs_and_resumes_from_offsets() -> None:
    ns = _example()
    connector = ns["CounterConnector"]()
    connector.start({"topic": "numbers", "count": "3"})
    assert connector.validate({"topic": "numbers"}).error_count == 0
    assert connector.validate({"count": "0"}).error_count == 2
    [config] = connector.task_configs(4)
    task = connector.task_class()()
    task.initialize(_TaskContext({"n": 1}))  # one record was already committed
    task.start(config)
    values = []
    while (batch := task.poll()) is not None:
        values += [r.value for r in batch]
    assert values == [1, 2]
    assert task.context.offset_storage_reader().offset({"counter": "main"}) == {"n": 1}
