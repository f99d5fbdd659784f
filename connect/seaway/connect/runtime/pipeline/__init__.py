"""A task's data plane, compiled once when the task starts: named strategies held to a reference.

* :mod:`.source`: :class:`~.source.SourcePlan`, one poll's records -> SMTs -> converters ->
  ``produce`` (``bytes_passthrough``, ``value_columns``, ``plain_records``, ``records``,
  ``reference``);
* :mod:`.sink`: :class:`~.sink.SinkPlan`, one poll's messages -> converters -> SMTs -> what
  ``put`` receives (``raw_values``, ``value_columns``, ``records``, ``reference``);
* :mod:`.chain`: the transformation chain (SMTs with predicates), fused runs included, and its
  unfused :meth:`~.chain.TransformationChain.reference`;
* :mod:`.fusion`: runs of built-in SMTs compiled into one function per input shape.

The task classes (``worker_source_task``, ``worker_sink_task``) only run the loop, the
lifecycle, offsets and commits; they call their plan once per poll. See ../README.md, "The data plane".
"""
