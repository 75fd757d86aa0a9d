"""The ``kubernetes`` package's stand-ins: a name loads only its module; anything else the
real ``__init__`` would do still happens, later (kubectl_spark/kube/lazy_kubernetes.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from kubectl_spark.kube.lazy_kubernetes import _absolute, bindings


def run(code: str) -> dict[str, Any]:
    script = f"import json, sys\nimport kubectl_spark.kube\n{code}\nprint(json.dumps(out))"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def test_a_name_loads_its_module_only() -> None:
    out = run(
        "from kubernetes import client\n"
        "pod = client.V1Pod(metadata=client.V1ObjectMeta(name='x'))\n"
        "loaded = [m for m in sys.modules if m.startswith('kubernetes.client.models.')]\n"
        "out = {'name': pod.metadata.name, 'models': sorted(loaded)}"
    )
    assert out["name"] == "x"
    assert out["models"] == [
        "kubernetes.client.models.v1_object_meta",
        "kubernetes.client.models.v1_pod",
    ]


def test_what_the_real_init_binds_otherwise_is_still_there() -> None:
    out = run(
        "import kubernetes\n"
        "from kubernetes import watch\n"  # a subpackage the top __init__ imports
        "from kubernetes.client import rest\n"  # a submodule no __init__ imports by name
        "names = set(kubernetes.client.models.__all__) if hasattr(kubernetes.client.models, '__all__') else None\n"
        "from kubernetes.client import *\n"  # __all__, or every public name: the full init runs
        "out = {'version': kubernetes.__version__, 'watch': watch.Watch.__name__,\n"
        "       'rest': rest.RESTClientObject.__name__, 'star': 'CoreV1Api' in dir()}"
    )
    assert out == {
        "version": out["version"],
        "watch": "Watch",
        "rest": "RESTClientObject",
        "star": True,
    }
    assert str(out["version"]).count(".") == 2


def test_relative_imports_resolve_as_the_import_system_does() -> None:
    assert _absolute("", 1, "kubernetes") == "kubernetes"
    assert _absolute("rest", 1, "kubernetes.client") == "kubernetes.client.rest"
    assert _absolute("config", 2, "kubernetes.client") == "kubernetes.config"
    assert _absolute("yaml", 0, "kubernetes") == "yaml"
    code = compile("from . import a\nfrom .b import c\nfrom x.y import z\n", "<t>", "exec")
    assert bindings(code, "pkg") == {"a": "pkg", "c": "pkg.b", "z": "x.y"}


def test_the_source_and_the_compiled_code_give_the_same_bindings() -> None:
    """The source is read where there is one (fast); a frozen bundle has only the code."""
    out = run(
        "import kubernetes\n"
        "from kubectl_spark.kube.lazy_kubernetes import STANDINS, bindings\n"
        "out = {}\n"
        "for name in STANDINS:\n"
        "    m = sys.modules[name]\n"
        "    fast, slow = m._bindings(), bindings(m._code(), name)\n"
        "    out[name] = [fast == slow, len(fast)]"
    )
    assert out == {
        "kubernetes": [True, 8],
        "kubernetes.client": [True, out["kubernetes.client"][1]],
        "kubernetes.client.models": [True, out["kubernetes.client.models"][1]],
    }
    assert all(n > 500 for _, n in [out["kubernetes.client"], out["kubernetes.client.models"]])
