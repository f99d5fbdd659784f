"""The plugin docs show one example, and it is the one the tests install and run (issue 15.6).

``connect/seaway/connect/api/README.md`` shows the example's module and ``docs/connect.md`` its
``pyproject.toml`` and its own test, each verbatim from ``tests/plugins/acme-connectors/`` (the
distribution ``tests/plugins/test_plugin_install.py`` pip-installs into a running worker). The
README's code is also run here against small stand-ins for the runtime's contexts.
"""

import pathlib
import re
import tomllib
from collections.abc import Iterable, Mapping
from typing import Any

import seaway.connect.api as api
from seaway.connect.api import OffsetStorageReader, SourceTaskContext

ROOT = pathlib.Path(__file__).resolve().parents[3]
README = pathlib.Path(api.__file__).parent / "README.md"
DOCS = ROOT / "docs" / "connect.md"
EXAMPLE = ROOT / "tests" / "plugins" / "acme-connectors"


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


def _blocks(path: pathlib.Path, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", path.read_text(), re.S)


def test_the_docs_show_the_installed_example_verbatim() -> None:
    assert _blocks(README, "python")[-1] == (EXAMPLE / "acme_connectors" / "__init__.py").read_text()
    pyproject = (EXAMPLE / "pyproject.toml").read_text()
    assert [b for b in _blocks(DOCS, "toml") if "acme-connectors" in b] == ["# pyproject.toml\n" + pyproject]
    own_test = (EXAMPLE / "tests" / "test_counter_source.py").read_text()
    assert own_test in _blocks(DOCS, "python")
    # every class the entry points name is defined by the example's module
    entry_points = tomllib.loads(pyproject)["project"]["entry-points"]
    targets = [target for group in entry_points.values() for target in group.values()]
    assert targets == ["acme_connectors:CounterSourceConnector", "acme_connectors:Shout"]
    namespace = _example()
    assert all(target.split(":")[1] in namespace for target in targets)


def test_the_testing_extra_brings_what_the_harness_needs() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    names = {re.split(r"[=<>\[]", requirement)[0] for requirement in extras["testing"]}
    assert names == {"pytest", "pytest-asyncio", "pytest-timeout"}
    assert set(extras["testing"]) <= set(extras["dev"])  # the same pins the project's own suite runs with


def _example() -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    exec(_blocks(README, "python")[-1], namespace)
    return namespace


def test_readme_connector_runs_and_resumes_from_offsets() -> None:
    ns = _example()
    connector = ns["CounterSourceConnector"]()
    connector.start({"topic": "numbers", "count": "3"})
    assert connector.validate({"topic": "numbers"}).error_count == 0
    assert connector.validate({"count": "0"}).error_count == 2
    [config] = connector.task_configs(4)
    task = connector.task_class()()
    task.initialize(_TaskContext({"next": 1}))  # one record was already committed
    task.start(config)
    records = []
    while (batch := task.poll()) is not None:
        records += batch
    assert [r.value for r in records] == ["value 1", "value 2"]
    assert [r.source_offset for r in records] == [{"next": 2}, {"next": 3}]
    shouted = ns["Shout"]().apply(records[0])
    assert shouted.value == "VALUE 1" and shouted.source_offset == {"next": 2}
