"""Our -o jsonpath templates print what kubectl's print for the same template and object: each
template below runs through the real kubectl (client-side, on a dry-run create) and ours."""

from __future__ import annotations

import json

import pytest

from kubectl_spark.cli.jsonpath import Template
from kubectl_spark.errors import UsageError

OBJECT = {
    "apiVersion": "sparkoperator.k8s.io/v1beta2",
    "kind": "SparkApplication",
    "metadata": {"name": "t", "namespace": "default", "labels": {"spark-role": "driver"}},
    "spec": {
        "n": 3,
        "f": 1.5,
        "big": 12345678901,
        "b": True,
        "z": None,
        "m": {"b": 1, "a": "x"},
        "l": [1, "x", {"k": "v"}],
        "s": 'he said "hi"',
        "items": [
            {"name": "a", "state": "Running", "n": 1},
            {"name": "b", "state": "Failed", "n": 5},
            {"name": "c", "state": "Running", "n": 10, "tags": ["x"]},
        ],
        "groups": [{"name": "a", "tags": []}, {"name": "c", "tags": ["x"]}],
    },
}
TEMPLATES = [
    "{.spec.n}",
    "{.spec.f}",
    "{.spec.big}",
    "{.spec.b}",
    "{.spec.z}",
    "{.spec.m}",
    "{.spec.l}",
    "{.spec.s}",
    "{.spec.missing}",
    "{.spec.items[*].name}",
    "{.spec.items[-1].name}",
    "{.spec.items[0:2].name}",
    "{.spec.items[1:].name}",
    "{.spec.items[::2].name}",
    "{.spec.items[0,2].name}",
    '{.spec.items[?(@.state=="Running")].name}',
    "{.spec.items[?(@.name=='b')].n}",
    "{.spec.items[?(@.n>2)].name}",
    "{.spec.items[?(@.n>=5)].name}",
    "{.spec.items[?(@.n<5)].name}",
    '{.spec.items[?(@.name!="a")].n}',
    "{.spec.items[?(@.tags)].name}",
    '{range .spec.items[*]}{.name}{"\\t"}{.n}{"\\n"}{end}',
    "{.spec.m['a']}",
    "text {.spec.n} more",
    "{.spec.items.name}",
    '{.spec.n}{"\\n"}',
    "{$.spec.n}",
    "{@.spec.n}",
    "{.spec.l[2]}",
    "{.spec.items[*]}",
    "{.spec.n}}",
    "{.metadata.labels.spark-role}",
    "{.spec.f}{.spec.n}",
    "{.spec.groups[?(@.tags[*])].name}",
    "{.spec.groups[?(@.tags[0])].name}",
    "{.spec.groups[?(@.tags)].name}",
]


@pytest.mark.parametrize("template", TEMPLATES)
def test_a_template_prints_what_kubectl_prints(kubectl, template: str) -> None:
    theirs = kubectl(
        "create", "--dry-run=client", "-f", "-", "-o", f"jsonpath={template}",
        input=json.dumps(OBJECT),
    ).stdout  # fmt: skip
    assert Template(template).render(OBJECT) == theirs


@pytest.mark.parametrize(
    ("template", "error"),
    [
        ("{.spec.items[}", "error parsing jsonpath {.spec.items[}, unterminated array"),
        ("{.spec.n", "error parsing jsonpath {.spec.n, unclosed action"),
        ('{"unterminated}', "unterminated quoted string"),
        ("{.spec.items[x]}", "invalid array index x"),
        ("{.spec.items[5].name}", "array index out of bounds: index 5, length 3"),
        ('{.spec.items[?(@.n=="5")].name}', "incompatible types for comparison"),
        ("{end}", "not in range, nothing to end"),
        ("{.spec.items[::-1].name}", "step must be > 0"),
        ("{.spec.items[0:2:1:1].name}", "invalid array index 0:2:1:1"),
    ],
)
def test_a_template_kubectl_refuses_is_refused_with_its_words(
    kubectl, template: str, error: str
) -> None:
    theirs = kubectl(
        "create", "--dry-run=client", "-f", "-", "-o", f"jsonpath={template}",
        input=json.dumps(OBJECT), check=False,
    )  # fmt: skip
    assert theirs.returncode != 0 and error in theirs.stderr
    with pytest.raises(UsageError) as raised:
        Template(template).render(OBJECT)
    assert error in raised.value.message
    assert "\n" not in raised.value.message
