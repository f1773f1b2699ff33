"""The index of a history store on this machine's disk, read without a JVM.

The API server must not start Spark to draw ``/cola/``: a JVM costs a minute to start on a
busy host and its memory for as long as the server runs. A history store that is a parquet or
ORC folder on a local path is read here with pyarrow (which the apache-spark provider already
installs), only the columns the index needs, and handed to the engine's own
``cola_core.history.index.index_entries``: the index is the one ``cola history html`` draws.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from cola_core.history.index import index_entries

if TYPE_CHECKING:
    from cola_core.storage.specs import OutputSpec

__all__ = ["local_store_folder", "read_local_index"]

# What the index reads of each row; data_date (absent from stores written before it) is
# replaced by validated_at where it is missing, as the engine reads such a store.
_READ = ("dataset", "rule_id", "code", "check_name", "severity", "metric_value", "run_id", "validated_at",
         "data_date", "excluded")
_TIMES = ("validated_at", "data_date")
# Columns every history row has a value in: a part without one is not a Cola history part.
_REQUIRED = ("dataset", "run_id", "validated_at", "excluded")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


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
    """The index entries of the store in ``folder`` (``cola_core.history.index.index_entries``).

    Every part file is read, as one pyarrow dataset with the columns the index needs: a part
    written before a column existed (``history.ADDED_COLUMNS``) reads it as NULL, as the engine
    reads such a store. Hidden files and folders (``_SUCCESS``, ``.crc``, a run's
    ``_cola_staging`` folder) are not parts, as for Spark.

    Raises:
        ValueError: a part cannot be read, or is not a Cola history part (a column of another
            type, or one every history row has is missing); the message names the file.
    """
    # pyarrow ships no type information: its calls are typed Any here.
    import pyarrow.dataset as ds  # type: ignore[import-untyped]

    parts = _parts(folder) if folder.is_dir() else []
    if not parts:
        return []
    try:
        # One dataset, read by pyarrow's threads: a thousand runs are a thousand files.
        table = ds.dataset([str(part) for part in parts], format=file_format, schema=_arrow_schema()).to_table()
        rows = [_index_row(row) for row in _with_micros(table).to_pylist()]
    except (OSError, ValueError, TypeError, KeyError):  # pyarrow's errors derive from these
        rows = None
    if rows is None:
        _refuse_the_bad_part(parts, file_format)
        raise ValueError("cannot read its parts together")  # each one reads alone: not seen so far
    return index_entries(rows, runs)


def _refuse_the_bad_part(parts: list[Path], file_format: str) -> None:
    """Read each part alone, to say which one cannot be read.

    Raises:
        ValueError: naming the first part that cannot be read, or that lacks a column every
            history row has.
    """
    import pyarrow.dataset as ds

    for part in parts:
        try:
            data = ds.dataset(str(part), format=file_format)
            missing = [name for name in _REQUIRED if name not in data.schema.names]
            if missing:
                raise ValueError(f"it is not a Cola history part: it lacks {', '.join(missing)}")
            ds.dataset(str(part), format=file_format, schema=_arrow_schema()).to_table()
        except (OSError, ValueError, TypeError, KeyError) as error:
            raise ValueError(f"cannot read the history part {part}: {_one_line(error)}") from error


def _arrow_schema() -> Any:
    """The columns the index reads, with the types Cola writes them with."""
    import pyarrow as pa

    text, double, time = pa.string(), pa.float64(), pa.timestamp("us")
    types = {"metric_value": double, "validated_at": time, "data_date": time, "excluded": pa.bool_()}
    return pa.schema([(name, types.get(name, text)) for name in _READ])


def _one_line(error: Exception) -> str:
    """pyarrow's message on one line, without the control characters a corrupt file can put
    in it (a page's error page shows it as one line of text)."""
    return _CONTROL.sub("?", " ".join(str(error).split()))


def _parts(folder: Path) -> list[Path]:
    """The data files below ``folder``, as Spark lists them: names starting with ``_`` or ``.``
    (``_SUCCESS``, ``.crc`` files, a run's ``_cola_staging`` folder) are not data."""
    found: list[Path] = []
    for root, folders, files in os.walk(folder):
        folders[:] = sorted(name for name in folders if not name.startswith(("_", ".")))
        found.extend(Path(root, name) for name in sorted(files) if not name.startswith(("_", ".")))
    return found


def _with_micros(table: Any) -> Any:
    """``table`` with its times as microseconds since the epoch: Spark's parquet timestamps are
    instants (INT96 or int64, read as naive UTC), so the number is the engine's ``unix_micros``."""
    import pyarrow as pa
    import pyarrow.compute as pc  # type: ignore[import-untyped]

    for name in _TIMES:
        table = table.set_column(table.column_names.index(name), name, pc.cast(table[name], pa.int64()))
    return table


def _index_row(row: dict[str, Any]) -> dict[str, Any]:
    if any(row[name] is None for name in _REQUIRED):
        raise ValueError("a part lacks a column every history row has")
    validated = row["validated_at"]
    data = row["data_date"]
    return {
        "dataset": row["dataset"], "rule_id": row["rule_id"], "code": row["code"], "check_name": row["check_name"],
        "severity": row["severity"], "metric_value": row["metric_value"], "run_id": row["run_id"],
        "validated_micros": validated, "data_micros": validated if data is None else data,
        "excluded": bool(row["excluded"]),
    }
