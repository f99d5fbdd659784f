"""TLS for SSL and SASL_SSL listeners: Kafka's ``ssl.*`` settings as a Python ``SSLContext``.

The loading code is shared with the Connect worker's and the registry's HTTPS listeners and
with Seaway's own clients, so it lives in :mod:`seaway.security.tls` (PEM and PKCS12 key
material, TLS 1.2/1.3, Kafka's cipher suite names, JKS refused with the command that converts
it); the broker imports it from there.
"""

from __future__ import annotations

from seaway.security.tls import (
    TLS13_SUITES,
    TlsConfigError,
    TlsSettings,
    build_server_context,
    certificate_validity_warning,
    peer_subject_dn,
)

__all__ = ["TLS13_SUITES", "TlsConfigError", "TlsSettings", "build_server_context", "certificate_validity_warning",
           "peer_subject_dn"]
