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
    # An empty JAVA_TOOL_OPTIONS would replace one this machine's user set for spark-submit.
    plain = SparkImage(Path("/spark"), Path("/jdk"))
    assert "JAVA_TOOL_OPTIONS" not in plain.environment()
    assert plain.java_environment() == {"JAVA_HOME": "/jdk"}


def test_spark_submit_here_runs_the_image_s_java_with_its_options() -> None:
    assert IMAGE.java_environment() == {
        "JAVA_HOME": "/jdk",
        "JAVA_TOOL_OPTIONS": "-XX:TieredStopAtLevel=1 -Xss2m",
    }
    assert IMAGE.java_environment().items() <= IMAGE.environment().items()
