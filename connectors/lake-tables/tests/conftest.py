"""pytest's hook into this directory: the fixtures themselves live in lake_tables_fixtures.py.

mypy checks the test trees in one run with these directories as package bases, where several modules
named ``conftest`` would collide; so each connector's fixtures have a module of their own and this file
only re-exports them.
"""

from lake_tables_fixtures import broker as broker
from lake_tables_fixtures import s3_server as s3_server
from lake_tables_fixtures import warehouse as warehouse
