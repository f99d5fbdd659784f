"""pytest's hook into this directory: the fixtures themselves live in mirror_fixtures.py.

mypy checks the test trees in one run with these directories as package bases, where four
modules named ``conftest`` would collide; so each connector's fixtures have a module of
their own and this file only re-exports them.
"""

from mirror_fixtures import clusters as clusters
from mirror_fixtures import fresh_clusters as fresh_clusters
