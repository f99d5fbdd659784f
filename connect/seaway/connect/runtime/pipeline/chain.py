"""The transformation chain: a task's SMTs in order, each optionally guarded by a predicate.

Kafka's ``TransformationChain`` / ``TransformationStage``: a stage applies its transformation
iff it has no predicate or ``negate XOR predicate.test(record)``. ``None`` from a stage drops
the record and ends the chain. Instances are built per task from the connector config
(``transforms``, ``transforms.<alias>.type|predicate|negate|*``, ``predicates``,
``predicates.<alias>.type|*``) and used by that task's thread only.

Fusion: each maximal run of two or more consecutive stages whose transformations are
built-in SMTs that support it (:func:`.fusion.is_fusable`) and that have no predicate runs as
one :class:`~.fusion.FusedRun`: one generated function per input shape, with the
stage-by-stage path for whatever that function does not cover, so results and errors are
exactly those of the stages. User SMTs, stages with a predicate and SMTs without fusion
support run on their own. ``stages`` stays the list of all stages (closing, introspection);
:meth:`TransformationChain.reference` is the same stages unfused, the pipeline's reference.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, cast

from seaway.connect.api import ConfigError, ConnectRecord, Predicate, Transformation
from seaway.connect.api.transforms import R
from seaway.connect.runtime.connector_config import ConnectorConfig
from seaway.connect.runtime.pipeline.fusion import FusedRun, is_fusable
from seaway.connect.runtime.plugins import PluginKind, Plugins

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


Step = Callable[[R], "R | None"]
_MIN_RUN = 2  # a single SMT gains nothing from fusion


def _steps(stages: Sequence[TransformationStage[R]], fuse: bool) -> list[Step[R]]:
    """The callables ``apply`` runs: single stages, and fused runs of consecutive fusable stages."""
    steps: list[Step[R]] = []
    run: list[TransformationStage[R]] = []

    def end_run() -> None:
        if len(run) >= _MIN_RUN:
            steps.append(cast("Step[R]", FusedRun([stage.transformation for stage in run])))
        else:
            steps.extend(stage.apply for stage in run)
        run.clear()

    for stage in stages:
        if fuse and stage.predicate is None and is_fusable(stage.transformation):
            run.append(stage)
            continue
        end_run()
        steps.append(stage.apply)
    end_run()
    return steps


class TransformationChain(Generic[R]):
    """Applies stages in order; empty chains are falsy so callers can skip them entirely.

    ``fuse=False`` runs every stage on its own (the reference the fused runs are tested against).
    """

    def __init__(self, stages: Sequence[TransformationStage[R]] = (), fuse: bool = True) -> None:
        self.stages = list(stages)
        self.fused = fuse
        self.steps = _steps(self.stages, fuse)
        """What :meth:`apply` runs: single stages and fused runs (for tests and introspection)."""
        # the usual fused chain is one step: called directly, without the loop
        self._single = self.steps[0] if len(self.steps) == 1 else None
        self._reference: TransformationChain[R] | None = None if fuse else self

    def __bool__(self) -> bool:
        return bool(self.stages)

    def apply(self, record: R) -> R | None:
        single = self._single
        if single is not None:
            return single(record)
        for step in self.steps:
            out = step(record)
            if out is None:
                return None
            record = out
        return record

    def reference(self) -> TransformationChain[R]:
        """The same stage instances, each run on its own (no fusion): what fused runs must equal."""
        reference = self._reference
        if reference is None:
            reference = self._reference = TransformationChain(self.stages, fuse=False)
        return reference

    def close(self) -> None:
        for stage in self.stages:
            stage.close()


def build_chain(config: ConnectorConfig, plugins: Plugins) -> TransformationChain[Any]:
    """Instantiate and configure the SMTs and predicates ``config`` names (Kafka's ``transformationStages``)."""
    predicates: dict[str, Predicate[ConnectRecord]] = {}
    stages: list[TransformationStage[Any]] = []
    try:
        for spec in config.predicates:
            predicate = plugins.new_instance(PluginKind.PREDICATE, spec.type_name)
            predicate.configure(dict(spec.props))
            predicates[spec.alias] = predicate
        for t in config.transforms:
            transformation = plugins.new_instance(PluginKind.TRANSFORMATION, t.type_name)
            transformation.configure(dict(t.props))
            predicate = None
            if t.predicate:
                if t.predicate not in predicates:
                    raise ConfigError(f"Predicate alias {t.predicate} of transform {t.alias} is not defined "
                                      "in 'predicates'", name=f"transforms.{t.alias}.predicate")
                predicate = predicates[t.predicate]
            stages.append(TransformationStage(t.alias, transformation, predicate, t.negate))
    except Exception:
        for stage in stages:
            stage.transformation.close()
        for made in predicates.values():
            made.close()
        raise
    return TransformationChain(stages)
