"""DropHeaders: remove every header whose key is listed in ``headers``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seaway.connect.api import ConfigDef, ConfigType, Headers, Importance, Transformation
from seaway.connect.api.transforms import R
from seaway.transforms.util import non_empty_list

__all__ = ["DropHeaders"]

HEADERS = "headers"

CONFIG_DEF = ConfigDef().define(HEADERS, ConfigType.LIST, validator=non_empty_list(), importance=Importance.HIGH,
                                documentation="The name of the headers to be removed.")


class DropHeaders(Transformation[R]):
    """Remove headers by name (Kafka's ``DropHeaders``)."""

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        self._headers = frozenset(CONFIG_DEF.parse(configs)[HEADERS])

    def apply(self, record: R) -> R | None:
        kept = Headers(h for h in record.headers if h.key not in self._headers)
        return record.new_record(headers=kept)
