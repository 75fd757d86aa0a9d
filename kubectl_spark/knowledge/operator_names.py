"""Names the Apache Spark Kubernetes Operator gives what it creates, computed as it does.

Shared by the core (which finds an attempt's pods by them) and the simulator (which names them):
``SparkAppSubmissionWorker`` (spark-submission-worker) in apache/spark-kubernetes-operator.
"""

from __future__ import annotations

import hashlib

# SparkAppSubmissionWorker: DEFAULT_ID_LENGTH_LIMIT, DEFAULT_HASH_BASED_IDENTIFIER_LENGTH_LIMIT.
ID_LENGTH_LIMIT = 46
HASH_LENGTH = 36
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def app_id_of(namespace: str, name: str, attempt_id: int) -> str:
    """The app id the operator gives an attempt (``generateSparkAppId``).

    ``<name>-<attemptId>``; longer than 46 characters, its first 9 characters, "-", and the
    first 36 base-36 digits of SHA-256 of "<namespace>/<name>/<attemptId>"
    (``generateHashBasedId``: Java's ``BigInteger(1, digest).toString(36)``).
    """
    preferred = f"{name}-{attempt_id}"
    if len(preferred) <= ID_LENGTH_LIMIT:
        return preferred
    digest = hashlib.sha256(f"{namespace}/{name}/{attempt_id}".encode()).digest()
    number, digits = int.from_bytes(digest, "big"), []
    while number:
        number, digit = divmod(number, 36)
        digits.append(_BASE36[digit])
    hashed = "".join(reversed(digits)) or "0"
    return f"{preferred[: ID_LENGTH_LIMIT - HASH_LENGTH - 1]}-{hashed[:HASH_LENGTH]}"
