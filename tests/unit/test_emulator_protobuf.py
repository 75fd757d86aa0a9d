"""The emulator's protobuf bodies: a Job decoded by its table of field numbers, or refused whole."""

from __future__ import annotations

import pytest

from kubectl_spark.cluster.apiserver import protobuf
from kubectl_spark.cluster.apiserver.errors import ApiError


def varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number: int, value: int | bytes) -> bytes:
    if isinstance(value, int):
        return varint(number << 3) + varint(value)
    return varint(number << 3 | 2) + varint(len(value)) + value


def s(text: str) -> bytes:
    return text.encode()


def job(*spec_fields: bytes, pod_spec: bytes = b"", meta: bytes = b"") -> bytes:
    """A Job as Go's marshaller writes it: unset non-pointer fields still sent, empty."""
    container = (
        field(1, s("j"))
        + field(2, s("busybox"))
        + field(3, s("sh"))
        + field(3, s("-c"))
        + field(5, b"")  # workingDir: ""
        + field(8, b"")  # resources: {}
        + field(16, 0)  # stdin: false
    )
    spec = field(2, container) + field(3, s("Never")) + field(11, 0) + pod_spec  # hostNetwork
    template = field(1, field(1, b"")) + field(2, spec)
    zero_time = field(1, 0) + field(2, 0)
    metadata = field(1, s("j")) + field(8, zero_time) + meta  # creationTimestamp: zero Time
    obj = field(1, metadata) + field(2, field(6, template) + b"".join(spec_fields)) + field(3, b"")
    type_meta = field(1, s("batch/v1")) + field(2, s("Job"))
    return protobuf.MAGIC + field(1, type_meta) + field(2, obj)


def test_a_job_is_decoded_with_the_fields_it_sets() -> None:
    doc = protobuf.decode(job(field(7, 0), field(10, 1), field(3, 30)))
    assert doc["apiVersion"] == "batch/v1" and doc["kind"] == "Job"
    assert doc["metadata"] == {"name": "j"}  # the zero creationTimestamp is an unset one
    spec = doc["spec"]
    assert (spec["backoffLimit"], spec["suspend"], spec["activeDeadlineSeconds"]) == (0, True, 30)
    pod = spec["template"]["spec"]
    assert pod == {
        "containers": [{"name": "j", "image": "busybox", "command": ["sh", "-c"], "resources": {}}],
        "restartPolicy": "Never",
    }


def test_a_negative_integer_is_read_as_go_writes_it() -> None:
    doc = protobuf.decode(job(field(8, -5)))
    assert doc["spec"]["ttlSecondsAfterFinished"] == -5  # refused later, by validation


@pytest.mark.parametrize(
    ("more", "where"),
    [
        ({"pod_spec": field(18, field(1, s("x")))}, "field 18 of Job.spec.template.spec"),
        ({"meta": field(9, field(1, 1700000000))}, "field 9 of Job.metadata"),
    ],
)
def test_a_field_the_table_does_not_know_is_refused_not_dropped(more: dict, where: str) -> None:
    """Affinity, a deletionTimestamp: set, but not in the table. The Job is refused whole."""
    with pytest.raises(ApiError) as caught:
        protobuf.decode(job(**more))
    assert caught.value.code == 415 and where in str(caught.value)


def test_a_truncated_body_is_a_bad_request() -> None:
    with pytest.raises(ApiError) as caught:
        protobuf.decode(job()[:-3])
    assert caught.value.code == 400
