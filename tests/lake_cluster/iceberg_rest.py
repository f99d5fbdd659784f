"""Apache Iceberg's REST catalog server on loopback, stopped by PID: the ``iceberg.catalog.type=rest`` tests' catalog.

Iceberg's own server, not a stand-in: ``org.apache.iceberg.rest.RESTCatalogServer`` from Iceberg's
``iceberg-open-api`` test-fixtures jar (the server the ``apache/iceberg-rest-fixture`` image runs, and
Iceberg's REST compatibility kit tests against), fetched from Maven Central by
:data:`tests.lake_cluster.jars.ICEBERG_REST`. Its backend is Iceberg's ``JdbcCatalog`` on a SQLite file in the
server's folder and its warehouse a ``file://`` folder beside it, so each server is a catalog of its own:
a test that starts one shares nothing with another. It is configured as the image is, through
``CATALOG_*`` environment variables (``CATALOG_URI`` -> ``uri``, ``CATALOG_REST_PORT`` -> ``rest.port``, ...).
Jetty binds the port on every interface (the server has no host setting); the port comes from
tests/support/ports.py.
"""

from __future__ import annotations

import shutil
import urllib.request
from pathlib import Path

from tests.lake_cluster.daemon import Daemon, wait_until
from tests.lake_cluster.jars import ICEBERG_REST
from tests.support.ports import free_port

__all__ = ["IcebergRestCatalog"]

MAIN = "org.apache.iceberg.rest.RESTCatalogServer"


class IcebergRestCatalog:
    """``RESTCatalogServer`` in ``folder`` (its PID, log, SQLite catalog and warehouse there); ``uri`` once started."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder.resolve()
        self.daemon = Daemon(self.folder, "iceberg-rest", MAIN)
        port_file = self.folder / "iceberg-rest.port"
        self.port = int(port_file.read_text()) if port_file.is_file() else 0

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def warehouse(self) -> str:
        return (self.folder / "warehouse").as_uri()

    def start(self, timeout: float = 90.0) -> IcebergRestCatalog:
        if shutil.which("java") is None:
            raise RuntimeError("java is needed to run Iceberg's REST catalog server")
        lib = ICEBERG_REST.ensure()
        self.port = free_port()
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / "iceberg-rest.port").write_text(str(self.port))
        env = {"CATALOG_CATALOG__IMPL": "org.apache.iceberg.jdbc.JdbcCatalog",
               "CATALOG_URI": f"jdbc:sqlite:{self.folder / 'catalog.db'}",
               "CATALOG_JDBC_USER": "iceberg", "CATALOG_JDBC_PASSWORD": "iceberg",
               "CATALOG_WAREHOUSE": self.warehouse, "CATALOG_REST_PORT": str(self.port)}
        self.daemon.start(["java", "-Xmx256m", "-cp", f"{lib}/*", MAIN], env)
        try:
            wait_until(self._answers, timeout, "Iceberg's REST catalog server did not start",
                       lambda: self.daemon.pid() is not None, self.daemon.log)
        except BaseException:
            self.stop()
            raise
        return self

    def _answers(self) -> bool:
        urllib.request.urlopen(self.uri + "/v1/config", timeout=2).close()
        return True

    def stop(self) -> None:
        self.daemon.stop(15)

    def __enter__(self) -> IcebergRestCatalog:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
