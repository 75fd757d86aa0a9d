"""Build the krew archive for this platform and write the krew manifest.

    .venv/bin/python scripts/build_krew.py [--name spark] [--manifest krew-manifest.yaml] [--skip-build]

The archive holds a PyInstaller *onedir* bundle (a onefile executable unpacks itself on every
start) and the LICENSE: ``dist/kubectl-spark-<version>-<os>-<arch>.tar.gz``. The manifest lists
linux/darwin x amd64/arm64 and windows/amd64; platforms not built here get the same entry with a
zero sha256, and ``dist/RELEASE-NOTES.md`` says they are built elsewhere.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import platform
import re
import subprocess
import sys
import tarfile
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
PLATFORMS = (
    ("linux", "amd64"),
    ("linux", "arm64"),
    ("darwin", "amd64"),
    ("darwin", "arm64"),
    ("windows", "amd64"),
)
HOMEPAGE = "https://github.com/kubectl-spark/kubectl-spark"
NAMES = ("spark", "spark-apps")  # the second is ready if krew-index finds "spark" too generic
ZERO = "0" * 64
DEV_ONLY = ("mypy", "hypothesis", "pytest", "_pytest")


def version() -> str:
    text = (ROOT / "kubectl_spark" / "__init__.py").read_text()
    match = re.search(r'__version__ = "([^"]+)"', text)
    assert match is not None
    return match.group(1)


def current_platform() -> tuple[str, str]:
    system = {"Linux": "linux", "Darwin": "darwin", "Windows": "windows"}[platform.system()]
    arch = {"x86_64": "amd64", "AMD64": "amd64", "aarch64": "arm64", "arm64": "arm64"}[
        platform.machine()
    ]
    return system, arch


def archive_name(ver: str, os_: str, arch: str) -> str:
    return f"kubectl-spark-{ver}-{os_}-{arch}.tar.gz"


def build_bundle(work: Path) -> Path:
    entry = work / "entry.py"
    entry.write_text("import sys\nfrom kubectl_spark.cli.main import main\nsys.exit(main())\n")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "PyInstaller",
            "--onedir",
            "--name",
            "kubectl-spark",
            "--noconfirm",
            "--log-level",
            "WARN",
            "--collect-data",
            "kubectl_spark",
            # The commands are imported by name when invoked (cli/app.py): no import statement
            # names them for PyInstaller to follow.
            "--collect-submodules",
            "kubectl_spark.cli.commands",
            # Development tools that a dependency's hook could pull in (pydantic's, when typer
            # required it: its mypy plugin, hypothesis strategies) are never imported.
            *(f"--exclude-module={name}" for name in DEV_ONLY),
            "--distpath",
            str(work / "dist"),
            "--workpath",
            str(work / "build"),
            "--specpath",
            str(work),
            str(entry),
        ],
        check=True,
    )
    return work / "dist" / "kubectl-spark"


def make_archive(bundle: Path, out: Path) -> Path:
    """A reproducible tar.gz: sorted entries, zero mtimes, root-owned."""
    out.parent.mkdir(parents=True, exist_ok=True)

    def add(tar: tarfile.TarFile, path: Path, arcname: str) -> None:
        info = tar.gettarinfo(str(path), arcname)
        info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "root", "root"
        if info.isfile():
            with path.open("rb") as handle:
                tar.addfile(info, handle)
        else:
            tar.addfile(info)

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        add(tar, ROOT / "LICENSE", "LICENSE")
        add(tar, bundle, "kubectl-spark")
        for path in sorted(bundle.rglob("*")):
            add(tar, path, f"kubectl-spark/{path.relative_to(bundle)}")
    import gzip

    # Level 6 (gzip's own default): the same size as 9 here (44 MiB) in a third of the time.
    out.write_bytes(gzip.compress(buffer.getvalue(), compresslevel=6, mtime=0))
    return out


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def render(
    ver: str, shas: dict[tuple[str, str], str], *, name: str = "spark", homepage: str = HOMEPAGE
) -> str:
    blocks = []
    for os_, arch in PLATFORMS:
        exe = ".exe" if os_ == "windows" else ""
        uri = f"{homepage}/releases/download/v{ver}/{archive_name(ver, os_, arch)}"
        blocks.append(
            textwrap.indent(
                textwrap.dedent(f"""\
            - selector:
                matchLabels:
                  os: {os_}
                  arch: {arch}
              uri: {uri}
              sha256: "{shas.get((os_, arch), ZERO)}"
              bin: kubectl-spark/kubectl-spark{exe}
              files:
                - from: kubectl-spark/*
                  to: kubectl-spark
                - from: LICENSE
                  to: .
            """),
                "    ",
            )
        )
    template = (ROOT / "scripts" / "krew-manifest.template.yaml").read_text()
    return (
        template.replace("{{NAME}}", name)
        .replace("{{VERSION}}", ver)
        .replace("{{HOMEPAGE}}", homepage)
        .replace("{{PLATFORMS}}\n", "".join(blocks))
    )


def validate(doc: Any, *, package_version: str | None = None) -> list[str]:
    """krew-index's rules for a plugin manifest; an empty list means valid."""
    if not isinstance(doc, dict):
        return ["the manifest is not a mapping"]
    problems = _header_problems(doc)
    spec = doc.get("spec") or {}
    problems += _spec_problems(spec, package_version)
    platforms = spec.get("platforms") or []
    if not platforms:
        problems.append("spec.platforms must not be empty")
    seen: set[tuple[str, str]] = set()
    for i, entry in enumerate(platforms):
        problems += _platform_problems(i, entry, seen)
    return problems


def _header_problems(doc: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    if doc.get("apiVersion") != "krew.googlecontainertools.github.com/v1alpha2":
        problems.append("apiVersion must be krew.googlecontainertools.github.com/v1alpha2")
    if doc.get("kind") != "Plugin":
        problems.append("kind must be Plugin")
    name = str((doc.get("metadata") or {}).get("name") or "")
    if (
        not re.fullmatch(r"[\w-]+", name)
        or name.lower() in {"con", "prn", "aux", "nul"}
        or name != name.lower()
        or name.startswith("kube-")
    ):
        problems.append(f"metadata.name {name!r} must be a lowercase plugin name (no kube- prefix)")
    return problems


def _spec_problems(spec: dict[str, Any], package_version: str | None) -> list[str]:
    problems: list[str] = []
    ver = str(spec.get("version") or "")
    if not re.fullmatch(r"v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?", ver):
        problems.append(f"spec.version {ver!r} must be a v-prefixed semantic version")
    elif package_version is not None and ver != f"v{package_version}":
        problems.append(f"spec.version {ver} does not match the package version v{package_version}")
    short = str(spec.get("shortDescription") or "")
    if not short or len(short) > 50 or "\n" in short:
        problems.append("spec.shortDescription must be one line of at most 50 characters")
    description = str(spec.get("description") or "")
    if not description.strip():
        problems.append("spec.description is required")
    if any(len(line) > 80 for line in description.splitlines()):
        problems.append("spec.description must be wrapped at 80 columns")
    if not str(spec.get("homepage") or "").startswith("https://"):
        problems.append("spec.homepage must be an https URL")
    return problems


def _platform_problems(i: int, entry: Any, seen: set[tuple[str, str]]) -> list[str]:
    selector = (entry or {}).get("selector") or {}
    labels = selector.get("matchLabels") or {}
    if not labels or set(labels) - {"os", "arch"} or selector.get("matchExpressions"):
        return [f"platforms[{i}].selector must use only os/arch matchLabels"]
    problems: list[str] = []
    key = (str(labels.get("os")), str(labels.get("arch")))
    if key in seen:
        problems.append(f"platforms[{i}].selector overlaps another platform ({key[0]}/{key[1]})")
    seen.add(key)
    if not re.fullmatch(r"[a-f0-9]{64}", str(entry.get("sha256") or "")):
        problems.append(f"platforms[{i}].sha256 must be 64 lowercase hex characters")
    uri = str(entry.get("uri") or "")
    if not uri.startswith("https://") or not uri.endswith((".tar.gz", ".zip")):
        problems.append(f"platforms[{i}].uri must be an https .tar.gz or .zip")
    binary = str(entry.get("bin") or "")
    if not binary:
        problems.append(f"platforms[{i}].bin is required")
    elif key[0] == "windows" and not binary.endswith(".exe"):
        problems.append(f"platforms[{i}].bin must be an .exe on windows")
    files = entry.get("files") or []
    if not any(str(f.get("from")) == "LICENSE" for f in files if isinstance(f, dict)):
        problems.append(f"platforms[{i}].files must include the LICENSE")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name", default="spark", choices=NAMES)
    parser.add_argument("--manifest", type=Path, default=ROOT / "krew-manifest.yaml")
    parser.add_argument("--dist", type=Path, default=ROOT / "dist")
    parser.add_argument(
        "--skip-build", action="store_true", help="only write the manifest (zero sha256 everywhere)"
    )
    args = parser.parse_args()
    ver = version()
    shas: dict[tuple[str, str], str] = {}
    if not args.skip_build:
        here = current_platform()
        with tempfile.TemporaryDirectory() as work:
            bundle = build_bundle(Path(work))
            archive = make_archive(bundle, args.dist / archive_name(ver, *here))
        shas[here] = sha256(archive)
        print(
            f"built {archive} ({archive.stat().st_size // 1024 // 1024} MiB), sha256 {shas[here]}"
        )
    text = render(ver, shas, name=args.name)
    problems = validate(yaml.safe_load(text), package_version=ver)
    if problems:
        raise SystemExit("invalid manifest: " + "; ".join(problems))
    args.manifest.write_text(text)
    others = [f"{o}/{a}" for o, a in PLATFORMS if (o, a) not in shas]
    args.dist.mkdir(parents=True, exist_ok=True)
    (args.dist / "RELEASE-NOTES.md").write_text(
        f"# kubectl spark v{ver}\n\nBuilt here: {', '.join(f'{o}/{a}' for o, a in shas) or 'none'}.\n"
        f"Built elsewhere (their sha256 in the manifest is a placeholder until their build): {', '.join(others)}.\n"
    )
    print(f"wrote {args.manifest}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
