"""The OS kubelet's Spark image: the JVM options it is given reach every JVM it starts."""

from __future__ import annotations

from pathlib import Path

from kubectl_spark.sim.oskubelet.image import SparkImage

IMAGE = SparkImage(Path("/spark"), Path("/jdk"), jvm_options=("-XX:TieredStopAtLevel=1", "-Xss2m"))


def test_the_options_are_in_the_environment_every_jvm_reads() -> None:
    # The driver's JVM is spark-submit's (and its launcher's), whose command line the image
    # does not write: only JAVA_TOOL_OPTIONS reaches it.
    assert IMAGE.environment()["JAVA_TOOL_OPTIONS"] == "-XX:TieredStopAtLevel=1 -Xss2m"


def test_an_executors_command_does_not_repeat_them() -> None:
    command = IMAGE.command([], ["executor"], {"SPARK_EXECUTOR_MEMORY": "512m"})
    assert command[0] == "/jdk/bin/java"
    assert not any(arg.startswith(("-XX:Tiered", "-Xss")) for arg in command)
    assert "-Xmx512m" in command


def test_an_image_without_options_sets_none() -> None:
    assert "JAVA_TOOL_OPTIONS" not in SparkImage(Path("/spark"), Path("/jdk")).environment()
