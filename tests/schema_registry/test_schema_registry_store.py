"""The ``_schemas`` record format, replay, restart and compaction."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from seaway.schema_registry.errors import ErrorCode, RegistryError
from seaway.schema_registry.log import MemorySchemaLog
from seaway.schema_registry.schemas import SchemaReference
from seaway.schema_registry.service import RegistryService, SchemaRequest
from seaway.schema_registry.store import Mode, RegistryStore

REC = '{"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]}'
CANONICAL = '{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}'
REC2 = json.dumps(
    {
        "type": "record",
        "name": "R",
        "fields": [{"name": "a", "type": "int"}, {"name": "b", "type": "string", "default": ""}],
    }
)


def service(log: MemorySchemaLog) -> RegistryService:
    svc = RegistryService(log)
    svc.start()
    return svc


def test_schema_record_is_confluents_exact_key_and_value() -> None:
    log = MemorySchemaLog()
    assert service(log).register("orders-value", SchemaRequest(REC)) == 1
    [record] = log.records()
    assert record.offset == 0
    assert record.key == b'{"keytype":"SCHEMA","subject":"orders-value","version":1,"magic":1}'
    assert record.value == (
        b'{"subject":"orders-value","version":1,"id":1,'
        b'"schema":"{\\"type\\":\\"record\\",\\"name\\":\\"R\\",\\"fields\\":[{\\"name\\":\\"a\\",\\"type\\":\\"int\\"}]}",'
        b'"deleted":false,"schemaType":"AVRO"}'
    )
    assert json.loads(record.value)["schema"] == CANONICAL


def test_config_mode_and_delete_records() -> None:
    log = MemorySchemaLog()
    svc = service(log)
    svc.register("s", SchemaRequest(REC))
    svc.set_config(None, "full")
    svc.set_config("s", "none")
    svc.set_mode("s", "READONLY")
    svc.delete_mode("s")
    svc.delete_subject("s")
    svc.delete_subject("s", permanent=True)
    got = [(r.key, r.value) for r in log.records()[1:]]
    assert got == [
        (b'{"keytype":"CONFIG","magic":0}', b'{"compatibilityLevel":"FULL"}'),
        (b'{"keytype":"CONFIG","subject":"s","magic":0}', b'{"compatibilityLevel":"NONE"}'),
        (b'{"keytype":"MODE","subject":"s","magic":0}', b'{"subject":"s","mode":"READONLY"}'),
        (b'{"keytype":"MODE","subject":"s","magic":0}', None),
        (b'{"keytype":"DELETE_SUBJECT","subject":"s","magic":0}', b'{"subject":"s","version":1}'),
        (b'{"keytype":"SCHEMA","subject":"s","version":1,"magic":1}', None),
        (b'{"keytype":"CONFIG","subject":"s","magic":0}', None),
    ]


def test_restart_replays_the_same_state_and_ids() -> None:
    log = MemorySchemaLog()
    first = service(log)
    assert first.register("a", SchemaRequest(REC)) == 1
    assert first.register("b", SchemaRequest(REC)) == 1  # same schema, same id in every subject
    assert first.register("a", SchemaRequest(REC2)) == 2
    first.set_config("a", "FULL")
    first.delete_version("a", 1)

    again = service(MemorySchemaLog(log.records()))
    assert [sv.version for sv in again.store.versions("a", deleted=True)] == [1, 2]
    assert again.store.version("a", 1) is not None and again.store.version("a", 1).deleted  # type: ignore[union-attr]
    assert again.get_config("a")["compatibilityLevel"] == "FULL"
    assert again.register("c", SchemaRequest(REC2)) == 2
    assert again.register("d", SchemaRequest('{"type":"string"}')) == 3


def test_compaction_keeps_the_state() -> None:
    log = MemorySchemaLog()
    svc = service(log)
    svc.register("a", SchemaRequest(REC))
    svc.register("a", SchemaRequest(REC2))
    svc.set_config(None, "NONE")
    svc.set_config(None, "FULL")
    svc.delete_subject("a")
    log.compact()
    assert len(log.records()) == 4  # two versions, the last config, the delete marker
    replayed = service(MemorySchemaLog(log.records()))
    assert replayed.list_subjects() == []
    assert replayed.list_subjects(deleted=True) == ["a"]
    assert replayed.get_config(None)["compatibilityLevel"] == "FULL"
    assert replayed.store.max_id == 2


def test_two_services_sharing_one_log_see_each_others_writes() -> None:
    log = MemorySchemaLog()
    one, two = service(log), service(log)
    assert one.register("a", SchemaRequest(REC)) == 1
    assert two.register("b", SchemaRequest(REC2)) == 2  # two catches up before allocating
    one.catch_up(log.end_offset() - 1)
    assert one.list_subjects() == ["a", "b"]


def test_undecodable_records_are_skipped() -> None:
    store = RegistryStore()
    store.apply(0, b"not json", b"{}")
    store.apply(1, b'{"keytype":"WHAT","magic":0}', b"{}")
    store.apply(2, b'{"keytype":"NOOP","magic":0}', None)
    store.apply(3, b'{"keytype":"MODE","subject":null,"magic":0}', b'{"mode":"IMPORT"}')
    assert store.skipped_records == 2
    assert store.applied_offset == 3
    assert store.global_mode is Mode.IMPORT


def test_replays_records_written_by_confluent_and_karapace() -> None:
    """Records as other registries write them: Karapace omits schemaType, keys may differ in shape."""
    store = RegistryStore()
    store.apply(
        0,
        b'{"keytype":"SCHEMA","subject":"k","version":1,"magic":1}',
        b'{"subject":"k","version":1,"id":7,"schema":"\\"string\\"","deleted":false}',
    )
    store.apply(
        1,
        b'{"keytype":"SCHEMA","subject":"r","version":1,"magic":1}',
        b'{"subject":"r","version":1,"id":8,"schema":"{}","deleted":false,"schemaType":"AVRO",'
        b'"references":[{"name":"x.Y","subject":"k","version":1}]}',
    )
    store.apply(2, b'{"keytype":"CLEAR_SUBJECT","subject":"k","magic":0}', b'{"subject":"k"}')
    assert store.max_id == 8
    assert store.schema(7) is not None and store.schema(7).schema_type == "AVRO"  # type: ignore[union-attr]
    assert store.referenced_by("k", 1) == [8]
    assert store.schema(8).references == (SchemaReference("x.Y", "k", 1),)  # type: ignore[union-attr]


def test_nothing_is_written_on_error() -> None:
    log = MemorySchemaLog()
    svc = service(log)
    svc.register("s", SchemaRequest(REC))
    before = log.end_offset()
    bad: list[Callable[[], object]] = [
        lambda: svc.register("s", SchemaRequest('{"type": "nope"}')),
        lambda: svc.register("s", SchemaRequest('{"type":"record","name":"R","fields":[{"name":"z","type":"int"}]}')),
        lambda: svc.delete_subject("s", permanent=True),
        lambda: svc.delete_version("s", 9),
        lambda: svc.set_config(None, "SIDEWAYS"),
        lambda: svc.set_mode(None, "FAST"),
        lambda: svc.set_mode(None, "IMPORT"),
    ]
    for call in bad:
        with pytest.raises(RegistryError):
            call()
    assert log.end_offset() == before


def test_write_timeout_is_a_store_timeout() -> None:
    class StuckLog(MemorySchemaLog):
        def read(self, start: int, timeout: float) -> list:  # type: ignore[type-arg]
            return []

    svc = RegistryService(StuckLog(), timeout=0.05)
    with pytest.raises(RegistryError) as info:
        svc.register("s", SchemaRequest(REC))
    assert info.value.code is ErrorCode.OPERATION_TIMEOUT
