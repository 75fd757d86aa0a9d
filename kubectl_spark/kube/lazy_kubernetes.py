"""Load of the ``kubernetes`` package only the modules a command uses.

The plugin uses the package for what it is made for — kubeconfig loading, authentication
(exec plugins, OIDC, client certificates, token files) and its ApiClient's HTTP — and reads
answers raw. But ``import kubernetes`` runs its ``__init__``, which imports every API class and
every model (about 800 modules: 60 % of ``ls``'s wall time on a small cluster, measured with
``-X importtime``, see docs/performance.md). Here, before the first import, the three package
modules whose ``__init__`` does that (``kubernetes``, ``kubernetes.client`` and
``kubernetes.client.models``) are put in ``sys.modules`` as stand-ins with the real package's
``__path__``: submodules import as usual, and a name the real ``__init__`` would have bound is
imported from the module it names there (read from its compiled code: a frozen bundle has no
source), on first use. A name it does not bind (``__all__``, say) runs the real ``__init__``
in the stand-in: never less than the real package, only later. ``KUBECTL_SPARK_EAGER_KUBERNETES=1`` turns it off (a test compares the
output both ways).
"""

from __future__ import annotations

import dis
import importlib
import importlib.util
import os
import re
import sys
import types
from importlib.machinery import ModuleSpec
from typing import Any

EAGER = "KUBECTL_SPARK_EAGER_KUBERNETES"
# ``from kubernetes.client.api_client import ApiClient`` and ``from . import client``: one
# name per line, as the generated __init__ files write them.
_FROM = re.compile(r"^from (\S+) import (\w+)\s*$", re.MULTILINE)
STANDINS = ("kubernetes", "kubernetes.client", "kubernetes.client.models")
FROM_INIT = ("__all__", "__version__")  # set by the real __init__: asking runs it


def bindings(code: types.CodeType, package: str) -> dict[str, str]:
    """Each name a package ``__init__`` binds with ``from M import name``, and its module M.

    Read from the compiled code, not the source: a frozen bundle (the krew archive) has no
    source files. ``from . import client`` gives the package itself: a submodule.
    """
    found: dict[str, str] = {}
    consts: list[Any] = []
    module: str | None = None
    for ins in dis.get_instructions(code):
        if ins.opname == "EXTENDED_ARG":
            continue  # a wide argument for the next instruction, not one of its own
        if ins.opname == "LOAD_CONST":
            consts = [*consts[-1:], ins.argval]
        elif ins.opname == "IMPORT_NAME":
            level = consts[0] if len(consts) == 2 and isinstance(consts[0], int) else 0
            module = _absolute(str(ins.argval), level, package)
        elif ins.opname == "IMPORT_FROM" and module is not None:
            found.setdefault(str(ins.argval), module)
        elif ins.opname not in ("STORE_NAME", "POP_TOP", "EXTENDED_ARG", "NOP", "RESUME"):
            module = None
    return found


def _absolute(module: str, level: int, package: str) -> str:
    if not level:
        return module
    base = package.rsplit(".", level - 1)[0] if level > 1 else package
    return f"{base}.{module}" if module else base


class _StandIn(types.ModuleType):
    """A package module whose ``__init__`` runs only when a name it binds is not found."""

    def __init__(self, spec: ModuleSpec) -> None:
        super().__init__(spec.name)
        self.__spec__ = spec
        self.__path__ = list(spec.submodule_search_locations or [])
        self.__file__ = spec.origin
        self.__package__ = spec.name
        self.__loader__ = spec.loader
        self._names: dict[str, str] | None = None
        self._complete = False

    def _code(self) -> types.CodeType:
        code = self.__loader__.get_code(self.__name__)  # type: ignore[union-attr]
        if code is None:
            raise ImportError(f"no code for {self.__name__}")
        return code  # type: ignore[no-any-return]

    def _bindings(self) -> dict[str, str]:
        """What the real ``__init__`` binds, and from where.

        Read from the source when there is one (a regular expression: a millisecond), else
        from the compiled code (a frozen bundle; 800 imports: tens of milliseconds).
        """
        try:
            source = self.__loader__.get_source(self.__name__)  # type: ignore[union-attr]
        except (ImportError, OSError):
            source = None
        if source is None:
            return bindings(self._code(), self.__name__)
        return {
            name: _absolute(
                module.lstrip("."), len(module) - len(module.lstrip(".")), self.__name__
            )
            for module, name in _FROM.findall(source)
        }

    def __getattr__(self, name: str) -> object:
        if (name.startswith("__") and name not in FROM_INIT) or self._complete:
            raise AttributeError(name)  # probes (__wrapped__ …) do not load the package
        if self._names is None:
            self._names = self._bindings()
        module = self._names.get(name)
        if module is None and importlib.util.find_spec(f"{self.__name__}.{name}") is not None:
            module = self.__name__  # a submodule the __init__ does not import: ``rest``
        if module is not None:
            if module == self.__name__:
                value: object = importlib.import_module(f"{self.__name__}.{name}")
            else:
                value = getattr(importlib.import_module(module), name)
            setattr(self, name, value)
            return value
        self._complete = True  # the real __init__, in this module: never less than it
        exec(self._code(), self.__dict__)  # noqa: S102 - the installed package's own __init__
        try:
            return self.__dict__[name]
        except KeyError:
            raise AttributeError(name) from None


def install() -> None:
    """Put the stand-ins in place; nothing when the package is already imported or eager."""
    if os.environ.get(EAGER) or "kubernetes" in sys.modules:
        return
    parent: _StandIn | None = None
    for name in STANDINS:
        spec = importlib.util.find_spec(name)  # the parent is a stand-in by now: not run
        if spec is None or spec.loader is None or not spec.submodule_search_locations:
            return  # not installed, or not a package: the import fails or runs as it would
        module = _StandIn(spec)
        sys.modules[name] = module
        if parent is not None:
            setattr(parent, name.rsplit(".", 1)[1], module)
        parent = module
