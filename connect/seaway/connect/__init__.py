"""Seaway Connect: Kafka Connect's model in Python.

Subpackages: ``api`` (the plugin SPI a connector author imports; stdlib only),
``converters`` (String, ByteArray, number, JSON and header converters), and the
runtime pieces (worker, herders, REST) which plugins never import.
"""
