"""Profiling a table: every column's statistics in one planned scan (``Cola().profile``).

The jobs, whatever the width:

1. **The scan**: every column's counts, bounds, moments, lengths, format matches and a
   HyperLogLog distinct estimate, as aggregates (SQL text) of one aggregation, split into jobs
   of alike size exactly as a wide rule block is (``planner.rows_in_jobs``);
2. **the small columns**, only when some column has at most ``TOP_VALUES_UP_TO`` distinct
   values by that estimate: one job groups all of them at once and counts each value;
3. **one job per possible key**: a column whose estimate is within the estimate's error of its
   present values (and that holds whole numbers, text, dates or timestamps) has its distinct
   values counted exactly, so that ``unique`` is suggested only for a true key.

What each statistic means is in ``cola_core.language.profiles``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from cola_core.checks.conditions import NAMED_FORMATS, format_match_text, type_family
from cola_core.common.columns import top_level_name
from cola_core.common.formatting import cut_text
from cola_core.errors import ColaError
from cola_core.language.profiles import TOP_VALUE_CHARS, TOP_VALUES_UP_TO, ColumnProfile, Profile
from cola_core.plan.planner import count_distinct_rows, rows_in_jobs
from cola_core.storage.session import load_sketches_quietly

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import DataType, StructField

__all__ = ["DISTINCT_ERROR", "checked_sample", "profile_table"]

# The distinct counts are estimated by a HyperLogLog sketch of 2**SKETCH_LG_K buckets (Spark's
# hll_sketch_agg, from Apache DataSketches): a relative standard error of 1.04 / sqrt(2**14),
# about 0.8%, stated as DISTINCT_ERROR, for 16 KB of state per column and task. Not
# approx_count_distinct: at that precision its state is some 1,600 fields of the aggregation's
# row, and every such column costs a second of planning whatever the rows (measured: 10 of
# them, 10 s on 10 rows; the sketches, 0.3 s).
SKETCH_LG_K = 14
DISTINCT_ERROR = 0.01
# A seed, so that the same data sampled twice gives the same profile.
SAMPLE_SEED = 20240101

_KINDS = {"numeric": "number", "float": "number", "string": "text", "date": "date", "timestamp": "timestamp",
          "boolean": "boolean"}


def profile_table(
    df: DataFrame, columns: Sequence[str] | None = None, sample: float | None = None,
    aggregates_per_job: int | None = None,
) -> Profile:
    """The :class:`Profile` of ``df`` (of ``columns`` only, when given; of a ``sample``
    fraction of its rows, when given). Raises ``ColaError`` for an unknown column or a sample
    that is no fraction, before any Spark work."""
    fields = _fields(df, columns)
    sample = checked_sample(sample)
    if sample is not None:
        df = df.sample(fraction=sample, seed=SAMPLE_SEED)
    # Every column renamed to its position (one call), so that each aggregate is SQL text over
    # a plain name whatever the column is called: a 1,000-column profile is some 12,000
    # aggregates, and as Columns they cost a minute of Py4J calls before Spark sees the plan.
    plain = df.toDF(*(f"c{position}" for position in range(len(df.columns))))
    plans = [_ColumnPlan(f"c{position}", field) for position, field in fields]
    aggregates = ["count(1)"]
    for plan in plans:
        plan.first = len(aggregates)
        aggregates.extend(plan.aggregates)
    load_sketches_quietly(df.sparkSession)
    row = rows_in_jobs(plain, aggregates, aggregates_per_job)
    rows = int(row[0])
    measured = [plan.read(rows, row[plan.first : plan.first + len(plan.aggregates)]) for plan in plans]
    small = [n for n, m in enumerate(measured) if m.get("distinct") is not None and m["distinct"] <= TOP_VALUES_UP_TO]
    counted = [_normalised(plans[n].sql, plans[n].field.dataType) for n in small]
    for n, values in zip(small, _value_counts(plain, counted), strict=True):
        shown = tuple((cut_text(value, TOP_VALUE_CHARS), count) for value, count in values)
        measured[n].update(top_values=shown, top_values_cut=shown != values, distinct=len(values),
                                  distinct_exact=True)
    for n, m in enumerate(measured):
        if _maybe_a_key(plans[n], m, rows):
            distinct = count_distinct_rows(plain, [plans[n].sql]) - (1 if m["nulls"] else 0)
            m.update(distinct=distinct, distinct_exact=True)
    profiles = tuple(ColumnProfile(name=p.field.name, type=p.field.dataType.simpleString(), kind=p.kind, rows=rows, **m)
                     for p, m in zip(plans, measured, strict=True))
    return Profile(rows, profiles, sample, DISTINCT_ERROR)


def checked_sample(sample: Any) -> float | None:
    """``sample`` as a float when it is a fraction of the rows above 0 and at most 1 (or None);
    raises ``ColaError`` otherwise. Pure Python: callers check it before any Spark work."""
    if sample is None:
        return None
    if isinstance(sample, bool) or not isinstance(sample, (int, float)) or not 0 < sample <= 1:
        raise ColaError(f"sample must be a fraction of the rows above 0 and at most 1, got {sample!r}")
    return float(sample)


def _fields(df: DataFrame, columns: Sequence[str] | None) -> list[tuple[int, StructField]]:
    """The profiled columns, each with its position in ``df``."""
    fields = list(enumerate(df.schema.fields))
    if columns is None:
        return fields
    if isinstance(columns, str) or not all(isinstance(name, str) for name in columns):
        raise ColaError(f"columns must be a list of column names, got {columns!r}")
    by_name = {field.name: (position, field) for position, field in fields}
    # A name finds its column as a rule's does (columns.column_of): exactly, else ignoring case.
    found = {name: top_level_name(list(by_name), name) for name in columns}
    unknown = [name for name, top in found.items() if top is None]
    if unknown:
        raise ColaError(f"no column {', '.join(map(repr, unknown))} in the DataFrame; its columns are "
                        f"{', '.join(by_name)}")
    for name, top in found.items():
        # Spark resolves a name ignoring case: beside another 'a' (or 'A'), a rule naming it fails.
        same = [field.name for _, field in fields if top is not None and field.name.lower() == top.lower()]
        if len(same) > 1:
            raise ColaError(f"{len(same)} columns of the DataFrame are named {', '.join(map(repr, same))}: a rule "
                            f"naming {name!r} could not tell them apart; rename them apart (DataFrame.toDF) first")
    return [by_name[top] for top in dict.fromkeys(top for top in found.values() if top is not None)]


class _ColumnPlan:
    """One column's aggregates in the scan, as SQL text over its plain name ``sql``, and how
    to read their values back."""

    def __init__(self, sql: str, field: StructField) -> None:
        from pyspark.sql import types as T

        self.sql, self.field, self.first = sql, field, 0
        family = type_family(field.dataType)
        self.kind = _KINDS.get(family, "skipped")
        self.skipped: str | None = None
        self.names: list[str] = []
        self.aggregates: list[str] = []

        def add(name: str, aggregate: str) -> None:
            self.names.append(name)
            self.aggregates.append(aggregate)

        if isinstance(field.dataType, (T.MapType, T.ArrayType)):
            self.kind = "collection"
        elif self.kind == "skipped":
            kind = field.dataType.typeName()
            self.skipped = f"a {kind} column has no statistics a rule could check; profile its fields"
        if self.skipped is None:
            add("present", f"count({sql})")
        if self.kind in ("number", "date", "timestamp", "text", "boolean"):
            add("distinct", f"hll_sketch_estimate(hll_sketch_agg({_sketched(sql, field.dataType)}, {SKETCH_LG_K}))")
        value = sql
        if family == "float":
            infinite = f"{sql} IN (double('inf'), double('-inf'))"
            add("nan", f"count(CASE WHEN isnan({sql}) THEN 1 END)")
            add("infinite", f"count(CASE WHEN {infinite} THEN 1 END)")
            value = f"CASE WHEN NOT isnan({sql}) AND NOT {infinite} THEN {sql} END"
        if self.kind in ("number", "date", "timestamp"):
            # Dates as days and timestamps as microseconds since the epoch, to average them;
            # a timestamp's bounds too, read back in Python (_instant): pyspark's own reading
            # of 0001-01-01 fails ("year 0") wherever the process's zone is east of UTC's.
            number = {"date": f"unix_date({value})", "timestamp": _micros(value, field.dataType)}.get(self.kind, value)
            add("minimum", f"min({number if self.kind == 'timestamp' else value})")
            add("maximum", f"max({number if self.kind == 'timestamp' else value})")
            # A decimal's exact average is a decimal of 4 more digits, which overflows under
            # ANSI (decimal(38,0) of 38 digits): a mean needs no more than a double's precision.
            averaged = f"CAST({number} AS DOUBLE)" if isinstance(field.dataType, T.DecimalType) else number
            add("mean", f"avg({averaged})")
            add("stddev", f"stddev_samp({number})")
        if self.kind == "text":
            add("min_length", f"min(length({sql}))")
            add("max_length", f"max(length({sql}))")
            for name in NAMED_FORMATS:
                # What an invalid_count rule with this valid_format accepts.
                add(f"format:{name}", f"count(CASE WHEN {format_match_text(sql, name)} THEN 1 END)")

    def read(self, rows: int, values: Sequence[Any]) -> dict[str, Any]:
        from pyspark.sql import types as T

        got = dict(zip(self.names, values, strict=True))
        measured: dict[str, Any] = {}
        if self.skipped is not None:
            return {"skipped": self.skipped}
        measured["nulls"] = rows - int(got["present"])
        if "distinct" in got:
            measured["distinct"] = int(got["distinct"])
        for key in ("nan", "infinite", "minimum", "maximum", "min_length", "max_length"):
            if key in got:
                measured[key] = got[key]
        if self.kind == "timestamp":
            local = not isinstance(self.field.dataType, T.TimestampNTZType)
            measured["minimum"], measured["maximum"] = (_instant(got[key], local) for key in ("minimum", "maximum"))
        if "mean" in got:
            measured["mean"], measured["stddev"] = _moments(self.kind, got["mean"], got["stddev"])
            if self.kind == "timestamp" and measured["mean"] is not None:
                measured["mean"] = _instant(round(float(got["mean"])), local)
        formats = {key.split(":", 1)[1]: int(value) for key, value in got.items() if key.startswith("format:")}
        if formats:
            measured["formats"] = {name: count for name, count in formats.items() if count}
        return measured


def _micros(sql: str, data_type: DataType) -> str:
    """A timestamp as microseconds since the epoch: an instant's (``unix_micros``), or a
    ``timestamp_ntz``'s wall clock from 1970-01-01 00:00, which ``unix_micros`` refuses."""
    from pyspark.sql import types as T

    if isinstance(data_type, T.TimestampNTZType):
        return f"timestampdiff(MICROSECOND, TIMESTAMP_NTZ'1970-01-01 00:00:00', {sql})"
    return f"unix_micros({sql})"


def _instant(micros: Any, local: bool) -> dt.datetime | None:
    """Microseconds since the epoch as pyspark shows a timestamp: this process's local time
    for an instant (``local``), the wall clock for a ``timestamp_ntz``. At the calendar's
    ends, where the local time has no year (0001-01-01 east of UTC), the UTC time."""
    if micros is None:
        return None
    micros = int(micros)
    if local:
        try:
            return dt.datetime.fromtimestamp(micros // 1_000_000).replace(microsecond=micros % 1_000_000)
        except (ValueError, OverflowError, OSError):
            pass
    return dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=micros)


def _normalised(sql: str, data_type: DataType) -> str:
    """A float column's values as ``unique`` and a grouping compare them: -0.0 is 0.0 (as
    text it is '-0.0', which would count a value twice)."""
    from pyspark.sql import types as T

    if isinstance(data_type, (T.FloatType, T.DoubleType)):
        return f"CASE WHEN {sql} = 0 THEN abs({sql}) ELSE {sql} END"
    return sql


def _sketched(sql: str, data_type: DataType) -> str:
    """What the distinct sketch of a column counts: whole numbers, dates and timestamps as
    themselves (a sketch takes ints and bigints), anything else as its 64-bit hash, which
    two distinct values share with odds far below the estimate's error. Never text itself: a
    sketch skips the empty string, which is a value."""
    from pyspark.sql import types as T

    if isinstance(data_type, (T.ByteType, T.ShortType, T.BooleanType)):
        return f"CAST({sql} AS INT)"
    if isinstance(data_type, (T.IntegerType, T.LongType)):
        return sql
    if isinstance(data_type, T.DateType):
        return f"unix_date({sql})"
    if isinstance(data_type, T.TimestampType):
        return f"unix_micros({sql})"
    # xxhash64 of NULL is its seed, not NULL: the sketch must not count NULL as a value.
    return f"CASE WHEN {sql} IS NOT NULL THEN xxhash64({_normalised(sql, data_type)}) END"


def _moments(kind: str, mean: Any, stddev: Any) -> tuple[Any, float | None]:
    """The mean and standard deviation in the column's own terms (see the module docstring)."""
    if mean is None:
        return None, None
    spread = None if stddev is None else float(stddev)
    if kind == "date":
        return dt.date(1970, 1, 1) + dt.timedelta(days=round(float(mean))), spread
    if kind == "timestamp":  # the mean itself is read by _instant
        return mean, None if spread is None else spread / 1_000_000
    return mean, spread


def _maybe_a_key(plan: _ColumnPlan, measured: dict[str, Any], rows: int) -> bool:
    """Whether the column's estimate leaves it possibly a key: every present value distinct."""
    from pyspark.sql import types as T

    if measured.get("distinct_exact") or measured.get("distinct") is None:
        return False
    keyish = (T.IntegralType, T.StringType, T.DateType, T.TimestampType, T.TimestampNTZType)
    present = rows - measured["nulls"]
    return isinstance(plan.field.dataType, keyish) and 0 < present <= measured["distinct"] / (1 - 3 * DISTINCT_ERROR)


def _value_counts(df: DataFrame, names: Sequence[str]) -> list[tuple[tuple[str, int], ...]]:
    """Each listed column's present values (as text) and their counts, most frequent first
    (ties by value), in one job for all of them. ``names`` are SQL over plain names (``c12``)."""
    if not names:
        return []
    pairs = ", ".join(f"struct({n} AS n, CAST({name} AS STRING) AS v)" for n, name in enumerate(names))
    counted = df.selectExpr(f"inline(array({pairs}))").where("v IS NOT NULL").groupBy("n", "v").count()
    values: list[list[tuple[str, int]]] = [[] for _ in names]
    for row in counted.collect():
        values[int(row["n"])].append((row["v"], int(row["count"])))
    return [tuple(sorted(column, key=lambda pair: (-pair[1], pair[0]))) for column in values]
