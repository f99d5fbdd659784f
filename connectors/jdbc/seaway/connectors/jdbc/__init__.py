"""JDBC source and sink connectors on SQLAlchemy 2 (Confluent's kafka-connect-jdbc, in Python).

Registered in the ``seaway.connectors`` entry-point group as ``JdbcSource`` and ``JdbcSink``
and under Confluent's class names ``io.confluent.connect.jdbc.JdbcSourceConnector`` and
``io.confluent.connect.jdbc.JdbcSinkConnector``, so a Confluent config works after changing
only addresses. PostgreSQL (psycopg 3), MariaDB/MySQL (PyMySQL) and SQLite. See docs/jdbc.md.
"""

from seaway.connectors.jdbc._version import VERSION as __version__
from seaway.connectors.jdbc.sink import JdbcSinkConnector, JdbcSinkTask
from seaway.connectors.jdbc.source import JdbcSourceConnector, JdbcSourceTask

__all__ = [
    "JdbcSinkConnector",
    "JdbcSinkTask",
    "JdbcSourceConnector",
    "JdbcSourceTask",
    "__version__",
]
