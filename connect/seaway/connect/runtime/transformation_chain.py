"""The transformation chain: a task's SMTs in order, each optionally guarded by a predicate.

Kafka's ``TransformationChain`` / ``TransformationStage``: a stage applies its transformation
iff it has no predicate or ``negate XOR predicate.test(record)``. ``None`` from a stage drops
the record and ends the chain. Instances are built per task from the connector config
(``transforms``, ``transforms.<alias>.type|predicate|negate|*``, ``predicates``,
``predicates.<alias>.type|*``) and used by that task's thread only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic

from seaway.connect.api import ConfigError, ConnectRecord, Predicate, Transformation
from seaway.connect.api.transforms import R
from seaway.connect.runtime.config import ConnectorConfig
from seaway.connect.runtime.plugins import PluginKind

__all__ = ["TransformationChain", "TransformationStage", "build_chain"]


class TransformationStage(Generic[R]):
    """One transformation plus its optional predicate."""

    __slots__ = ("alias", "negate", "predicate", "transformation")

    def __init__(self, alias: str, transformation: Transformation[R],
                 predicate: Predicate[R] | None = None, negate: bool = False) -> None:
        self.alias = alias
        self.transformation = transformation
        self.predicate = predicate
        self.negate = negate

    def apply(self, record: R) -> R | None:
        predicate = self.predicate
        if predicate is not None and predicate.test(record) == self.negate:
            return record
        return self.transformation.apply(record)

    def close(self) -> None:
        self.transformation.close()
        if self.predicate is not None:
            self.predicate.close()


class TransformationChain(Generic[R]):
    """Applies stages in order; empty chains are falsy so callers can skip them entirely."""

    def __init__(self, stages: Sequence[TransformationStage[R]] = ()) -> None:
        self.stages = list(stages)

    def __bool__(self) -> bool:
        return bool(self.stages)

    def apply(self, record: R) -> R | None:
        for stage in self.stages:
            out = stage.apply(record)
            if out is None:
                return None
            record = out
        return record

    def close(self) -> None:
        for stage in self.stages:
            stage.close()


def build_chain(config: ConnectorConfig) -> TransformationChain[Any]:
    """Instantiate and configure the SMTs and predicates named by ``config`` (Kafka's ``transformationStages``)."""
    plugins = config.plugins
    predicates: dict[str, Predicate[ConnectRecord]] = {}
    stages: list[TransformationStage[Any]] = []
    try:
        for alias in config.get("predicates"):
            prefix = f"predicates.{alias}."
            predicate = plugins.new_instance(PluginKind.PREDICATE, str(config.get(prefix + "type")))
            predicate.configure(config.originals_with_prefix(prefix))
            predicates[alias] = predicate
        for alias in config.get("transforms"):
            prefix = f"transforms.{alias}."
            transformation = plugins.new_instance(PluginKind.TRANSFORMATION, str(config.get(prefix + "type")))
            transformation.configure(config.originals_with_prefix(prefix))
            predicate_alias = config.get(prefix + "predicate")
            predicate = None
            if predicate_alias:
                if predicate_alias not in predicates:
                    raise ConfigError(f"Predicate alias {predicate_alias} of transform {alias} is not defined "
                                      "in 'predicates'", name=prefix + "predicate")
                predicate = predicates[predicate_alias]
            stages.append(TransformationStage(alias, transformation, predicate, bool(config.get(prefix + "negate"))))
    except Exception:
        for stage in stages:
            stage.transformation.close()
        for p in predicates.values():
            p.close()
        raise
    return TransformationChain(stages)
