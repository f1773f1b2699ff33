"""The index of a history store on this machine's disk, read without a JVM.

The API server must not start Spark to draw ``/cola/``: a JVM costs a minute to start on a
busy host and its memory for as long as the server runs. A history store that is a parquet or
ORC folder on a local path is read here with pyarrow (which the apache-spark provider already
installs), only the columns the index needs, and handed to the engine's own
``cola_core.history_index.index_entries``: the index is the one ``cola history html`` draws.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from cola_core.history_index import index_entries

if TYPE_CHECKING:
    from cola_core.specs import OutputSpec

__all__ = ["local_store_folder", "read_local_index"]

# What the index reads of each row; data_date (absent from stores written before it) is
# replaced by validated_at where it is missing, as the engine reads such a store.
_READ = ("dataset", "rule_id", "code", "check_name", "severity", "metric_value", "run_id", "validated_at",
         "data_date", "excluded")
_TIMES = ("validated_at", "data_date")


def local_store_folder(spec: OutputSpec) -> Path | None:
    """The folder of a path store on this machine (a plain path or a ``file:`` URI); None for a
    table, or a path on other storage (``s3a://``, ``hdfs://``), which only Spark reads."""
    if spec.path is None:
        return None
    parts = urlsplit(spec.path)
    if parts.scheme == "file" and parts.netloc in ("", "localhost"):
        return Path(parts.path)
    if parts.scheme == "" and spec.path.startswith("/"):
        return Path(spec.path)
    return None


def read_local_index(folder: Path, file_format: str, runs: int) -> list[dict[str, Any]]:
    """The index entries of the store in ``folder`` (``cola_core.history_index.index_entries``).

    Every part file is read, each with its own columns: a store appended to across Cola
    versions holds parts with and without the columns added since (``history.ADDED_COLUMNS``).
    Hidden files and folders (``_SUCCESS``, ``.crc``, a run's ``_cola_staging`` folder) are not
    parts, as for Spark.

    Raises:
        ValueError: a part is not a Cola history part (a column of another type, or missing),
            or cannot be read; the message names the file.
    """
    # pyarrow ships no type information: its calls are typed Any here.
    import pyarrow.dataset as ds  # type: ignore[import-untyped]

    if not folder.is_dir():
        return []
    rows: list[dict[str, Any]] = []
    for fragment in ds.dataset(str(folder), format=file_format).get_fragments():
        try:
            present = fragment.physical_schema.names
            table = fragment.to_table(columns=[name for name in _READ if name in present])
            rows.extend(_index_row(row) for row in _with_micros(table).to_pylist())
        except (OSError, ValueError, TypeError, KeyError) as error:  # pyarrow's errors derive from these
            raise ValueError(f"cannot read the history part {fragment.path}: {error}") from error
    return index_entries(rows, runs)


def _with_micros(table: Any) -> Any:
    """``table`` with its times as microseconds since the epoch: Spark's parquet timestamps are
    instants (INT96 or int64, read as naive UTC), so the number is the engine's ``unix_micros``."""
    import pyarrow as pa
    import pyarrow.compute as pc  # type: ignore[import-untyped]

    for name in _TIMES:
        if name in table.column_names:
            micros = pc.cast(pc.cast(table[name], pa.timestamp("us")), pa.int64())
            table = table.set_column(table.column_names.index(name), name, micros)
    return table


def _index_row(row: dict[str, Any]) -> dict[str, Any]:
    validated = row.get("validated_at")
    data = row.get("data_date")
    if not isinstance(validated, (int, type(None))) or not isinstance(data, (int, type(None))):
        raise TypeError("validated_at and data_date must be timestamps")
    return {
        "dataset": row["dataset"], "rule_id": row["rule_id"], "code": row.get("code"),
        "check_name": row.get("check_name"), "severity": row.get("severity"), "metric_value": row.get("metric_value"),
        "run_id": row.get("run_id"), "validated_micros": validated,
        "data_micros": validated if data is None else data, "excluded": bool(row.get("excluded")),
    }

