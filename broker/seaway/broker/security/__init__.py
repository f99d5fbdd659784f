"""The broker's security: TLS listeners, SASL authentication, ACLs, SCRAM credentials.

- :mod:`.settings`: Kafka's security keys, per-listener overrides, refusal of the rest;
- :mod:`.tls`: ``ssl.*`` -> an ``SSLContext`` (PEM, PKCS12), client certificate DNs;
- :mod:`.sasl`: the per-connection SASL state machine, PLAIN; :mod:`.scram`: SCRAM-SHA-256/512;
- :mod:`.jaas`: ``sasl.jaas.config`` values; :mod:`.principal`: principals, DN mapping rules;
- :mod:`.acl`: ACL vocabulary and filters; :mod:`.authorizer`: StandardAuthorizer decisions;
- :mod:`.store`: ACLs and credentials, durable in the ``__cluster_metadata`` log.

Handlers never import these directly for checks: they call ``RequestContext.allowed`` /
``require`` / ``authorized_operations`` (:mod:`seaway.broker.context`).
"""
