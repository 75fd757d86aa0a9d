"""Spark's container image, as this machine's files: what its entrypoint runs for ``driver`` and ``executor``.

The OS kubelet has no image to pull. A pod whose container image is Spark's runs with Spark's
distribution from PyPI (``pyspark`` carries ``jars/``, ``bin/`` and spark-kubernetes) mounted
at the image's ``SPARK_HOME``, ``/opt/spark``, and the machine's Java; the command is what the
image's entrypoint builds (resource-managers/kubernetes/docker/src/main/dockerfiles/spark/
entrypoint.sh, Spark 3.x-4.x, read for this module):

- ``driver ARGS``: ``$SPARK_HOME/bin/spark-submit --conf spark.driver.bindAddress=
  $SPARK_DRIVER_BIND_ADDRESS --deploy-mode client ARGS``;
- ``executor``: ``java <SPARK_JAVA_OPT_* in numeric order> -Xms$SPARK_EXECUTOR_MEMORY
  -Xmx$SPARK_EXECUTOR_MEMORY -cp $SPARK_CLASSPATH:$SPARK_HOME/jars/* ...
  KubernetesExecutorBackend --driver-url ... --podName $SPARK_EXECUTOR_POD_NAME``;
- anything else runs as it is (pass-through); a pod's own ``command`` replaces the entrypoint.

The image runs its command under ``tini -s``, which passes SIGTERM to the command and reaps
what it leaves: here the command runs as the process group's leader, signalled the same way.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

IMAGE_SPARK_HOME = "/opt/spark"
EXECUTOR_BACKEND = "org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBackend"
_JAVA_OPT = re.compile(r"^SPARK_JAVA_OPT_(\d+)$")


class ImageError(Exception):
    """The pod asks for something this image cannot run (a reason for the container's status)."""


@dataclass(frozen=True)
class SparkImage:
    """Which images are Spark's, and the local files that stand for them."""

    spark_home: Path
    java_home: Path
    #: Images run as Spark's: an exact name, or a prefix ending in ``:`` or ``/``.
    names: tuple[str, ...] = ("apache/spark", "spark", "spark-py")
    #: JVM options every JVM of the image gets: the driver's spark-submit and its launcher as
    #: much as an executor, so they go in ``JAVA_TOOL_OPTIONS``, which every HotSpot JVM reads
    #: (and names on its stderr as it starts); a pod's own env setting it wins, as on a node.
    jvm_options: tuple[str, ...] = field(default_factory=tuple)

    def runs(self, image: str) -> bool:
        repository = image.rsplit("@", 1)[0]
        name = repository.rsplit(":", 1)[0] if ":" in repository.rsplit("/", 1)[-1] else repository
        return any(name == n or name.endswith("/" + n) for n in self.names)

    def java_environment(self) -> dict[str, str]:
        """Which Java runs, with the image's JVM options.

        Also what spark-submit on this machine runs with, so that the tier's every JVM is alike.
        """
        java = {"JAVA_HOME": str(self.java_home)}
        if self.jvm_options:
            java["JAVA_TOOL_OPTIONS"] = " ".join(self.jvm_options)
        return java

    def environment(self) -> dict[str, str]:
        """What the image's Dockerfile sets: SPARK_HOME, JAVA_HOME, PATH, and Python with pyspark."""
        python_bin = str(Path(sys.executable).parent)
        return {
            "SPARK_HOME": IMAGE_SPARK_HOME,
            **self.java_environment(),
            "PATH": f"{python_bin}:{self.java_home}/bin:/usr/local/bin:/usr/bin:/bin",
            "PYSPARK_PYTHON": sys.executable,
            "LANG": "C.UTF-8",
        }

    def command(
        self, command: Sequence[str], args: Sequence[str], env: Mapping[str, str]
    ) -> list[str]:
        """The process to run for a container of this image, with its environment ``env``."""
        if command:
            return [*command, *args]
        if not args:
            raise ImageError("Spark's image needs an argument: driver, executor or a command")
        role, rest = args[0], list(args[1:])
        if role == "driver":
            return [
                f"{IMAGE_SPARK_HOME}/bin/spark-submit",
                "--conf",
                f"spark.driver.bindAddress={env.get('SPARK_DRIVER_BIND_ADDRESS', '')}",
                "--deploy-mode",
                "client",
                *rest,
            ]
        if role == "executor":
            return self._executor(env)
        return list(args)

    def _executor(self, env: Mapping[str, str]) -> list[str]:
        numbered = sorted(
            (int(m.group(1)), value)
            for key, value in env.items()
            if (m := _JAVA_OPT.match(key)) is not None
        )
        classpath = f"{env.get('SPARK_CLASSPATH', '')}:{IMAGE_SPARK_HOME}/jars/*"
        if env.get("SPARK_EXTRA_CLASSPATH"):
            classpath += ":" + env["SPARK_EXTRA_CLASSPATH"]
        conf_dir = env.get("SPARK_CONF_DIR") or f"{IMAGE_SPARK_HOME}/conf"
        classpath = f"{conf_dir}:{classpath}"
        memory = env.get("SPARK_EXECUTOR_MEMORY", "1g")
        return [
            f"{self.java_home}/bin/java",
            *(value for _, value in numbered),
            f"-Xms{memory}",
            f"-Xmx{memory}",
            "-cp",
            f"{classpath}:{env.get('SPARK_DIST_CLASSPATH', '')}",
            EXECUTOR_BACKEND,
            "--driver-url",
            env.get("SPARK_DRIVER_URL", ""),
            "--executor-id",
            env.get("SPARK_EXECUTOR_ID", ""),
            "--cores",
            env.get("SPARK_EXECUTOR_CORES", "1"),
            "--app-id",
            env.get("SPARK_APPLICATION_ID", ""),
            "--hostname",
            env.get("SPARK_EXECUTOR_POD_IP", ""),
            "--resourceProfileId",
            env.get("SPARK_RESOURCE_PROFILE_ID", "0"),
            "--podName",
            env.get("SPARK_EXECUTOR_POD_NAME", ""),
        ]
