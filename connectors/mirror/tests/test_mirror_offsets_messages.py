"""``PATCH /connectors/{mirror}/offsets`` refusals quote maps as Kafka's MirrorUtils does, never as a Python dict.

Kafka formats the request's partition and offset maps with ``%s``: Java's ``toString`` of the
LinkedHashMap Jackson read (``{cluster=a, topic=t}``, ``null``). Seaway printed ``{'cluster': 'a',
'topic': 't'}`` and ``None``.
"""

from __future__ import annotations

from typing import Any

import pytest
from seaway.connect.api import ConnectError
from seaway.connectors.mirror.offsets import validate_offsets

CASES: list[tuple[dict[str, Any], dict[str, Any], str]] = [
    ({"cluster": "a", "topic": "t"}, {"offset": 1},
     "Source partition {cluster=a, topic=t} is missing the 'partition' key, which is required"),
    ({"cluster": "a", "topic": None, "partition": 0}, {"offset": 1},
     "Source partition {cluster=a, topic=null, partition=0} has an invalid value null for the 'topic' key, "
     "which must be a string"),
    ({"cluster": "a", "topic": "t", "partition": True}, {"offset": 1},
     "Source partition {cluster=a, topic=t, partition=true} has an invalid value true for the 'partition' key, "
     "which must be an integer"),
    ({"cluster": "a", "topic": "t", "partition": 0}, {"offset": {"x": [1, "y"]}},
     "Source offset {offset={x=[1, y]}} for source partition {cluster=a, topic=t, partition=0} has an invalid "
     "value {x=[1, y]} for the 'offset' key, which must be an integer"),
]


@pytest.mark.parametrize(("partition", "offset", "message"), CASES)
def test_refusals_quote_maps_as_java_does(partition: dict[str, Any], offset: dict[str, Any], message: str) -> None:
    with pytest.raises(ConnectError) as refused:
        validate_offsets([(partition, offset)], ["cluster", "topic"], only_zero=False)
    assert str(refused.value) == message
