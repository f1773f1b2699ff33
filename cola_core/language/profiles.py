"""A table's profile: what one planned scan measured of each column (``Cola().profile``).

These are plain frozen values, made by ``cola_core.plan.profiling`` and read by people (``str``),
by programs (``to_dict``, strict JSON) and by rule suggestion. Nothing here touches Spark.

What each statistic means, and when it is missing:

- ``rows``: the rows profiled (of the sample, when one was asked for);
- ``nulls``: NULL values; a float column's NaN and infinities are values, counted apart in
  ``nan`` and ``infinite``, and left out of ``minimum``, ``maximum``, ``mean`` and ``stddev``;
- ``distinct``: distinct present values (NULL is not one). Exact when ``distinct_exact``: for a
  column of at most ``TOP_VALUES_UP_TO`` distinct values, and for a column that could be a key
  (every present value distinct), which are counted exactly; otherwise a HyperLogLog sketch's
  estimate, within ``Profile.distinct_error`` (its relative standard error, stated as a bound);
- ``minimum``, ``maximum``, ``mean``, ``stddev``: of numbers, dates and timestamps (the mean of
  dates is a date, of timestamps a timestamp; their ``stddev`` is in days and in seconds);
- ``min_length``, ``max_length``: of text, in characters;
- ``formats``: for text, how many present values each named ``valid_format`` accepts, exactly
  as an ``invalid_count`` rule with that format would judge them (only formats with a match);
- ``top_values``: for a column of at most ``TOP_VALUES_UP_TO`` distinct values, each value (as
  text) with its count, the most frequent first (ties by value); a value longer than
  ``TOP_VALUE_CHARS`` is shown cut (``common.formatting.cut_text``), and ``top_values_cut``
  says so;
- ``skipped``: why a column was not measured (a struct or binary column); map and array
  columns get counts only (``rows``, ``nulls``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from cola_core.common.formatting import format_value, json_safe, one_line

__all__ = ["TOP_VALUES_UP_TO", "TOP_VALUE_CHARS", "ColumnProfile", "Profile"]

# A column of at most this many distinct values is counted value by value (its top values,
# and an exact distinct count), in one job for all such columns.
TOP_VALUES_UP_TO = 20
# A top value is shown in at most this many characters: a profile stays small enough for an
# XCom and a terminal, whatever the column holds.
TOP_VALUE_CHARS = 200


@dataclass(frozen=True)
class ColumnProfile:
    """One column's statistics (the module docstring says what each means)."""

    name: str
    type: str
    kind: str  # number, date, timestamp, text, boolean, collection, skipped
    rows: int
    nulls: int | None = None
    distinct: int | None = None
    distinct_exact: bool = False
    minimum: Any = None
    maximum: Any = None
    mean: Any = None
    stddev: float | None = None
    nan: int | None = None
    infinite: int | None = None
    min_length: int | None = None
    max_length: int | None = None
    formats: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    top_values: tuple[tuple[str, int], ...] | None = None
    top_values_cut: bool = False
    skipped: str | None = None

    def __post_init__(self) -> None:
        # Frozen all the way down: the format counts cannot be changed through the mapping either.
        object.__setattr__(self, "formats", MappingProxyType(dict(self.formats)))

    @property
    def present(self) -> int | None:
        """Values that are not NULL."""
        return None if self.nulls is None else self.rows - self.nulls

    @property
    def null_percent(self) -> float | None:
        if self.nulls is None:
            return None
        return 0.0 if self.rows == 0 else 100.0 * self.nulls / self.rows

    def to_dict(self) -> dict[str, Any]:
        """Every statistic, as strict JSON carries it (``common.formatting.json_safe``)."""
        data: dict[str, Any] = {
            "name": self.name, "type": self.type, "kind": self.kind, "rows": self.rows,
            "nulls": self.nulls, "null_percent": self.null_percent, "distinct": self.distinct,
            "distinct_exact": self.distinct_exact, "minimum": self.minimum, "maximum": self.maximum,
            "mean": self.mean, "stddev": self.stddev, "nan": self.nan, "infinite": self.infinite,
            "min_length": self.min_length, "max_length": self.max_length, "formats": dict(self.formats),
            "top_values": None if self.top_values is None else [list(pair) for pair in self.top_values],
            "top_values_cut": self.top_values_cut,
            "skipped": self.skipped,
        }
        safe = json_safe(data)
        assert isinstance(safe, dict)
        return safe


@dataclass(frozen=True)
class Profile:
    """A table's profile: its rows and one :class:`ColumnProfile` per column, in order.

    Attributes:
        sample: the fraction of rows profiled when a sample was asked for, else None.
        distinct_error: the relative standard deviation of an estimated distinct count.
    """

    rows: int
    columns: tuple[ColumnProfile, ...]
    sample: float | None = None
    distinct_error: float = 0.0

    def column(self, name: str) -> ColumnProfile:
        for column in self.columns:
            if column.name == name:
                return column
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows, "sample": self.sample, "distinct_error": self.distinct_error,
            "columns": [column.to_dict() for column in self.columns],
        }

    def __str__(self) -> str:
        header = ("column", "type", "nulls", "distinct", "min", "max", "mean", "top values / formats")
        lines = [tuple(header)]
        for c in self.columns:
            if c.skipped is not None:
                lines.append((c.name, c.type, "", "", "", "", "", f"skipped: {c.skipped}"))
                continue
            nulls = "" if c.nulls is None else f"{c.nulls} ({format_value(round(c.null_percent or 0.0, 2))}%)"
            distinct = "" if c.distinct is None else ("" if c.distinct_exact else "~") + str(c.distinct)
            if c.top_values:
                extra = ", ".join(f"{value}: {count}" for value, count in c.top_values[:5])
                extra += ", ..." if len(c.top_values) > 5 else ""
            else:
                extra = ", ".join(f"{name} {count}" for name, count in c.formats.items())
            lines.append((
                c.name, c.type, nulls, distinct, _shown(c.minimum), _shown(c.maximum), _shown(c.mean), extra,
            ))
        # One line per column, as the results table keeps a message on one line: whitespace
        # in a name or a value (a newline, a tab) is shown as one space, and any other
        # character that would break the line or act on a terminal (ESC) as its escape.
        lines = [tuple(one_line(" ".join(cell.split())) for cell in line) for line in lines]
        widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
        title = f"Profile of {self.rows} rows" + ("" if self.sample is None else f" (a {self.sample} sample)")
        table = [
            "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip() for line in lines
        ]
        return "\n".join([title, *table])


def _shown(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return format_value(round(value, 4))
    return format_value(value)
