"""Build the test bed's real control plane from Go modules, once per machine.

The binaries (etcd, kube-apiserver, kube-controller-manager, kube-scheduler) are built from the
module in ``gomod/`` (``k8s.io/kubernetes`` with its staging modules pinned by ``replace`` lines,
and ``go.etcd.io/etcd/server/v3`` at the version Kubernetes itself requires) into a cache folder
outside the work tree, keyed by the release and by a hash of ``go.mod``/``go.sum``. A fresh clone
on the same machine finds them there; a second run builds nothing.

Run as ``python -m tests.controlplane.build`` (``scripts/dev test`` does): it prints the folder,
or one line saying why there is none (no Go toolchain), and exits 0 either way unless asked to
``--require`` the binaries.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

GOMOD = Path(__file__).with_name("gomod")
KUBERNETES_VERSION = "v1.33.13"
ETCD_VERSION = "v3.5.21"
# The packages whose main builds each binary, by the binary's name in the cache.
PACKAGES = {
    "etcd": "go.etcd.io/etcd/server/v3",
    "kube-apiserver": "k8s.io/kubernetes/cmd/kube-apiserver",
    "kube-controller-manager": "k8s.io/kubernetes/cmd/kube-controller-manager",
    "kube-scheduler": "k8s.io/kubernetes/cmd/kube-scheduler",
}
ENV_DIR = "KUBECTL_SPARK_CONTROLPLANE_DIR"
# Without these the servers call themselves v0.0.0-master, and kubectl (and the gcloud kubectl
# dispatcher, which picks a client by the server's minor version) cannot tell what they are.
_MINOR = KUBERNETES_VERSION.split(".")[1]
LDFLAGS = " ".join(
    [
        "-s",
        "-w",
        *(
            f"-X {pkg}.{name}={value}"
            for pkg in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version")
            for name, value in (
                ("gitVersion", KUBERNETES_VERSION),
                ("gitMajor", "1"),
                ("gitMinor", _MINOR),
                ("gitTreeState", "clean"),
            )
        ),
    ]
)


class NoToolchain(Exception):
    """Go is not installed: the real tier cannot be built here."""


def _key() -> str:
    digest = hashlib.sha256()
    for name in ("go.mod", "go.sum"):
        digest.update((GOMOD / name).read_bytes())
    digest.update(LDFLAGS.encode())
    return f"{KUBERNETES_VERSION}-{digest.hexdigest()[:12]}"


def cache_dir() -> Path:
    """Where the binaries live: $KUBECTL_SPARK_CONTROLPLANE_DIR, or ~/.cache/kubectl-spark/…."""
    given = os.environ.get(ENV_DIR)
    if given:
        return Path(given)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "kubectl-spark" / "controlplane" / _key()


def built() -> Path | None:
    """The folder holding every binary, or None when one is missing."""
    folder = cache_dir()
    if all((folder / name).is_file() for name in PACKAGES):
        return folder
    return None


def build(*, log: bool = True) -> Path:
    """Build what is missing (atomically: a half-built folder is never taken as built)."""
    found = built()
    if found is not None:
        return found
    go = shutil.which("go")
    if go is None:
        raise NoToolchain("no Go toolchain on PATH: the real control plane cannot be built")
    folder = cache_dir()
    staging = folder.with_name(folder.name + f".building-{os.getpid()}")
    staging.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    if log:
        print(
            f"building the real control plane (Kubernetes {KUBERNETES_VERSION}, etcd "
            f"{ETCD_VERSION}) into {folder}: once per machine, about 8 minutes on 2 cores",
            file=sys.stderr,
            flush=True,
        )
    env = dict(os.environ, CGO_ENABLED="0", GOFLAGS="-mod=readonly -buildvcs=false")
    subprocess.run(
        [go, "build", "-trimpath", f"-ldflags={LDFLAGS}", "-o", f"{staging}/", *PACKAGES.values()],
        cwd=GOMOD,
        env=env,
        check=True,
    )
    # go names etcd's binary after its package path less the major version: "server".
    if (staging / "server").is_file():
        (staging / "server").rename(staging / "etcd")
    missing = [name for name in PACKAGES if not (staging / name).is_file()]
    if missing:
        raise RuntimeError(f"go build made no {', '.join(missing)} in {staging}")
    if folder.exists():
        shutil.rmtree(folder)
    staging.rename(folder)
    if log:
        print(f"built in {time.monotonic() - started:.0f} s: {folder}", file=sys.stderr, flush=True)
    return folder


def main(argv: list[str]) -> int:
    require = "--require" in argv
    try:
        folder = build()
    except NoToolchain as exc:
        print(
            f"{exc}; {'failing (--require)' if require else 'emulator tier only'}", file=sys.stderr
        )
        return 1 if require else 0
    except (subprocess.CalledProcessError, RuntimeError, OSError) as exc:
        print(f"building the real control plane failed: {exc}", file=sys.stderr)
        return 1
    print(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
