"""``/admin/loggers``: read and change log levels at runtime, on Python's ``logging``.

Kafka's ``LoggingResource`` over log4j, mapped to the standard library: a logger "exists" once
some code asked for it (``logging.getLogger``), ``root`` is the root logger, and setting a
namespace's level also sets it on every existing descendant (so a child with its own level
follows too), returning the affected names. Levels use Kafka's (log4j) names, and Python's
``WARNING``/``CRITICAL`` are accepted as well.

``scope=cluster`` asks every worker to apply the level; a standalone worker is the whole
cluster, so it applies locally and answers 204 (the distributed herder broadcasts it).
"""

from __future__ import annotations

import logging
import time
from typing import Annotated, Any

from fastapi import APIRouter, Body, Request, Response
from seaway.connect.api.errors import NotFoundError
from seaway.connect.rest.forwarding import HerderRoute
from seaway.connect.runtime.herder import BadRequestError

__all__ = ["LEVELS", "all_levels", "logger_level", "router", "set_level"]

log = logging.getLogger(__name__)
router = APIRouter(prefix="/admin/loggers", route_class=HerderRoute, tags=["admin"])

ROOT = "root"
LEVELS: dict[str, int] = {
    "OFF": logging.CRITICAL + 10, "FATAL": logging.CRITICAL, "CRITICAL": logging.CRITICAL,
    "ERROR": logging.ERROR, "WARN": logging.WARNING, "WARNING": logging.WARNING, "INFO": logging.INFO,
    "DEBUG": logging.DEBUG, "TRACE": 5, "ALL": 1,
}
"""Accepted level names (case-insensitive) and the ``logging`` level each sets."""
_NAMES = {logging.CRITICAL + 10: "OFF", logging.CRITICAL: "FATAL", logging.ERROR: "ERROR",
          logging.WARNING: "WARN", logging.INFO: "INFO", logging.DEBUG: "DEBUG", 5: "TRACE", 1: "ALL"}
_last_modified: dict[str, int] = {}


def _level_name(level: int) -> str:
    return _NAMES.get(level) or logging.getLevelName(level)


def _existing(name: str) -> logging.Logger | None:
    if name == ROOT:
        return logging.getLogger()
    found = logging.Logger.manager.loggerDict.get(name)
    return found if isinstance(found, logging.Logger) else None


def _describe(name: str, logger: logging.Logger) -> dict[str, Any]:
    return {"level": _level_name(logger.getEffectiveLevel()), "last_modified": _last_modified.get(name)}


def all_levels() -> dict[str, dict[str, Any]]:
    """The root logger and every logger with a level of its own, sorted by name."""
    out = {ROOT: _describe(ROOT, logging.getLogger())}
    for name, logger in sorted(logging.Logger.manager.loggerDict.items()):
        if isinstance(logger, logging.Logger) and logger.level != logging.NOTSET:
            out[name] = _describe(name, logger)
    return out


def logger_level(name: str) -> dict[str, Any]:
    """``{"level", "last_modified"}`` of one existing logger; NotFoundError otherwise."""
    logger = _existing(name)
    if logger is None:
        raise NotFoundError(f"Logger {name} not found.")
    return _describe(name, logger)


def set_level(namespace: str, level_name: str) -> list[str]:
    """Set ``namespace`` and its existing descendants to ``level_name``; the sorted affected names."""
    level = LEVELS[level_name.upper()]
    if namespace == ROOT:
        names = [ROOT] + [n for n, lg in logging.Logger.manager.loggerDict.items() if isinstance(lg, logging.Logger)]
    else:
        logging.getLogger(namespace)  # created if nobody asked for it yet, as log4j does
        prefix = namespace + "."
        names = [n for n, lg in logging.Logger.manager.loggerDict.items()
                 if isinstance(lg, logging.Logger) and (n == namespace or n.startswith(prefix))]
    now = int(time.time() * 1000)
    for name in names:
        logger = _existing(name)
        assert logger is not None
        logger.setLevel(level)
        _last_modified[name] = now
    return sorted(names)


@router.get("", summary="Levels of the root logger and of every logger with its own level")
async def list_loggers() -> dict[str, dict[str, Any]]:
    return all_levels()


@router.get("/{logger}", summary="One logger's level")
async def get_logger(logger: str) -> dict[str, Any]:
    return logger_level(logger)


@router.put("/{logger}", summary="Set a logger's level (and its descendants')")
async def put_logger(request: Request, logger: str, body: Annotated[dict[str, Any], Body()],
                     scope: str | None = None) -> Any:
    desired = body.get("level")
    if desired is None:
        raise BadRequestError("Desired 'level' parameter was not specified in request.")
    if str(desired).upper() not in LEVELS:
        raise NotFoundError(f"invalid log level '{desired}'.")
    if scope is not None and scope.lower() == "cluster":
        set_level(logger, str(desired))
        return Response(status_code=204)
    if scope is not None and scope.lower() != "worker":
        log.warning("Received invalid scope '%s' in request to adjust logging level; will use worker scope", scope)
    return set_level(logger, str(desired))
