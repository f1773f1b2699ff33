"""Sources and outputs as specs: where the engine reads data and where it writes it.

Everything here is pure Python, so a malformed source or output fails before Spark starts.
Reading and writing them is :mod:`cola_core.storage.readwrite`'s work.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cola_core.common.formatting import cut_text
from cola_core.errors import ColaOutputError, ColaRuleError, ColaSourceError
from cola_core.guards.sqlguard import check_query, check_table_name

__all__ = [
    "FORMATS",
    "GLOB_CHARACTERS",
    "WRITE_MODES",
    "OutputSpec",
    "SourceSpec",
    "history_spec",
    "parse_output",
    "parse_source",
    "without_file_scheme",
]

FORMATS = ("parquet", "csv", "json", "orc", "delta")
WRITE_MODES = ("append", "overwrite", "error", "errorifexists", "ignore")
_SOURCE_KEYS = ("path", "table", "query", "format", "options", "schema", "stream")
# Spark's bound on the text of one schema: a DDL string is a few columns' names and types.
SCHEMA_CHARS = 100_000
_OUTPUT_KEYS = ("path", "table", "format", "mode", "partition_by", "options")
# Characters with which Spark expands a path into several files.
GLOB_CHARACTERS = frozenset("*?[{")


@dataclass(frozen=True)
class SourceSpec:
    """Where the data to validate comes from: exactly one of ``path``, ``table`` or ``query``.

    Attributes:
        path: a file or folder Spark reads with ``format`` and ``options``.
        table: a catalog table or view, e.g. ``db.orders``.
        query: one read-only ``SELECT``/``WITH`` query.
        format: the reader for ``path`` (one of :data:`FORMATS`).
        options: reader options, e.g. ``{"header": "true"}`` for CSV.
        schema: for ``path``, the columns as Spark's DDL text (``"id INT, name STRING"``):
            the reader takes them instead of inferring them.
        stream: for ``path``, read the folder as a Structured Streaming file source: each run
            sees only the files that arrived since the last (``split_stream``; a stream needs
            its ``schema``).
    """

    path: str | None = None
    table: str | None = None
    query: str | None = None
    format: str = "parquet"
    options: Mapping[str, str] = field(default_factory=dict)
    schema: str | None = None
    stream: bool = False

    def to_config(self) -> dict[str, Any]:
        """The dict :func:`parse_source` reads back as this spec (defaults left out)."""
        if self.path is None:
            return {"table": self.table} if self.table is not None else {"query": self.query}
        config: dict[str, Any] = {"path": self.path, "format": self.format}
        if self.options:
            config["options"] = dict(self.options)
        if self.schema is not None:
            config["schema"] = self.schema
        if self.stream:
            config["stream"] = True
        return config

    def describe(self) -> str:
        """A short label for messages: ``parquet at /data/orders``, ``json stream at /landing``,
        ``table db.orders``, ``query``."""
        if self.path is not None:
            return f"{self.format}{' stream' if self.stream else ''} at {self.path}"
        return f"table {self.table}" if self.table is not None else "query"


@dataclass(frozen=True)
class OutputSpec:
    """Where a DataFrame is written: exactly one of ``path`` or ``table``.

    Attributes:
        path: a folder, written with ``format`` (parquet by default).
        table: a catalog table, written with ``saveAsTable``.
        format: the writer; for a table, ``None`` keeps the table's own (or Spark's default).
        mode: ``append``, ``overwrite``, ``error``/``errorifexists`` (Spark's default) or ``ignore``.
        partition_by: columns to partition the output by.
        options: writer options.
    """

    path: str | None = None
    table: str | None = None
    format: str | None = "parquet"
    mode: str = "errorifexists"
    partition_by: tuple[str, ...] = ()
    options: Mapping[str, str] = field(default_factory=dict)

    def to_config(self) -> dict[str, Any]:
        """The dict :func:`parse_output` reads back as this spec (defaults left out)."""
        config: dict[str, Any] = {"path": self.path} if self.path is not None else {"table": self.table}
        if self.format != ("parquet" if self.path is not None else None):
            config["format"] = self.format
        if self.mode != "errorifexists":
            config["mode"] = self.mode
        if self.partition_by:
            config["partition_by"] = list(self.partition_by)
        if self.options:
            config["options"] = dict(self.options)
        return config

    @property
    def target(self) -> str:
        """The path or the table name."""
        return self.path if self.path is not None else f"table {self.table}"


def parse_source(source: Mapping[str, Any] | SourceSpec) -> SourceSpec:
    """Validate a source dict such as ``{"path": "/data/orders", "format": "csv"}``.

    Raises:
        ColaSourceError: when the dict is not exactly one of the three forms.
    """
    if isinstance(source, SourceSpec):
        return source
    if not isinstance(source, Mapping):
        raise ColaSourceError(
            'a source is an object such as {"path": "/data/orders", "format": "parquet"}, '
            f'{{"table": "db.orders"}} or {{"query": "SELECT ..."}}, got {type(source).__name__}'
        )
    _refuse_unknown_keys(source, _SOURCE_KEYS, "source", ColaSourceError)
    kinds = [key for key in ("path", "table", "query") if key in source]
    if len(kinds) != 1:
        found = f"gives {' and '.join(repr(k) for k in kinds)}" if kinds else "has none of them"
        raise ColaSourceError(f"a source needs exactly one of 'path', 'table' or 'query', but {found}")
    kind = kinds[0]
    value = source[kind]
    if not isinstance(value, str) or not value.strip():
        raise ColaSourceError(f"source '{kind}' must be a non-empty string, got {value!r}")
    if kind != "path":
        extra = [key for key in ("format", "options", "schema", "stream") if key in source]
        if extra:
            raise ColaSourceError(f"source '{extra[0]}' only applies to a 'path' source, not to a '{kind}'")
    if kind == "query":
        _check_read_only_query(value)
    if kind == "table":
        try:
            check_table_name(value, "table")
        except ColaRuleError as error:
            raise ColaSourceError(f"source {error.reason}") from error
    stream, schema = source.get("stream", False), source.get("schema")
    if not isinstance(stream, bool):
        raise ColaSourceError(f"source 'stream' must be true or false, got {stream!r}")
    if schema is not None and (not isinstance(schema, str) or not schema.strip() or len(schema) > SCHEMA_CHARS):
        raise ColaSourceError(
            "source 'schema' must be the columns as Spark DDL text such as 'id INT, name STRING' "
            f"(at most {SCHEMA_CHARS:,} characters), got {cut_text(repr(schema), 80)}"
        )
    if stream and schema is None:
        raise ColaSourceError(
            "a streaming source needs its 'schema' (Spark DDL text such as 'id INT, name STRING'): "
            "a stream cannot infer its columns from files that have not arrived yet"
        )
    return SourceSpec(
        **{kind: value},
        format=_parse_format(source.get("format", "parquet"), ColaSourceError, "source"),
        options=_parse_options(source.get("options", {}), ColaSourceError, "source"),
        schema=schema,
        stream=stream,
    )


def parse_output(config: Mapping[str, Any] | str | OutputSpec) -> OutputSpec:
    """Validate an output config ``{format, path | table, mode, partition_by, options}``.

    A plain string is a parquet path.

    Raises:
        ColaOutputError: when the config is malformed.
    """
    if isinstance(config, OutputSpec):
        return config
    if isinstance(config, str):
        config = {"path": config}
    if not isinstance(config, Mapping):
        raise ColaOutputError(
            'an output is a path or an object such as {"path": "/data/out", "format": "parquet", '
            f'"mode": "overwrite"}}, got {type(config).__name__}'
        )
    _refuse_unknown_keys(config, _OUTPUT_KEYS, "output", ColaOutputError)
    kinds = [key for key in ("path", "table") if key in config]
    if len(kinds) != 1:
        found = "gives both" if kinds else "has neither"
        raise ColaOutputError(f"an output needs exactly one of 'path' or 'table', but {found}")
    kind = kinds[0]
    target = config[kind]
    if not isinstance(target, str) or not target.strip():
        raise ColaOutputError(f"output '{kind}' must be a non-empty string, got {target!r}")
    if kind == "table":
        try:
            check_table_name(target, "table")
        except ColaRuleError as error:
            raise ColaOutputError(f"output {error.reason}") from error
    mode = config.get("mode", "errorifexists")
    if not isinstance(mode, str) or mode.lower() not in WRITE_MODES:
        raise ColaOutputError(f"output 'mode' must be one of {', '.join(WRITE_MODES)}, got {mode!r}")
    partition_by = config.get("partition_by", [])
    if isinstance(partition_by, str):
        partition_by = [partition_by]
    if not isinstance(partition_by, (list, tuple)) or not all(
        isinstance(column, str) and column.strip() for column in partition_by
    ):
        raise ColaOutputError(f"output 'partition_by' must be a list of column names, got {partition_by!r}")
    default_format = "parquet" if kind == "path" else None
    output_format = config.get("format", default_format)
    return OutputSpec(
        **{kind: target},
        format=None if output_format is None else _parse_format(output_format, ColaOutputError, "output"),
        mode=mode.lower(),
        partition_by=tuple(partition_by),
        options=_parse_options(config.get("options", {}), ColaOutputError, "output"),
    )


def history_spec(store: Mapping[str, Any] | str | OutputSpec) -> OutputSpec:
    """The store as an output spec: a plain path is a parquet folder. A store is only ever
    appended to, so a config's mode may be ``append`` or left out.

    Raises:
        ColaOutputError: a malformed config, a mode other than append, or partitioning.
    """
    if isinstance(store, str):
        store = {"path": store}
    if isinstance(store, Mapping):
        mode = store.get("mode", "append")
        if mode != "append":
            raise ColaOutputError(
                f"a history store is only appended to, but its mode is {mode!r}; "
                "leave 'mode' out or set it to \"append\""
            )
        store = {**store, "mode": "append"}
    spec = parse_output(store)
    if spec.mode != "append":
        raise ColaOutputError(f"a history store is only appended to, but its mode is {spec.mode!r}")
    if spec.partition_by:
        raise ColaOutputError("a history store is not partitioned; leave 'partition_by' out")
    # Not json: read back, it loses the columns that are always NULL and the timestamp type.
    if spec.path is not None and spec.format not in ("parquet", "orc"):
        raise ColaOutputError(
            f"a history store on a path is parquet or orc, not {spec.format!r} (a table may be any format)"
        )
    return spec


def _refuse_unknown_keys(config: Mapping[str, Any], valid: tuple[str, ...], what: str, error: type) -> None:
    unknown = [key for key in config if key not in valid]
    if unknown:
        raise error(f"unknown {what} key {unknown[0]!r}; valid keys are {', '.join(valid)}")


def _parse_format(value: Any, error: type, what: str) -> str:
    if not isinstance(value, str) or value.lower() not in FORMATS:
        raise error(f"unknown {what} format {value!r}; use one of {', '.join(FORMATS)}")
    return value.lower()


def _parse_options(options: Any, error: type, what: str) -> dict[str, str]:
    if not isinstance(options, Mapping):
        raise error(f"{what} 'options' must be an object of option name to value, got {type(options).__name__}")
    parsed = {}
    for key, value in options.items():
        if not isinstance(key, str) or isinstance(value, (Mapping, list, tuple)) or value is None:
            raise error(f"{what} option {key!r} must map a name to a string, number or boolean, got {value!r}")
        # Spark reads option values as strings; a JSON true must reach it as "true", not "True".
        parsed[key] = str(value).lower() if isinstance(value, bool) else str(value)
    return parsed


def _check_read_only_query(query: str) -> None:
    try:
        check_query(query, "query")
    except ColaRuleError as error:
        raise ColaSourceError(f"source {error.reason}") from error


def without_file_scheme(location: str) -> str:
    """``location`` without a leading ``file://`` or ``file:`` (other schemes are kept)."""
    if location.startswith("file://"):
        return location[len("file://"):]
    return location.removeprefix("file:")
