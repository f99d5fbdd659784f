"""Kafka Connect's FileStream connectors: lines of a file (or stdin) to a topic, and back.

Registered in the ``seaway.connectors`` entry-point group as ``FileStreamSource`` and
``FileStreamSink``; Kafka's class names resolve to them too.
"""

from seaway.connectors.file._version import VERSION as __version__
from seaway.connectors.file.sink import FileStreamSinkConnector, FileStreamSinkTask
from seaway.connectors.file.source import FileStreamSourceConnector, FileStreamSourceTask

__all__ = [
    "FileStreamSinkConnector",
    "FileStreamSinkTask",
    "FileStreamSourceConnector",
    "FileStreamSourceTask",
    "__version__",
]
