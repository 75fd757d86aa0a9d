"""The one gateway to a cluster: the only package that imports ``kubernetes``."""

from . import lazy_kubernetes

# Before any module of this package imports ``kubernetes``: only what is used loads.
lazy_kubernetes.install()
