"""The recorder's TLS: its serving certificate, and the client certificates it verifies.

kube-apiserver reaches an aggregated API over TLS only. As metrics-server does when given no
certificate, the recorder makes itself a self-signed one at start (the manifests' APIService
then skips verifying it, as metrics-server's does; ``--tls-cert-file`` serves one a cluster's
CA issued instead). A client certificate is asked for but optional: one that does not chain to
the API server's front-proxy CA fails the handshake; none at all leaves a bearer token.
"""

from __future__ import annotations

import datetime as dt
import ssl
import tempfile
from collections.abc import Sequence
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kubectl_spark.kube.delegation import FrontProxyTrust

SELF_SIGNED_DAYS = 365


def serving_context(
    trust: FrontProxyTrust, names: Sequence[str], cert_file: str = "", key_file: str = ""
) -> ssl.SSLContext:
    """A server context; ``names`` go into a self-signed certificate when none is given."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    if cert_file:
        context.load_cert_chain(cert_file, key_file or None)
    else:
        _load_self_signed(context, names)
    if trust.client_ca:
        context.verify_mode = ssl.CERT_OPTIONAL
        context.load_verify_locations(cadata=trust.client_ca)
    return context


def _load_self_signed(context: ssl.SSLContext, names: Sequence[str]) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    now = dt.datetime.now(dt.UTC)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])])
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=SELF_SIGNED_DAYS))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(n) for n in names]), False)
        .sign(key, hashes.SHA256())
    )
    # ssl loads a chain from files only: written to a private folder, read, removed.
    with tempfile.TemporaryDirectory(prefix="kubectl-spark-tls-") as folder:  # mode 0700
        cert_path, key_path = Path(folder) / "tls.crt", Path(folder) / "tls.key"
        key_path.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        context.load_cert_chain(cert_path, key_path)
