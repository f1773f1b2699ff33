"""The valid/invalid split (quarantine), with the codes of the broken rules beside each row.

Every row-level rule contributes ``(code, predicate)`` pairs, each limited to the rule's
``where`` scope. One projection computes the array of codes a row breaks; ``valid`` is the
rows whose array is empty and ``invalid`` the others, so the two partition the input (no
row is lost or duplicated). Nothing runs until an action is taken on an output.

Rules with ``"severity": "warn"`` never quarantine a row. With ``annotate``, their codes go to
a second column, ``<annotate>_warnings``, on both outputs.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from cola_core.checks.base import BaseCheck
from cola_core.common.columns import is_true, quote, shared_columns
from cola_core.common.formatting import render_code
from cola_core.errors import ColaError, ColaSourceError
from cola_core.plan.planner import prepare_all
from cola_core.plan.preflight import ensure_columns, ensure_conditions, read_inputs

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

__all__ = [
    "ColaSplit", "FlaggedRows", "check_split_options", "checked_split", "codes_column", "flag_rows", "split_block",
]


class ColaSplit(NamedTuple):
    """``valid`` keeps the input's schema exactly (plus the warnings column, when asked for);
    ``invalid`` adds the annotate column."""

    valid: DataFrame
    invalid: DataFrame


def codes_column(df: DataFrame, checks: Sequence[BaseCheck]) -> Column:
    """``array<string>`` of the codes a row breaks, in rule order, each code once."""
    return _codes_of_pairs(_pairs_by_check(df, checks))


def _pairs_by_check(df: DataFrame, checks: Sequence[BaseCheck]) -> list[tuple[BaseCheck, list[tuple[str, Column]]]]:
    """Each row check with its (code, predicate in its scope) pairs, in rule order."""
    return [
        (check, [(code, check.in_scope(predicate)) for code, predicate in check.violations(df)])
        for check in checks
        if check.is_row_level
    ]


def _codes_of_pairs(by_check: list[tuple[BaseCheck, list[tuple[str, Column]]]]) -> Column:
    from pyspark.sql import functions as F

    pairs = [pair for _, check_pairs in by_check for pair in check_pairs]
    if not pairs:
        return F.array().cast("array<string>")
    # A NULL predicate (e.g. a custom check comparing a NULL) never blames a row.
    flagged = F.array_compact(F.array(*[F.when(is_true(predicate), F.lit(code)) for code, predicate in pairs]))
    # Each code once: only rules sharing a declared code can repeat one, so only then is the
    # (per-row hash set of) array_distinct needed.
    codes = [code for code, _ in pairs]
    return F.array_distinct(flagged) if len(set(codes)) < len(codes) else flagged


def _refuse_repeated_columns(df: DataFrame) -> None:
    """A split writes every row with the input's columns and selects them by name: a name two
    columns share (a join that kept both ``id`` columns) is ambiguous to Spark, and no file
    format writes it. ``run`` measures such a DataFrame (its rules name other columns)."""
    names = list(df.columns)
    case_sensitive = str(df.sparkSession.conf.get("spark.sql.caseSensitive", "false")).lower() == "true"
    seen: dict[str, str] = {}
    repeated: list[str] = []
    for name in names:
        key = name if case_sensitive else name.lower()
        if key in seen and seen[key] not in repeated:
            repeated.append(seen[key])
        seen.setdefault(key, name)
    if repeated:
        listed = ", ".join(repr(name) for name in repeated)
        raise ColaSourceError(
            f"the DataFrame has more than one column named {listed} (its columns: {', '.join(names)}); a split "
            "keeps every column of every row, so each must have its own name: rename or drop the repeated ones "
            "(df.toDF(*names) or a select) before splitting"
        )


def check_split_options(
    df: DataFrame, annotate: str | None, quarantine_key: Sequence[str] | None, with_warnings: bool
) -> None:
    """Refuse a DataFrame whose column names repeat, an ``annotate`` column that exists (or its
    warnings column, when there are warning rules), or a ``quarantine_key`` that is not a list
    of ``df``'s columns.

    Raises:
        ColaSourceError: columns with the same name (as Spark compares names: case aside,
            unless ``spark.sql.caseSensitive``).
        ColaError: naming the option and what is wrong.
    """
    _refuse_repeated_columns(df)
    existing = {c.lower() for c in df.columns}
    if annotate is not None:
        if not isinstance(annotate, str) or not annotate.strip():
            raise ColaError(f"annotate must be a column name, got {annotate!r}")
        added = (annotate, f"{annotate}_warnings") if with_warnings else (annotate,)
        for name in added:
            if name.lower() in existing:
                raise ColaError(f"annotate column {name!r} already exists in the DataFrame; choose another name")
    if quarantine_key is not None:
        if isinstance(quarantine_key, str) or not quarantine_key or not all(
            isinstance(c, str) and c for c in quarantine_key
        ):
            raise ColaError(f"quarantine_key must be a non-empty list of column names, got {quarantine_key!r}")
        missing = [c for c in quarantine_key if c.lower() not in existing]
        if missing:
            raise ColaError(
                f"quarantine_key column {missing[0]!r} does not exist; the DataFrame has {', '.join(df.columns)}"
            )


def _spread_over_key(codes: Column, key: Sequence[str], code: str) -> Column:
    """Quarantine, under ``code``, every otherwise-valid row that shares a key with a rejected row."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    complete_key = F.lit(True)
    for column in key:
        complete_key = complete_key & F.col(quote(column)).isNotNull()
    # A key with a NULL in it names no entity, so such rows are never pulled in.
    key_rejected = F.max(F.when(complete_key, F.size(codes) > 0)).over(Window.partitionBy(*[quote(c) for c in key]))
    pulled_in = (F.size(codes) == 0) & is_true(key_rejected)
    return F.when(pulled_in, F.array(F.lit(code))).otherwise(codes)


class FlaggedRows(NamedTuple):
    """The input's rows with the codes they break, before they are told apart.

    Attributes:
        rows: the input's columns, then ``codes`` and, when asked for, ``warnings``.
        columns: the input's column names.
        codes: the name of the ``array<string>`` column of blocking codes (empty: valid).
        warnings: the name of the column of warning codes, or ``None``.
        codes_of_checks: each blocking row check with the codes of its (code, predicate)
            pairs, in the order of its ``violations``.
        spread_code: the code ``quarantine_key`` puts on the rows it pulls in, or ``None``.
    """

    rows: DataFrame
    columns: list[str]
    codes: str
    warnings: str | None
    codes_of_checks: tuple[tuple[BaseCheck, tuple[str, ...]], ...] = ()
    spread_code: str | None = None

    @property
    def possible_codes(self) -> tuple[str, ...]:
        """Every code the codes column can hold, each once, in rule order: the blocking rules'
        (one per column for a multi-column ``not_null``), then ``spread_code``."""
        codes = (code for _, check_codes in self.codes_of_checks for code in check_codes)
        return tuple(dict.fromkeys((*codes, *([self.spread_code] if self.spread_code else []))))

    def valid_columns(self, annotate: str | None) -> list[Column]:
        """The valid side's columns: the input's, then ``<annotate>_warnings``."""
        from pyspark.sql import functions as F

        warnings = [F.col(self.warnings).alias(f"{annotate}_warnings")] if self.warnings else []
        return [*(F.col(quote(name)) for name in self.columns), *warnings]

    def invalid_columns(self, annotate: str | None) -> list[Column]:
        """The invalid side's columns: the input's, then ``<annotate>``, then its warnings."""
        from pyspark.sql import functions as F

        codes = [F.col(self.codes).alias(annotate)] if annotate else []
        warnings = [F.col(self.warnings).alias(f"{annotate}_warnings")] if self.warnings else []
        return [*(F.col(quote(name)) for name in self.columns), *codes, *warnings]


def checked_split(
    df: DataFrame, checks: Sequence[BaseCheck], annotate: str | None, quarantine_key: Sequence[str] | None
) -> list[BaseCheck]:
    """The row-level checks of ``checks``, refused before any job if the split cannot run.

    Raises:
        ColaError: a bad ``annotate`` or ``quarantine_key``.
        ColaRuleError: a rule Spark cannot evaluate on ``df``.
    """
    row_checks = [check for check in checks if check.is_row_level]
    check_split_options(df, annotate, quarantine_key, any(check.severity_level == "warn" for check in row_checks))
    ensure_columns(df, row_checks)
    ensure_conditions(df, row_checks)
    return read_inputs(df, row_checks)


def flag_rows(
    df: DataFrame,
    prepared: DataFrame,
    row_checks: Sequence[BaseCheck],
    annotate: str | None = None,
    quarantine_key: Sequence[str] | None = None,
    riders: Sequence[Column] = (),
) -> FlaggedRows:
    """Every row of ``df`` with the codes of the rules it breaks (one projection of ``prepared``).

    Args:
        prepared: ``df`` with the helper columns of the checks (``prepare_all``).
        row_checks: bound row-level checks (:func:`checked_split`).
        riders: named columns computed in the same projection and kept after the codes: a
            window over the same columns as a rule's (``split_write``'s key shares) then
            shares that rule's Window operator.
    """
    from pyspark.sql import functions as F

    blocking = [check for check in row_checks if check.severity_level != "warn"]
    warning = [check for check in row_checks if check.severity_level == "warn"]
    columns = [F.col(quote(name)) for name in df.columns]
    # Fresh names for the helper columns, so that no column of the data can collide with them.
    fresh = uuid.uuid4().hex
    codes_name, warnings_name = f"__cola_codes_{fresh}", f"__cola_warnings_{fresh}"
    with shared_columns():
        by_check = _pairs_by_check(prepared, blocking)
        codes = _codes_of_pairs(by_check)
        extra = [codes_column(prepared, warning).alias(warnings_name)] if warning and annotate else []
    flagged = prepared.select(*columns, codes.alias(codes_name), *extra, *riders)
    spread_code = None
    if quarantine_key:
        spread_code = render_code("quarantine_key", *quarantine_key)
        keep_warnings = [F.col(warnings_name)] if extra else []
        kept_riders = [F.col(name) for name in flagged.columns[len(columns) + 1 + len(extra):]]
        spread = _spread_over_key(F.col(codes_name), quarantine_key, spread_code).alias(codes_name)
        flagged = flagged.select(*columns, spread, *keep_warnings, *kept_riders)
    codes_of_checks = tuple((check, tuple(code for code, _ in check_pairs)) for check, check_pairs in by_check)
    return FlaggedRows(flagged, list(df.columns), codes_name, warnings_name if extra else None, codes_of_checks,
                       spread_code)


def split_block(
    df: DataFrame,
    checks: Sequence[BaseCheck],
    annotate: str | None = None,
    quarantine_key: Sequence[str] | None = None,
) -> ColaSplit:
    """Partition ``df`` by the row-level checks in ``checks``; aggregate checks are ignored.

    One job evaluates the input and every row's codes once, and keeps them (Spark's
    ``localCheckpoint``, in the executors' memory and disk): ``valid`` and ``invalid`` both
    read that, so they partition the input whatever it is. ``split_write`` writes the two
    outputs from one evaluation without keeping it.

    Args:
        annotate: name of the ``array<string>`` column of codes added to ``invalid``.
        quarantine_key: columns naming an entity (``["order_id"]``): every row sharing a key
            with a rejected row is rejected too, with the code ``quarantine_key(order_id)``.
    """
    from pyspark.sql import functions as F

    row_checks = checked_split(df, checks, annotate, quarantine_key)
    # Helper columns that checks add (reference lookups) are used here and dropped by flag_rows.
    flagged = flag_rows(df, prepare_all(df, row_checks), row_checks, annotate, quarantine_key)
    # Pinned: both outputs are read from one evaluation of the rows and their codes. Were each
    # computed from the input again, an input that is not the same twice (rand() or a
    # nondeterministic UDF in its plan, a source written to between the reads) or a rule on
    # the time (current_timestamp() is taken once per query) could put a row in both outputs,
    # or in neither.
    rows = flagged.rows.localCheckpoint(eager=True)
    valid = rows.where(F.size(flagged.codes) == 0).select(*flagged.valid_columns(annotate))
    invalid = rows.where(F.size(flagged.codes) > 0).select(*flagged.invalid_columns(annotate))
    return ColaSplit(valid, invalid)
