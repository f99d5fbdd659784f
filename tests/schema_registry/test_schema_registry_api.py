"""Every REST endpoint: success shapes, error envelopes, status codes (in-process, ASGI)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from seaway.schema_registry.app import create_app
from seaway.schema_registry.log import MemorySchemaLog

CT = "application/vnd.schemaregistry.v1+json"
R1 = json.dumps({"type": "record", "name": "R", "namespace": "n", "fields": [{"name": "a", "type": "int"}]})
R2 = json.dumps(
    {
        "type": "record",
        "name": "R",
        "namespace": "n",
        "fields": [{"name": "a", "type": "int"}, {"name": "b", "type": "string", "default": ""}],
    }
)
R_BAD = json.dumps(
    {
        "type": "record",
        "name": "R",
        "namespace": "n",
        "fields": [{"name": "a", "type": "int"}, {"name": "c", "type": "string"}],
    }
)


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(log=MemorySchemaLog())
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://registry") as c:
        yield c


async def post(c: httpx.AsyncClient, path: str, body: Any, content_type: str = CT) -> httpx.Response:
    return await c.post(path, content=json.dumps(body), headers={"Content-Type": content_type})


async def put(c: httpx.AsyncClient, path: str, body: Any) -> httpx.Response:
    return await c.put(path, content=json.dumps(body), headers={"Content-Type": CT})


def err(r: httpx.Response, status: int, code: int) -> str:
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) == {"error_code", "message"} and body["error_code"] == code
    return str(body["message"])


async def test_root_types_contexts_metadata(client: httpx.AsyncClient) -> None:
    r = await client.get("/")
    assert (r.status_code, r.json(), r.headers["content-type"]) == (200, {}, CT)
    assert (await client.get("/schemas/types")).json() == ["JSON", "PROTOBUF", "AVRO"]
    assert (await client.get("/contexts")).json() == ["."]
    meta = (await client.get("/v1/metadata/id")).json()
    assert meta["scope"]["clusters"]["schema-registry-cluster"] == "schema-registry"
    assert "version" in (await client.get("/v1/metadata/version")).json()
    err(await client.get("/no/such/thing"), 404, 404)
    err(await client.patch("/subjects"), 405, 405)


@pytest.mark.parametrize(
    "content_type",
    [CT, "application/vnd.schemaregistry+json", "application/json", "application/octet-stream"],
)
async def test_register_accepts_confluents_content_types(client: httpx.AsyncClient, content_type: str) -> None:
    r = await post(client, "/subjects/s/versions", {"schema": R1}, content_type)
    assert (r.status_code, r.json()) == (200, {"id": 1})
    assert r.headers["content-type"] == CT


async def test_register_read_and_list(client: httpx.AsyncClient) -> None:
    assert (await post(client, "/subjects/s/versions", {"schema": R1})).json() == {"id": 1}
    # same schema, other spelling: same id, no new version; other subject: same id
    spaced = json.dumps(json.loads(R1), indent=4)
    assert (await post(client, "/subjects/s/versions?normalize=False", {"schema": spaced})).json() == {"id": 1}
    assert (await post(client, "/subjects/t/versions", {"schema": R1, "schemaType": "AVRO"})).json() == {"id": 1}
    assert (await post(client, "/subjects/s/versions", {"schema": R2})).json() == {"id": 2}
    assert (await client.get("/subjects")).json() == ["s", "t"]
    assert (await client.get("/subjects?subjectPrefix=t")).json() == ["t"]
    assert (await client.get("/subjects/s/versions")).json() == [1, 2]
    canonical = json.dumps(json.loads(R2), separators=(",", ":"))
    want = {"subject": "s", "version": 2, "id": 2, "schema": canonical}
    for v in ("latest", "-1", "2"):
        assert (await client.get(f"/subjects/s/versions/{v}")).json() == want
    raw = await client.get("/subjects/s/versions/2/schema")
    assert raw.text == canonical
    assert (await client.get("/schemas/ids/2")).json() == {"schema": canonical}
    assert (await client.get("/schemas/ids/2?fetchMaxId=true")).json() == {"schema": canonical, "maxId": 2}
    assert (await client.get("/schemas/ids/1/schema")).json() == json.loads(R1)
    assert (await client.get("/schemas/ids/1/subjects")).json() == ["s", "t"]
    assert (await client.get("/schemas/ids/1/versions")).json() == [
        {"subject": "s", "version": 1},
        {"subject": "t", "version": 1},
    ]
    listing = (await client.get("/schemas")).json()
    assert [(x["subject"], x["version"], x["id"]) for x in listing] == [("s", 1, 1), ("s", 2, 2), ("t", 1, 1)]
    latest = (await client.get("/schemas?latestOnly=true&subjectPrefix=s")).json()
    assert [(x["subject"], x["version"]) for x in latest] == [("s", 2)]
    assert (await client.get("/schemas?offset=1&limit=1")).json()[0]["version"] == 2


async def test_read_errors(client: httpx.AsyncClient) -> None:
    await post(client, "/subjects/s/versions", {"schema": R1})
    assert "Subject 'nope' not found" in err(await client.get("/subjects/nope/versions"), 404, 40401)
    err(await client.get("/subjects/nope/versions/1"), 404, 40401)
    err(await client.get("/subjects/s/versions/7"), 404, 40402)
    for bad in ("0", "abc", "-2", "2147483648"):
        assert "latest" in err(await client.get(f"/subjects/s/versions/{bad}"), 422, 42202)
    err(await client.get("/schemas/ids/99"), 404, 40403)
    err(await client.get("/schemas/ids/99/schema"), 404, 40403)
    err(await client.get("/schemas/ids/99/subjects"), 404, 40403)
    err(await client.get("/schemas/ids/99/versions"), 404, 40403)
    err(await client.get("/schemas/ids/notanumber"), 404, 404)


async def test_register_errors(client: httpx.AsyncClient) -> None:
    msg = err(await post(client, "/subjects/s/versions", {"schema": '{"type": "recrd"}'}), 422, 42201)
    assert "Undefined type: recrd" in msg
    err(await post(client, "/subjects/s/versions", {"schema": "{not json"}), 422, 42201)
    default_msg = err(
        await post(
            client,
            "/subjects/s/versions",
            {
                "schema": json.dumps(
                    {"type": "record", "name": "R", "fields": [{"name": "a", "type": "int", "default": "x"}]}
                )
            },
        ),
        422,
        42201,
    )
    assert "default" in default_msg.lower()
    err(await post(client, "/subjects/s/versions", {"schema": R1, "schemaType": "PROTOBUF"}), 422, 42201)
    err(await post(client, "/subjects/s/versions", {}), 422, 42201)
    err(await post(client, "/subjects/s/versions", {"schema": {"type": "int"}}), 422, 422)
    err(await post(client, "/subjects/s/versions", ["schema"]), 422, 422)
    err(await post(client, "/subjects/s/versions", {"schema": R1, "references": "x"}), 422, 422)
    r = await client.post("/subjects/s/versions", content=b"{oops", headers={"Content-Type": CT})
    err(r, 400, 400)
    assert (await client.get("/subjects")).json() == []


async def test_input_is_read_as_confluents_jackson_and_jersey_read_it(client: httpx.AsyncClient) -> None:
    """A scalar schema was 422/422, ``?permanent=maybe`` 422, a huge id 40403; Confluent answers 42201
    (Jackson makes 5 the text "5", Avro refuses it), reads a flag with Java's ``Boolean.valueOf`` (not
    "true" is false) and gives Jersey's plain 404 for an id ``Integer.valueOf`` cannot hold."""
    for scalar in (5, 5.5, True):
        err(await post(client, "/subjects/s/versions", {"schema": scalar}), 422, 42201)
        err(await post(client, "/compatibility/subjects/s/versions", {"schema": scalar}), 422, 42201)
    assert (await post(client, "/subjects/s/versions", {"schema": R1})).json() == {"id": 1}
    soft = await client.delete("/subjects/s/versions/1?permanent=maybe")  # false: a soft delete
    assert (soft.status_code, soft.json()) == (200, 1)
    for flag in ("1", "yes"):  # false too: soft-deleting it again
        err(await client.delete(f"/subjects/s/versions/1?permanent={flag}"), 404, 40406)
    assert (await client.get("/subjects/s/versions?deleted=TRUE")).json() == [1]
    assert (await client.get("/subjects/s/versions?deleted=yes")).status_code == 404
    assert "maxId" not in (await client.get("/schemas/ids/1?fetchMaxId=maybe")).json()
    assert (await client.delete("/subjects/s/versions/1?permanent=True")).json() == 1
    for huge in ("99999999999999999999", "2147483648", "-2147483649"):
        assert err(await client.get(f"/schemas/ids/{huge}"), 404, 404) == "HTTP 404 Not Found"
        for tail in ("schema", "subjects", "versions"):
            err(await client.get(f"/schemas/ids/{huge}/{tail}"), 404, 404)
    err(await client.get("/schemas/ids/2147483647"), 404, 40403)


async def test_incompatible_register_is_409_with_reasons(client: httpx.AsyncClient) -> None:
    await post(client, "/subjects/s/versions", {"schema": R1})
    msg = err(await post(client, "/subjects/s/versions", {"schema": R_BAD}), 409, 409)
    assert "READER_FIELD_MISSING_DEFAULT_VALUE" in msg and "'c'" in msg
    assert (await client.get("/subjects/s/versions")).json() == [1]


async def test_lookup(client: httpx.AsyncClient) -> None:
    await post(client, "/subjects/s/versions", {"schema": R1})
    r = await post(client, "/subjects/s", {"schema": R1})
    assert r.json() == {
        "subject": "s",
        "version": 1,
        "id": 1,
        "schema": json.dumps(json.loads(R1), separators=(",", ":")),
    }
    err(await post(client, "/subjects/s", {"schema": R2}), 404, 40403)
    err(await post(client, "/subjects/other", {"schema": R1}), 404, 40401)
    err(await post(client, "/subjects/s", {"schema": "[[["}), 422, 42201)


async def test_normalize(client: httpx.AsyncClient) -> None:
    short = json.dumps({"type": "record", "name": "R", "namespace": "n", "fields": [{"name": "a", "type": "int"}]})
    full = json.dumps({"type": "record", "name": "n.R", "fields": [{"name": "a", "type": "int"}]})
    assert (await post(client, "/subjects/s/versions?normalize=true", {"schema": short})).json() == {"id": 1}
    assert (await post(client, "/subjects/s/versions?normalize=true", {"schema": full})).json() == {"id": 1}
    stored = (await client.get("/schemas/ids/1")).json()["schema"]
    assert json.loads(stored) == {"type": "record", "name": "n.R", "fields": [{"name": "a", "type": "int"}]}
    assert (await post(client, "/subjects/s?normalize=true", {"schema": short})).json()["id"] == 1


async def test_compatibility_endpoints(client: httpx.AsyncClient) -> None:
    path = "/compatibility/subjects/s/versions"
    assert (await post(client, f"{path}/latest", {"schema": R1})).json() == {"is_compatible": True}
    assert (await post(client, path, {"schema": R1})).json() == {"is_compatible": True}
    err(await post(client, f"{path}/1", {"schema": R1}), 404, 40401)
    await post(client, "/subjects/s/versions", {"schema": R1})
    assert (await post(client, f"{path}/1", {"schema": R2})).json() == {"is_compatible": True}
    assert (await post(client, f"{path}/latest", {"schema": R_BAD})).json() == {"is_compatible": False}
    verbose = (await post(client, f"{path}/latest?verbose=true", {"schema": R_BAD})).json()
    assert verbose["is_compatible"] is False
    assert verbose["messages"][0].startswith("{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE'")
    assert "{compatibility: 'BACKWARD'}" in verbose["messages"]
    assert (await post(client, f"{path}?verbose=True", {"schema": R_BAD})).json()["is_compatible"] is False
    err(await post(client, f"{path}/9", {"schema": R2}), 404, 40402)
    err(await post(client, f"{path}/zero", {"schema": R2}), 422, 42202)
    err(await post(client, f"{path}/latest", {"schema": "{"}), 422, 42201)


async def test_transitive_levels_through_the_api(client: httpx.AsyncClient) -> None:
    v1 = json.dumps({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]})
    v2 = json.dumps(
        {
            "type": "record",
            "name": "R",
            "fields": [{"name": "a", "type": "int"}, {"name": "b", "type": "string", "default": "x"}],
        }
    )
    v3 = json.dumps(
        {"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}, {"name": "b", "type": "string"}]}
    )
    await put(client, "/config/s", {"compatibility": "BACKWARD_TRANSITIVE"})
    await post(client, "/subjects/s/versions", {"schema": v1})
    await post(client, "/subjects/s/versions", {"schema": v2})
    assert (await post(client, "/compatibility/subjects/s/versions", {"schema": v3})).json()["is_compatible"] is False
    # against one named version only the direction of the level applies (Confluent)
    one = await post(client, "/compatibility/subjects/s/versions/2", {"schema": v3})
    assert one.json()["is_compatible"] is True
    err(await post(client, "/subjects/s/versions", {"schema": v3}), 409, 409)
    await put(client, "/config/s", {"compatibility": "BACKWARD"})
    assert (await post(client, "/subjects/s/versions", {"schema": v3})).json() == {"id": 3}


async def test_config(client: httpx.AsyncClient) -> None:
    assert (await client.get("/config")).json() == {"compatibilityLevel": "BACKWARD"}
    assert (await put(client, "/config", {"compatibility": "full"})).json() == {"compatibility": "FULL"}
    assert (await client.get("/config")).json() == {"compatibilityLevel": "FULL"}
    err(await put(client, "/config", {"compatibility": "SIDEWAYS"}), 422, 42203)
    err(await put(client, "/config/s", {}), 422, 42203)
    assert "subject-level compatibility" in err(await client.get("/config/s"), 404, 40408)
    assert (await client.get("/config/s?defaultToGlobal=true")).json() == {"compatibilityLevel": "FULL"}
    assert (await put(client, "/config/s", {"compatibility": "NONE"})).json() == {"compatibility": "NONE"}
    assert (await client.get("/config/s")).json() == {"compatibilityLevel": "NONE"}
    assert (await client.delete("/config/s")).json() == {"compatibilityLevel": "NONE"}
    err(await client.get("/config/s"), 404, 40408)
    err(await client.delete("/config/never"), 404, 40401)
    assert (await client.delete("/config")).json() == {"compatibilityLevel": "FULL"}
    assert (await client.get("/config")).json() == {"compatibilityLevel": "BACKWARD"}
    err(await client.put("/config", content=b"nope", headers={"Content-Type": CT}), 400, 400)


async def test_mode(client: httpx.AsyncClient) -> None:
    assert (await client.get("/mode")).json() == {"mode": "READWRITE"}
    err(await client.get("/mode/s"), 404, 40409)
    assert (await client.get("/mode/s?defaultToGlobal=true")).json() == {"mode": "READWRITE"}
    err(await put(client, "/mode", {"mode": "FAST"}), 422, 42204)
    assert (await put(client, "/mode/s", {"mode": "READONLY"})).json() == {"mode": "READONLY"}
    assert "read-only" in err(await post(client, "/subjects/s/versions", {"schema": R1}), 422, 42205)
    assert (await client.delete("/mode/s")).json() == {"mode": "READONLY"}
    await post(client, "/subjects/s/versions", {"schema": R1})
    msg = err(await put(client, "/mode", {"mode": "IMPORT"}), 422, 42205)
    assert "existing subjects" in msg
    assert (await put(client, "/mode?force=true", {"mode": "IMPORT"})).json() == {"mode": "IMPORT"}
    assert (await client.get("/mode")).json() == {"mode": "IMPORT"}
    assert "read-write" in err(await post(client, "/subjects/s/versions", {"schema": R2}), 422, 42205)
    assert (await client.delete("/mode")).json() == {"mode": "IMPORT"}
    assert (await client.get("/mode")).json() == {"mode": "READWRITE"}
    assert "import mode" in err(await post(client, "/subjects/s/versions", {"schema": R2, "id": 5}), 422, 42205)


async def test_import_mode_with_explicit_ids(client: httpx.AsyncClient) -> None:
    await put(client, "/mode", {"mode": "IMPORT"})
    r = await post(client, "/subjects/s/versions", {"schema": R1, "id": 100, "version": 3})
    assert r.json() == {"id": 100}
    # incompatible schemas are accepted in IMPORT mode (no compatibility check)
    assert (await post(client, "/subjects/s/versions", {"schema": '"string"', "id": 42})).json() == {"id": 42}
    assert (await post(client, "/subjects/s/versions", {"schema": R1, "id": 100, "version": 3})).json() == {"id": 100}
    err(await post(client, "/subjects/s/versions", {"schema": R2, "id": 100}), 422, 42207)
    err(await post(client, "/subjects/s/versions", {"schema": R2, "id": 7, "version": 3}), 422, 42207)
    assert (await client.get("/subjects/s/versions")).json() == [3, 4]
    assert (await client.get("/subjects/s/versions/3")).json()["id"] == 100
    await put(client, "/mode", {"mode": "READWRITE"})
    # new ids continue after the largest imported id
    assert (await post(client, "/subjects/t/versions", {"schema": R2})).json() == {"id": 101}


async def test_soft_and_permanent_delete_of_versions(client: httpx.AsyncClient) -> None:
    await post(client, "/subjects/s/versions", {"schema": R1})
    await post(client, "/subjects/s/versions", {"schema": R2})
    err(await client.delete("/subjects/s/versions/1?permanent=true"), 404, 40407)
    assert (await client.delete("/subjects/s/versions/1")).json() == 1
    err(await client.delete("/subjects/s/versions/1"), 404, 40406)
    assert (await client.get("/subjects/s/versions")).json() == [2]
    assert (await client.get("/subjects/s/versions?deleted=true")).json() == [1, 2]
    assert (await client.get("/subjects/s/versions?deletedOnly=true")).json() == [1]
    assert (await client.get("/subjects/s/versions?deletedAsNegative=true")).json() == [-1, 2]
    err(await client.get("/subjects/s/versions/1"), 404, 40402)
    assert (await client.get("/subjects/s/versions/1?deleted=true")).json()["version"] == 1
    assert (await client.get("/schemas/ids/1")).status_code == 200  # still readable by id
    assert (await client.get("/schemas/ids/1/subjects")).json() == []
    assert (await client.get("/schemas/ids/1/subjects?deleted=true")).json() == ["s"]
    assert (await client.delete("/subjects/s/versions/1?permanent=true")).json() == 1
    err(await client.get("/subjects/s/versions/1?deleted=true"), 404, 40402)
    err(await client.get("/schemas/ids/1"), 404, 40403)
    err(await client.delete("/subjects/s/versions/1"), 404, 40402)
    err(await client.delete("/subjects/nope/versions/1"), 404, 40401)
    assert (await client.delete("/subjects/s/versions/latest")).json() == 2
    # re-registering a schema whose versions are all soft-deleted: new version, no check
    assert (await post(client, "/subjects/s/versions", {"schema": R_BAD})).json() == {"id": 3}
    assert (await client.get("/subjects/s/versions")).json() == [3]


async def test_soft_and_permanent_delete_of_subjects(client: httpx.AsyncClient) -> None:
    await post(client, "/subjects/s/versions", {"schema": R1})
    await post(client, "/subjects/s/versions", {"schema": R2})
    await put(client, "/config/s", {"compatibility": "NONE"})
    assert "not deleted first" in err(await client.delete("/subjects/s?permanent=true"), 404, 40405)
    assert (await client.delete("/subjects/s")).json() == [1, 2]
    assert "soft deleted" in err(await client.delete("/subjects/s"), 404, 40404)
    assert (await client.get("/subjects")).json() == []
    assert (await client.get("/subjects?deleted=true")).json() == ["s"]
    assert (await client.get("/subjects?deletedOnly=true")).json() == ["s"]
    err(await client.get("/subjects/s/versions"), 404, 40401)
    err(await client.delete("/subjects/s/versions/latest"), 404, 40404)
    assert (await client.get("/schemas?deleted=true")).json()[0]["subject"] == "s"
    assert (await client.delete("/subjects/s?permanent=true")).json() == [1, 2]
    err(await client.delete("/subjects/s"), 404, 40401)
    err(await client.get("/config/s"), 404, 40408)  # subject config went with it
    assert (await client.get("/subjects?deleted=true")).json() == []
    # ids are not reused after a permanent delete
    assert (await post(client, "/subjects/s/versions", {"schema": '"string"'})).json() == {"id": 3}
    assert (await client.get("/subjects/s/versions")).json() == [1]


async def test_references_and_referencedby(client: httpx.AsyncClient) -> None:
    addr = json.dumps(
        {"type": "record", "name": "Address", "namespace": "com.x", "fields": [{"name": "street", "type": "string"}]}
    )
    person = json.dumps(
        {"type": "record", "name": "Person", "namespace": "com.x", "fields": [{"name": "home", "type": "Address"}]}
    )
    refs = [{"name": "com.x.Address", "subject": "addr", "version": 1}]
    assert (await post(client, "/subjects/addr/versions", {"schema": addr})).json() == {"id": 1}
    err(await post(client, "/subjects/person/versions", {"schema": person}), 422, 42201)
    missing = [{"name": "com.x.Address", "subject": "addr", "version": 5}]
    err(await post(client, "/subjects/person/versions", {"schema": person, "references": missing}), 422, 42201)
    r = await post(client, "/subjects/person/versions", {"schema": person, "references": refs})
    assert r.json() == {"id": 2}
    got = (await client.get("/subjects/person/versions/1")).json()
    assert got["references"] == refs
    assert json.loads(got["schema"])["fields"][0]["type"] == "Address"
    by_id = (await client.get("/schemas/ids/2")).json()
    assert by_id["references"] == refs
    resolved = json.loads((await client.get("/schemas/ids/2?format=resolved")).json()["schema"])
    assert resolved["fields"][0]["type"]["name"] == "Address"
    assert (await client.get("/subjects/addr/versions/1/referencedby")).json() == [2]
    assert (await post(client, "/subjects/person", {"schema": person, "references": refs})).json()["id"] == 2
    err(await client.delete("/subjects/addr/versions/1"), 422, 42206)
    err(await client.delete("/subjects/addr"), 422, 42206)
    assert (await client.delete("/subjects/person")).json() == [1]
    assert (await client.get("/subjects/addr/versions/1/referencedby")).json() == []
    assert (await client.delete("/subjects/addr")).json() == [1]
