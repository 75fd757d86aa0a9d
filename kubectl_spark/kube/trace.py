"""kubectl's ``-v``: what the plugin asked of the API server, one klog-style line per request.

At 3 a.m. the question "is it the cluster or the tool?" is answered the way kubectl answers it:
``-v=6`` prints which kubeconfig was read and, for every request, its method, URL, status and
time, in the shape of kubectl's (``I1130 00:44:30.633385    6830 round_trippers.go:560] GET
https://…/pods?limit=500 200 OK in 9 milliseconds``, here from ``client.py``), so the two can be
read side by side. Lines
go to stderr; credentials never appear (no headers are printed), and URLs are printed
percent-encoded, as they went on the wire, so cluster text cannot forge terminal output.
"""

from __future__ import annotations

import os
import sys
from datetime import datetime
from urllib.parse import quote, urlencode

REQUESTS = 6  # kubectl's level for request URLs, status and timing
STATUS_TEXT = {
    200: "OK",
    201: "Created",
    202: "Accepted",
    204: "No Content",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    410: "Gone",
    415: "Unsupported Media Type",
    422: "Unprocessable Entity",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


def line(source: str, message: str) -> None:
    """One klog-style info line on stderr."""
    now = datetime.now().astimezone()  # klog writes local time
    sys.stderr.write(f"I{now:%m%d} {now:%H:%M:%S.%f} {os.getpid():>7} {source}] {message}\n")
    sys.stderr.flush()


def url(host: str, path: str, query: list[tuple[str, object]] | None) -> str:
    """The request's URL as sent: path and query percent-encoded."""
    text = host.rstrip("/") + quote(path, safe="/:@")
    return f"{text}?{urlencode(query)}" if query else text


def request(method: str, target: str, status: int | None, seconds: float) -> None:
    """``GET https://… 200 OK in 9 milliseconds``; no status when no answer came."""
    answer = f"{status} {STATUS_TEXT.get(status, '')}".rstrip() if status else ""
    line("client.py", f"{method} {target} {answer} in {round(seconds * 1000)} milliseconds")
