"""Filter: drop every record. Useful only with a predicate (``transforms.x.predicate``).

    transforms=dropTombstones
    transforms.dropTombstones.type=org.apache.kafka.connect.transforms.Filter
    transforms.dropTombstones.predicate=isTombstone
    predicates=isTombstone
    predicates.isTombstone.type=org.apache.kafka.connect.transforms.predicates.RecordIsTombstone
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seaway.connect.api import ConfigDef, Transformation
from seaway.connect.api.transforms import R

__all__ = ["Filter"]

CONFIG_DEF = ConfigDef()


class Filter(Transformation[R]):
    """Drops all records, filtering them from subsequent transformations in the chain (Kafka's ``Filter``)."""

    def configure(self, configs: Mapping[str, Any]) -> None:
        CONFIG_DEF.parse(configs)

    def apply(self, record: R) -> R | None:
        return None

    def config(self) -> ConfigDef:
        return CONFIG_DEF
