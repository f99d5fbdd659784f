"""pytest's hook into this directory: the fixtures themselves live in s3_fixtures.py.

mypy checks the test trees in one run with these directories as package bases, where four
modules named ``conftest`` would collide; so each connector's fixtures have a module of
their own and this file only re-exports them.
"""

from s3_fixtures import broker as broker
from s3_fixtures import bucket as bucket
from s3_fixtures import s3 as s3
