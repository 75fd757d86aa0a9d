"""A running driver's Spark UI on this machine (the TUI's ``u``), through the API server.

The driver's own port is the one its pod names ``spark-ui`` (4040 unless it says otherwise,
``kube.sparkapi.ui_port``); what the user opens is a local port forwarded to it through the
pod's proxy subresource (``kube.uiforward``), so no route into the cluster is needed.
"""

from __future__ import annotations

from collections.abc import Callable

from kubectl_spark.core.pod import Pod
from kubectl_spark.kube.client import Api
from kubectl_spark.kube.sparkapi import DEFAULT_UI_PORT, ui_port
from kubectl_spark.kube.uiforward import UiForward

__all__ = ["UiForward", "forward_ui"]


def forward_ui(connect: Callable[[], Api], namespace: str, name: str, pod: Pod | None) -> UiForward:
    """A local port for the driver pod ``name`` (``pod``: its object, when the view has it)."""
    return UiForward(connect, namespace, name, ui_port(pod) if pod is not None else DEFAULT_UI_PORT)
