"""Worker-to-worker REST endpoints, added to the public API app in distributed mode.

``POST /connectors/{connector}/tasks``: a follower that runs a Connector publishes the task
configs it generated; the leader verifies the KIP-507 signature and writes them to the config
topic. Not forwarded: a worker that is no longer leader answers 409 and the follower publishes
again after the next rebalance.
"""

from __future__ import annotations

import json

from fastapi import APIRouter, Request, Response
from seaway.connect.runtime.distributed.herder import DistributedHerder
from seaway.connect.runtime.herder import ALGORITHM_HEADER, SIGNATURE_HEADER, BadRequestError

__all__ = ["router"]

router = APIRouter(prefix="/connectors", tags=["internal"])


@router.post("/{connector}/tasks", status_code=204, summary="Internal: write task configs (leader only)")
async def put_task_configs(request: Request, connector: str) -> Response:
    herder = request.app.state.herder
    assert isinstance(herder, DistributedHerder)
    body = await request.body()
    try:
        configs = json.loads(body)
    except ValueError:
        raise BadRequestError("Request body is not valid JSON") from None
    if not isinstance(configs, list) or not all(isinstance(c, dict) for c in configs):
        raise BadRequestError("Task configs must be a JSON array of objects")
    await herder.put_task_configs(connector, body, [{str(k): str(v) for k, v in c.items()} for c in configs],
                                  request.headers.get(SIGNATURE_HEADER), request.headers.get(ALGORITHM_HEADER))
    return Response(status_code=204)
