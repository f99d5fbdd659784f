"""Distributed mode: a cluster of Connect workers sharing connectors through Kafka (see README.md)."""
