"""pytest's hook into this directory: the fixtures themselves live in jdbc_fixtures.py.

mypy checks the test trees in one run with these directories as package bases, where four
modules named ``conftest`` would collide; so each connector's fixtures have a module of
their own and this file only re-exports them.
"""

from jdbc_fixtures import db as db
from jdbc_fixtures import jdbc_broker as jdbc_broker
from jdbc_fixtures import pg as pg
