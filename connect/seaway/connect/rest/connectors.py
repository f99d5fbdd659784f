"""``/connectors``: create, configure, inspect, pause/resume/stop/restart, delete, offsets.

Kafka's ``ConnectorsResource``, route by route, as of Kafka 4.x: the deprecated
``GET /connectors/{c}/tasks-config`` is gone (removed in Kafka 4.0, KIP-970), so it is a 404
as on Kafka; ``GET /connectors/{c}/tasks`` gives the same configs. Every call goes to the
:class:`Herder`; this module only shapes requests and responses (status codes,
``Location``, name checks).
"""

from __future__ import annotations

import logging
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import JSONResponse
from seaway.connect.api.errors import NotFoundError
from seaway.connect.rest.bodies import (
    ConfigMap,
    ConfigPatch,
    CreateConnectorRequest,
    OffsetsRequest,
    parse_initial_state,
    require_no_nulls,
)
from seaway.connect.rest.deps import herder_of
from seaway.connect.rest.forwarding import HerderRoute
from seaway.connect.runtime.herder import (
    ALGORITHM_HEADER,
    SIGNATURE_HEADER,
    BadRequestError,
    ConnectorOffsets,
    Created,
)

__all__ = ["router"]

log = logging.getLogger(__name__)
router = APIRouter(prefix="/connectors", route_class=HerderRoute, tags=["connectors"])

NO_OFFSETS = "Partitions / offsets need to be provided for an alter offsets request"
NULL_PARTITION = "Partition objects cannot be null"


def _location(name: str) -> str:
    return f"/connectors/{quote(name, safe='')}"


def _check_and_put_name(name: str, config: dict[str, str]) -> dict[str, str]:
    """Kafka's ``checkAndPutConnectorConfigName``: ``config["name"]`` must match, else is injected."""
    in_config = config.get("name")
    if in_config is not None and in_config != name:
        raise BadRequestError(f"Connector name configuration ({in_config}) doesn't match connector name "
                              f"in the URL ({name})")
    return {**config, "name": name}


def _created(result: Created) -> JSONResponse:
    body = result.info.to_json()
    if result.created:
        return JSONResponse(body, status_code=201, headers={"Location": _location(result.info.name)})
    return JSONResponse(body, status_code=200)


@router.get("", summary="List connectors (expand=status and/or expand=info for details)")
async def list_connectors(request: Request, expand: Annotated[list[str] | None, Query()] = None) -> Any:
    herder = herder_of(request)
    names = await herder.connectors()
    if expand is None:
        return names
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        try:
            expansions: dict[str, Any] = {}
            for kind in expand:
                if kind == "status":
                    expansions["status"] = (await herder.connector_status(name)).to_json()
                elif kind == "info":
                    expansions["info"] = (await herder.connector_info(name)).to_json()
                else:
                    log.info("Ignoring unknown expansion type %s", kind)
            out[name] = expansions
        except NotFoundError:
            log.debug("Connector %s vanished while listing connectors", name)
    return out


@router.post("", status_code=201, summary="Create a connector")
async def create_connector(request: Request, body: CreateConnectorRequest) -> JSONResponse:
    name = (body.name or "").strip()
    config = _check_and_put_name(name, require_no_nulls(body.config or {}))
    initial_state = parse_initial_state(body.initial_state)
    result = await herder_of(request).put_connector_config(name, config, allow_replace=False,
                                                           initial_state=initial_state)
    return JSONResponse(result.info.to_json(), status_code=201, headers={"Location": _location(result.info.name)})


@router.get("/{connector}", summary="A connector's config and tasks")
async def get_connector(request: Request, connector: str) -> dict[str, Any]:
    return (await herder_of(request).connector_info(connector)).to_json()


@router.get("/{connector}/config", summary="A connector's config, as submitted")
async def get_connector_config(request: Request, connector: str) -> dict[str, str]:
    return await herder_of(request).connector_config(connector)


@router.put("/{connector}/config", summary="Create (201) or update (200) a connector's config",
            responses={201: {"description": "Created (with a Location header)"}})
async def put_connector_config(request: Request, connector: str, body: ConfigMap) -> JSONResponse:
    config = _check_and_put_name(connector, require_no_nulls(body))
    return _created(await herder_of(request).put_connector_config(connector, config, allow_replace=True))


@router.patch("/{connector}/config", summary="Merge a patch into a connector's config (null deletes)")
async def patch_connector_config(request: Request, connector: str, body: ConfigPatch) -> dict[str, Any]:
    in_patch = body.get("name")
    if in_patch is not None and in_patch != connector:
        raise BadRequestError(f"Connector name configuration ({in_patch}) doesn't match connector name "
                              f"in the URL ({connector})")
    return (await herder_of(request).patch_connector_config(connector, dict(body))).to_json()


@router.get("/{connector}/status", summary="Connector and task states")
async def get_connector_status(request: Request, connector: str) -> dict[str, Any]:
    return (await herder_of(request).connector_status(connector)).to_json()


@router.get("/{connector}/tasks", summary="Task configs")
async def get_task_configs(request: Request, connector: str) -> list[dict[str, Any]]:
    return [t.to_json() for t in await herder_of(request).task_configs(connector)]


@router.get("/{connector}/tasks/{task}/status", summary="One task's state")
async def get_task_status(request: Request, connector: str, task: int) -> dict[str, Any]:
    return (await herder_of(request).task_status(connector, task)).to_json()


@router.post("/{connector}/tasks/{task}/restart", status_code=204, response_class=Response, summary="Restart one task")
async def restart_task(request: Request, connector: str, task: int) -> Response:
    await herder_of(request).restart_task(connector, task)
    return Response(status_code=204)


@router.get("/{connector}/topics", summary="Topics the connector has used (KIP-558)")
async def get_active_topics(request: Request, connector: str) -> dict[str, Any]:
    return {connector: {"topics": await herder_of(request).connector_active_topics(connector)}}


@router.put("/{connector}/topics/reset", status_code=202, response_class=Response,
            summary="Forget the topics the connector has used")
async def reset_active_topics(request: Request, connector: str) -> Response:
    await herder_of(request).reset_connector_active_topics(connector)
    return Response(status_code=202)


@router.put("/{connector}/pause", status_code=202, response_class=Response, summary="Pause the connector and its tasks")
async def pause_connector(request: Request, connector: str) -> Response:
    await herder_of(request).pause_connector(connector)
    return Response(status_code=202)


@router.put("/{connector}/resume", status_code=202, response_class=Response,
            summary="Resume a paused or stopped connector")
async def resume_connector(request: Request, connector: str) -> Response:
    await herder_of(request).resume_connector(connector)
    return Response(status_code=202)


@router.put("/{connector}/stop", status_code=204, response_class=Response,
            summary="Stop the connector and shut its tasks down")
async def stop_connector(request: Request, connector: str) -> Response:
    await herder_of(request).stop_connector(connector)
    return Response(status_code=204)


@router.post("/{connector}/restart", status_code=202, summary="Restart the connector (and, optionally, its tasks)",
             responses={204: {"description": "Restarted (the connector only: no includeTasks / onlyFailed)"}})
async def restart_connector(request: Request, connector: str,
                            includeTasks: bool = False, onlyFailed: bool = False) -> Response:
    planned = await herder_of(request).restart_connector(connector, include_tasks=includeTasks,
                                                         only_failed=onlyFailed)
    if planned is None:
        return Response(status_code=204)
    return JSONResponse(planned.to_json(), status_code=202)


@router.delete("/{connector}", status_code=204, response_class=Response, summary="Delete the connector")
async def delete_connector(request: Request, connector: str) -> Response:
    await herder_of(request).delete_connector(connector)
    return Response(status_code=204)


@router.get("/{connector}/offsets", summary="The connector's offsets (KIP-875)")
async def get_offsets(request: Request, connector: str) -> dict[str, Any]:
    return (await herder_of(request).connector_offsets(connector)).to_json()


@router.patch("/{connector}/offsets", summary="Alter the offsets of a STOPPED connector")
async def alter_offsets(request: Request, connector: str, body: OffsetsRequest) -> dict[str, str]:
    if not body.offsets:
        raise BadRequestError(NO_OFFSETS)
    if any(entry.partition is None for entry in body.offsets):
        raise BadRequestError(NULL_PARTITION)
    offsets = ConnectorOffsets([(entry.partition or {}, entry.offset) for entry in body.offsets])
    return {"message": await herder_of(request).alter_connector_offsets(connector, offsets)}


@router.delete("/{connector}/offsets", summary="Reset the offsets of a STOPPED connector")
async def reset_offsets(request: Request, connector: str) -> dict[str, str]:
    return {"message": await herder_of(request).reset_connector_offsets(connector)}


@router.put("/{connector}/fence", status_code=204, response_class=Response, include_in_schema=False,
            summary="Internal: fence the zombie tasks of an exactly-once source connector (leader only)")
async def fence_zombies(request: Request, connector: str) -> Response:
    """KIP-618's zombie fencing, as Kafka's ``InternalConnectResource``: workers call it before starting the tasks of
    a new generation; signed with the session key under the ``sessioned`` protocol; forwarded to the leader."""
    await herder_of(request).fence_zombies(connector, await request.body(), request.headers.get(SIGNATURE_HEADER),
                                           request.headers.get(ALGORITHM_HEADER))
    return Response(status_code=204)
