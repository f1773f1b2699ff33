"""The checks made before a block starts any job: refuse what Spark cannot run, bind references.

A rule that names a column the DataFrame lacks, or a ``where``/``expression`` Spark cannot
evaluate row by row (not boolean, nondeterministic, an aggregate or a window), or whose own
SQL does not analyse, is a rule error here, raised from the schema and Spark's analyser
alone, before the planner's scan: never a failed job half-way through a block. The checks
are then bound to what they refer to besides the data (a ``foreign_key``'s reference), read
lazily here so that checks never read storage.

This is apart from :mod:`cola_core.plan.planner` because it starts no Spark job and is not
the planner's alone: the splits (``split``, ``staged_split``) make the same checks before
their own actions, and ``samples`` binds references the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from cola_core.checks.base import BaseCheck
from cola_core.common.columns import column_of
from cola_core.common.spark_errors import analyse_now, first_line, is_unreachable
from cola_core.errors import ColaRuleError, ColaSourceError
from cola_core.guards.sqlguard import spark_expression_problem, without_comments
from cola_core.storage.readwrite import read_source

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["checked_block", "ensure_columns", "ensure_conditions", "read_inputs"]


def checked_block(df: DataFrame, checks: Sequence[BaseCheck]) -> list[BaseCheck]:
    """The checks, refused if Spark cannot run them on ``df`` (no job), bound to their references.

    Raises:
        ColaRuleError: a rule names a missing column, or a condition Spark cannot evaluate.
        ColaSourceError: a rule's reference cannot be read.
    """
    ensure_columns(df, checks)
    ensure_conditions(df, checks)
    return read_inputs(df, checks)


def ensure_columns(df: DataFrame, checks: Sequence[BaseCheck]) -> None:
    """Refuse a rule that names a column the DataFrame lacks (reads the schema, no job).

    A name that is no top-level column is a nested path (``address.city``): Spark resolves
    it here, so a field that does not exist, or a path into a column that is no struct, is a
    rule error rather than a failed job.
    """
    available = {name.lower() for name in df.columns}
    for check in checks:
        for column in check.columns_used(df):
            top_level = column.split(".", 1)[0]
            problem: str | None
            if column.lower() not in available and "*" in column:
                # Spark reads address.* (or a.*.b) as every field of a struct: a rule names one.
                problem = (
                    f"column {column!r} is a star path, not the name of a column or of one nested field; "
                    "name each column (for several, list them in 'columns' or use 'targets')"
                )
            elif column.lower() not in available and top_level.lower() not in available:
                problem = f"column {column!r} does not exist; the DataFrame has {', '.join(df.columns)}"
            elif column.lower() not in available:
                problem = _nested_problem(df, column)
            else:
                continue
            if problem is not None:
                raise check.rule_error(problem)


def _nested_problem(df: DataFrame, path: str) -> str | None:
    from pyspark.errors import PySparkException

    try:
        df.select(column_of(df, path)).schema
    except PySparkException as error:
        if is_unreachable(error):
            raise
        return f"column {path!r} cannot be read as a nested field: {first_line(error)}"
    return None


def ensure_conditions(df: DataFrame, checks: Sequence[BaseCheck]) -> None:
    """Have Spark analyse every ``where`` and ``expression``, and every rule's own SQL
    (``BaseCheck.analyse``), with no job, so that a rule Spark cannot run is a rule error
    before the scan, not a failed job.

    A condition must be boolean, deterministic and free of aggregates and windows: it decides
    row by row, and the scan and the split must reach the same decision for a row. All of a
    block's conditions are analysed together; only when that finds a problem are they
    analysed one by one, to name the rule and say what is wrong.
    """
    # Each condition alone first: inside the block's one expression, text such as
    # "a > 0) OR (b < 0" would pair up with the parentheses around it (the guard refuses that
    # shape before Spark; Spark's own parser has the last word where a JVM is at hand).
    for check in checks:
        for condition in check.conditions():
            problem = spark_expression_problem(df.sparkSession, condition)
            if problem is not None:
                raise check.rule_error(f"Spark cannot evaluate {condition!r} on this DataFrame: {problem}")
    conditions = list(dict.fromkeys(condition for check in checks for condition in check.conditions()))
    together = len(conditions) > 1 and _conditions_hold(df, conditions)
    for check in checks:
        try:
            if not together:
                for condition in check.conditions():
                    _ensure_condition(df, condition)
            check.analyse(df)
        except ColaRuleError as error:
            raise error.located(position=check.position, rule_type=check.rule_type, target=check.target) from None


def _conditions_hold(df: DataFrame, conditions: Sequence[str]) -> bool:
    """Whether every condition is boolean, row by row and deterministic, asked of Spark at once."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType, StructType

    # Each condition's code alone, its comments dropped, in parentheses of its own: the guard
    # has refused a condition whose parentheses do not pair up, so none can reach into another
    # (the rule parser has refused ';' and anything but one expression).
    codes = [without_comments(condition) for condition in conditions]
    fields = ", ".join(f"'c{number}', ({code})" for number, code in enumerate(codes))
    try:
        struct = df.select(F.expr(f"named_struct({fields})")).schema.fields[0].dataType
        if not (isinstance(struct, StructType) and all(isinstance(f.dataType, BooleanType) for f in struct.fields)):
            return False
        every = " AND ".join(f"({code})" for code in codes)
        filtered = df.where(F.expr(every))
        analyse_now(filtered)  # Spark Connect would only refuse an aggregate in a WHERE when it runs
        return _deterministic(filtered)
    except Exception:  # any problem: the one-by-one analysis finds it and names the rule
        return False


def _ensure_condition(df: DataFrame, condition: str) -> None:
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType

    try:
        data_type = df.select(F.expr(condition).alias("condition")).schema.fields[0].dataType
        # Spark refuses aggregates and window functions in a WHERE, without running a job.
        filtered = df.where(F.expr(condition)) if isinstance(data_type, BooleanType) else None
        if filtered is not None:
            analyse_now(filtered)  # classic mode refuses at where(); Spark Connect only when asked
    except Exception as error:  # pyspark's errors, or a bare JVM error (a stack overflow) while analysing
        if is_unreachable(error):
            raise
        raise ColaRuleError(f"Spark cannot evaluate {condition!r} on this DataFrame: {first_line(error)}") from error
    if filtered is None:
        raise ColaRuleError(
            f"{condition!r} is of type {data_type.simpleString()}, not boolean; "
            "write a condition such as \"amount > 0\""
        )
    if not _deterministic(filtered):
        raise ColaRuleError(
            f"{condition!r} is not deterministic (it may call a nondeterministic function); "
            "a condition must decide the same way for a row every time"
        )


def _deterministic(filtered: DataFrame) -> bool:
    """Whether the analysed filter condition is deterministic, as Spark itself judges it.

    This reaches the JVM's plan, which only a classic session has; over Spark Connect the
    parser's check of the names in :data:`cola_core.guards.sqlguard.NONDETERMINISTIC_FUNCTIONS`
    stands alone.
    """
    jdf = getattr(filtered, "_jdf", None)
    if jdf is None:
        return True
    try:
        plan = jdf.queryExecution().analyzed()
        if plan.getClass().getSimpleName() != "Filter":
            return True
        return bool(plan.condition().deterministic())
    except Exception:  # a plan of another shape: the name list already had its say
        return True


def read_inputs(df: DataFrame, checks: Sequence[BaseCheck]) -> list[BaseCheck]:
    """The checks, each bound to the sources it refers to (``BaseCheck.references``), read
    in ``df``'s session. Reading is lazy: a parquet or json source reads only its schema.

    Raises:
        ColaSourceError: when a reference cannot be read; the message names the rule.
    """
    bound = []
    for check in checks:
        if check.is_bound:
            bound.append(check)
            continue
        inputs = {}
        for name, source in check.references().items():
            try:
                inputs[name] = read_source(df.sparkSession, source)
            except ColaSourceError as error:
                raise ColaSourceError(f"{check.rule_error('').location}: cannot read the {name}: {error}") from error
        bound.append(check.with_inputs(inputs))
    return bound
