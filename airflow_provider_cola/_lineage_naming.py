"""OpenLineage names of the datasets a Cola task reads and writes, as the naming spec gives them.

A source or output is a path (``/data/orders``, ``s3a://bucket/key``) or a catalog table
(``db.orders``); each becomes a ``(namespace, name)`` pair: :func:`path_naming`,
:func:`table_naming`, and :func:`config_naming` for a source or output argument as the tasks
take it. Naming is string work on the argument and the task's Spark conf alone: it is apart
from the quality facets (``_lineage_facets``) because a dataset's name does not depend on what
was checked, and from the tasks' lineage methods (``_lineage``) so it is tested without a task.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

__all__ = ["SPARK_CATALOG_NAMESPACE", "config_naming", "path_naming", "table_naming"]

# The namespace of a catalog table when the task's Spark conf names no Hive metastore: the
# naming spec has no entry for Spark's own session catalog, and the worker cannot see where
# the table's files are.
SPARK_CATALOG_NAMESPACE = "spark_catalog"
# Object stores: the bucket (or container) is the namespace and the object key, without its
# leading slash, the name. s3a:// and s3n:// are S3, as the spec and OpenLineage's Spark
# integration name them.
_OBJECT_STORES = {"s3": "s3", "s3a": "s3", "s3n": "s3", "gs": "gs", "gcs": "gs", "wasb": "wasbs", "wasbs": "wasbs"}


def path_naming(location: str, conf: Mapping[str, Any] | None = None) -> tuple[str, str]:
    """The OpenLineage ``(namespace, name)`` of a path, as the naming spec gives it.

    ``/data/orders`` and ``file:///data/orders`` are ``("file", "/data/orders")`` (a relative
    path is made absolute against the working directory, as a local driver reads it);
    ``file://host/p`` is ``("file://host", "/p")``; ``s3a://bucket/key`` is ``("s3://bucket",
    "key")``; ``gs://`` and ``wasbs://`` likewise; ``hdfs://nn:8020/p`` is ``("hdfs://nn:8020",
    "/p")`` and any other scheme ``("<scheme>://<authority>", "<path>")``. A trailing slash is
    dropped. A path without a scheme is on the default file system: the local one, unless
    ``conf`` sets ``spark.hadoop.fs.defaultFS``.

    Args:
        location: the source's or output's ``path``.
        conf: the task's Spark conf, if any.
    """
    parts = urlsplit(location)
    # One letter before the colon is a Windows drive, not a scheme.
    if len(parts.scheme) <= 1:
        default_fs = str((conf or {}).get("spark.hadoop.fs.defaultFS") or "")
        if default_fs and not default_fs.startswith("file:") and location.startswith("/"):
            return path_naming(default_fs.rstrip("/") + location)
        return "file", _without_trailing_slash(os.path.abspath(location))
    scheme = parts.scheme.lower()
    if scheme == "file":
        namespace = f"file://{parts.netloc}" if parts.netloc else "file"
        return namespace, _without_trailing_slash(parts.path) or "/"
    if scheme in _OBJECT_STORES:
        return f"{_OBJECT_STORES[scheme]}://{parts.netloc}", parts.path.strip("/") or "/"
    return f"{scheme}://{parts.netloc}", _without_trailing_slash(parts.path) or "/"


def table_naming(table: str, conf: Mapping[str, Any] | None = None) -> tuple[str, str]:
    """The OpenLineage ``(namespace, name)`` of a catalog table.

    With a Hive metastore in the task's Spark conf (``spark.sql.catalogImplementation`` set to
    ``hive`` and ``spark.sql.hive.metastore.uris`` or ``spark.hadoop.hive.metastore.uris``),
    the spec's Hive naming: ``("hive://<host>:<port>", "<database>.<table>")``, the database
    being ``default`` when the name has none. Otherwise ``(SPARK_CATALOG_NAMESPACE, table)``.

    Args:
        table: the table as the source or output names it (``db.orders``).
        conf: the task's Spark conf, if any.
    """
    settings = conf or {}
    uris = settings.get("spark.sql.hive.metastore.uris") or settings.get("spark.hadoop.hive.metastore.uris")
    if settings.get("spark.sql.catalogImplementation") != "hive" or not uris:
        return SPARK_CATALOG_NAMESPACE, table
    metastore = urlsplit(str(uris).split(",")[0].strip())
    parts = table.split(".")
    if len(parts) == 3 and parts[0] == "spark_catalog":
        parts = parts[1:]
    if len(parts) == 1:
        parts = ["default", *parts]
    return f"hive://{metastore.netloc}", ".".join(parts)


def _without_trailing_slash(path: str) -> str:
    return path.rstrip("/") if path != "/" else path


def config_naming(config: Any, conf: Mapping[str, Any] | None) -> tuple[str, str] | None:
    """The naming of a source or output config: a plain path, or a dict with a ``path`` or ``table``."""
    if isinstance(config, str) and config:
        return path_naming(config, conf)
    if not isinstance(config, Mapping):
        return None
    if isinstance(config.get("path"), str) and config["path"]:
        return path_naming(config["path"], conf)
    if isinstance(config.get("table"), str) and config["table"]:
        return table_naming(config["table"], conf)
    return None

