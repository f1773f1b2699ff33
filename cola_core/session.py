"""The Spark session a Cola job runs in: one factory for the command line and the decorator.

A session already active in the process is used as it is (and left running). Otherwise one
is started, and the caller stops it when done.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["connect_mode", "master_configured", "spark_session", "uses_local_python"]


def uses_local_python(master: str) -> bool:
    """Whether executors of ``master`` run this machine's Python: local mode and a standalone
    cluster here do; on YARN or Kubernetes the executors' Python is the cluster's business."""
    return master.startswith(("local", "spark://"))


def connect_mode() -> bool:
    """Whether pyspark is set to reach Spark through Spark Connect (``SPARK_REMOTE``)."""
    return bool(os.environ.get("SPARK_REMOTE") or os.environ.get("SPARK_CONNECT_MODE_ENABLED"))


def master_configured(conf: Iterable[tuple[str, str]]) -> bool:
    """Whether a direct run already has a master: in ``conf``, PYSPARK_SUBMIT_ARGS or spark-defaults.conf."""
    if any(key == "spark.master" for key, _ in conf):
        return True
    if "--master" in os.environ.get("PYSPARK_SUBMIT_ARGS", ""):
        return True
    conf_dir = os.environ.get("SPARK_CONF_DIR") or (
        os.path.join(os.environ["SPARK_HOME"], "conf") if os.environ.get("SPARK_HOME") else None
    )
    if conf_dir is None:
        return False
    try:
        lines = Path(conf_dir, "spark-defaults.conf").read_text(encoding="utf-8").splitlines()
    except OSError:
        return False
    return any(line.split(None, 1)[0] == "spark.master" for line in lines if line.strip())


def spark_session(
    master: str | None = None, conf: Iterable[tuple[str, str]] = (), app_name: str = "cola"
) -> tuple[SparkSession, bool]:
    """The session to run in, and whether this call started it (and so must stop it).

    Args:
        master: a master URL (``local[2]``, ``spark://...``, ``yarn``) or a Spark Connect
            one (``sc://host:15002``). Without one, spark-submit's master is used, or
            ``local[*]`` when the process was not launched by spark-submit and nothing else
            (``--conf``, PYSPARK_SUBMIT_ARGS, spark-defaults.conf, SPARK_REMOTE) names one.
        conf: Spark settings for a session this call starts.
        app_name: the application's name, unless spark-submit or ``conf`` gives one.
    """
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active, False
    settings = dict(conf)
    launched_by_spark_submit = "PYSPARK_GATEWAY_PORT" in os.environ
    builder = SparkSession.builder
    if (
        master is None
        and not launched_by_spark_submit
        and not connect_mode()
        and not master_configured(settings.items())
    ):
        master = "local[*]"
    if master is not None:
        builder = builder.remote(master) if master.startswith("sc://") else builder.master(master)
        # Python workers would otherwise run whatever python3 is on PATH.
        if uses_local_python(master) and "spark.pyspark.python" not in settings and "PYSPARK_PYTHON" not in os.environ:
            settings["spark.pyspark.python"] = sys.executable
    if not launched_by_spark_submit and "spark.app.name" not in settings:
        builder = builder.appName(app_name)
    for key, value in settings.items():
        builder = builder.config(key, str(value))
    return builder.getOrCreate(), True
