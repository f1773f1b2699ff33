"""Where a Spark connection points: its master URL and deploy mode, read as ``SparkSubmitHook`` reads them.

The hook resolves its connection in private; the provider needs the same two facts before
the hook exists (the arguments it is built with depend on them) and in ``@cola_check``, which
starts its own session. ``tests/airflow_provider_cola/test_hook_internals.py`` checks that
these functions and the hook agree, so that a change in the apache-spark provider is seen.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from airflow.providers.apache.spark.hooks.spark_submit import DEFAULT_SPARK_BINARY
from airflow.sdk import BaseHook
from airflow.sdk.exceptions import AirflowException

if TYPE_CHECKING:
    from airflow.sdk import Connection

__all__ = ["SubmitTarget", "master_url", "requested_deploy_mode", "submit_target"]

# What SparkSubmitHook submits to when its connection cannot be read.
_NO_CONNECTION_MASTER = "yarn"


def master_url(conn: Connection) -> str:
    """The master URL of a ``spark`` connection: a full URL or ``local[n]`` in its host, or its
    type as the scheme, then its host (and port)."""
    if conn.conn_type == "spark" and conn.host and ("://" in conn.host or not conn.port):
        master = conn.host
    else:
        master = f"{conn.conn_type}://{conn.host or ''}"
    return f"{master}:{conn.port}" if conn.port else master


@dataclass(frozen=True)
class SubmitTarget:
    """Where spark-submit sends the job.

    Attributes:
        master: the master URL.
        deploy_mode: ``client`` (the driver runs in this worker) or ``cluster``.
        binary: the spark-submit command the hook runs.
    """

    master: str
    deploy_mode: str
    binary: str


def submit_target(conn_id: str, deploy_mode: str | None = None, spark_binary: str | None = None) -> SubmitTarget:
    """What ``SparkSubmitHook(conn_id=..., deploy_mode=..., spark_binary=...)`` submits to, and with.

    ``deploy_mode`` and ``spark_binary`` win over the connection's ``deploy-mode`` and
    ``spark-binary`` extras; client mode and ``spark-submit`` when neither says. Without a
    readable connection the hook submits to YARN and ignores ``deploy_mode`` as well (so this
    says ``client`` then, as the hook does).
    """
    try:
        conn = BaseHook.get_connection(conn_id)
    except AirflowException:
        return SubmitTarget(_NO_CONNECTION_MASTER, "client", spark_binary or DEFAULT_SPARK_BINARY)
    extra = conn.extra_dejson
    return SubmitTarget(
        master_url(conn),
        deploy_mode or extra.get("deploy-mode") or "client",
        spark_binary or extra.get("spark-binary") or DEFAULT_SPARK_BINARY,
    )


def requested_deploy_mode(conn_id: str, deploy_mode: str | None) -> str:
    """The deploy mode a task asks for: its own ``deploy_mode``, else its connection's, else ``client``.

    Unlike :func:`submit_target`, the task's own argument counts even when the connection
    cannot be read: a task that asks for cluster mode is checked as one.
    """
    if deploy_mode:
        return deploy_mode
    return submit_target(conn_id).deploy_mode
