"""Security code every Seaway component shares (no component's own code is imported here).

- :mod:`seaway.security.tls`: Kafka's ``ssl.*`` settings as Python ``SSLContext``s (server and
  client side; PEM and PKCS12 key material), used by the broker's listeners, the Connect and
  registry HTTPS listeners and every client Seaway opens itself;
- :mod:`seaway.security.jaas`: JAAS config text (one ``sasl.jaas.config`` entry, or a JAAS file
  with named sections);
- :mod:`seaway.security.kafka_client`: a Kafka client's security settings (Java's names or
  librdkafka's) checked and translated to librdkafka's, and resolved for Seaway's own protocol
  client (whose ``ClientSecurity`` is built from them in ``seaway.protocol.client_security``);
- :mod:`seaway.security.basic_auth`: HTTP Basic authentication for the REST APIs (Kafka Connect's
  BasicAuthSecurityRestExtension and Confluent's ``authentication.method=BASIC``).
"""
