"""``sasl.jaas.config`` values: one JAAS login module entry, parsed as Kafka's ``JaasConfig``
by :mod:`seaway.security.jaas` (shared with the Connect worker and the registry).

The broker understands two modules, as Kafka's broker does:

- ``org.apache.kafka.common.security.plain.PlainLoginModule``: every ``user_<name>="<password>"``
  option is a user the PLAIN mechanism accepts (Kafka's ``PlainServerCallbackHandler``);
  ``username``/``password`` are the broker's own client credentials (unused: one node);
- ``org.apache.kafka.common.security.scram.ScramLoginModule``: SCRAM users come from the
  credential store (``seaway users`` / AlterUserScramCredentials), options are unused.
"""

from __future__ import annotations

from seaway.security.jaas import JaasEntry, parse_jaas

__all__ = ["PLAIN_MODULE", "SCRAM_MODULE", "JaasEntry", "parse_jaas"]

PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
