"""``BaseCheck``: what a check's author writes, built-in or custom.

Checks describe; the planner acts. What a check can do is stated by its ``capabilities``:

- :attr:`Capability.ROW`: ``violation(df)`` (or ``violations(df)`` for several codes) gives
  a boolean Column, true for an offending row. The check joins the valid/invalid split, and
  unless it is also ``AGGREGATE`` or ``SELF_RUNNING``, the planner counts its offending rows
  in the block's single scan (the one way to count them).
- :attr:`Capability.AGGREGATE`: ``aggregations(df)`` / ``from_aggregations(values)`` are the
  check's share of the block's single ``df.agg(...)`` and how to read its slice back;
  ``distinct_sets(df)`` names column sets whose distinct-row count it needs.
- :attr:`Capability.SELF_RUNNING`: ``run(df)`` starts the check's own Spark action. Only for
  a measurement that cannot be an aggregate Column (arbitrary SQL, the schema).

A check is built once, with its parameters and the rule's options, and never changes after.
What the engine does with it (its identity, the copies the planner binds to the references it
read and to the metric's history, the plan its capabilities make, and how its result is
completed and judged) is :class:`cola_core.checks.machinery.CheckMachinery`, which
``BaseCheck`` inherits and an author never writes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

from cola_core.checks.machinery import CheckMachinery
from cola_core.checks.options import Capability, RuleOptions
from cola_core.common.columns import scope_column, shared
from cola_core.common.formatting import render_code
from cola_core.errors import ColaError, ColaRuleError
from cola_core.language.params import Param
from cola_core.language.result import CheckResult, RuleSeverity

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from cola_core.storage.specs import SourceSpec

__all__ = ["BaseCheck", "Capability", "RuleOptions"]

# What a check of the older form (no ``capabilities``) may define, and so states by defining.
_LEGACY_METHODS = ("aggregations", "from_aggregations", "run", "violation", "violations")


class BaseCheck(CheckMachinery):
    """Base class of every check.

    Attributes:
        params: the rule dict without ``type`` and the common options (read-only).
        rule_type: the type the rule was registered under.
        name: the rule's optional ``name``.
        code: the rule's declared code, or the one rendered from its parameters.
        options: the rule's common options (:class:`RuleOptions`).

    Class attributes for subclasses:
        capabilities: what the check contributes (:class:`Capability`). A subclass that
            states none, as custom checks written before capabilities existed do, gets them
            once, when the class is made, from the methods it defines.
        params_spec: declared parameters (:mod:`cola_core.language.params`); ``None`` accepts any.
        supports_where: whether a rule of this kind may be scoped with ``where``.
        scopes_itself: for an ``AGGREGATE`` check, whether its aggregations honour ``where``
            (built-ins do, through :meth:`count_rows` and :meth:`scoped`). A scoped rule of a
            check that does not runs alone, on the filtered rows, at the cost of one job.
        identity_excludes: parameters that judge a measurement rather than define it.
        summaries: what each rule type checks, in one line, for the rule reference, when one
            class serves several types (``min``, ``max``...); a class serving one type is
            summed up by its docstring's first sentence.
        compares_rows: whether the check compares each row with the other rows it judges
            (a key's repeats, the distinct values): in a stream, only the rows of one
            micro-batch, so a stream whose watermark asks for keys to be matched across
            batches refuses it. A custom check that does so says so.
    """

    capabilities: ClassVar[frozenset[Capability]] = frozenset()
    # Parameters that judge a measurement rather than define it: left out of the rule_id, so
    # that a tuned threshold keeps its history.
    identity_excludes: ClassVar[frozenset[str]] = frozenset({"must_be", "warn", "baseline"})
    _capabilities_derived: ClassVar[bool] = False
    params_spec: ClassVar[Mapping[str, Param] | None] = None
    supports_where: ClassVar[bool] = True
    scopes_itself: ClassVar[bool] = False
    summaries: ClassVar[Mapping[str, str]] = MappingProxyType({})
    compares_rows: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        below_base = cls.__mro__[: cls.__mro__.index(BaseCheck)]
        stating = [klass for klass in below_base if "capabilities" in vars(klass)]
        if any("_capabilities_derived" not in vars(klass) for klass in stating):
            return
        # A custom check of the older form: what it can do follows from what it defines.
        defined = {name for name in _LEGACY_METHODS if getattr(cls, name) is not getattr(BaseCheck, name)}
        stated = set()
        if defined & {"violation", "violations"}:
            stated.add(Capability.ROW)
        if {"aggregations", "from_aggregations"} <= defined:
            stated.add(Capability.AGGREGATE)
        if "run" in defined:
            stated.add(Capability.SELF_RUNNING)
        cls.capabilities = frozenset(stated)
        cls._capabilities_derived = True

    def __init__(
        self,
        params: Mapping[str, Any] | None = None,
        *,
        rule_type: str | None = None,
        name: str | None = None,
        code: str | None = None,
        options: RuleOptions | None = None,
    ) -> None:
        self.params: Mapping[str, Any] = MappingProxyType(dict(params or {}))
        self.rule_type = rule_type or type(self).__name__
        self.name = name
        self.options = options or RuleOptions()
        self.code = code or self.render_code()

    # -- the rule's options --------------------------------------------------------------

    @property
    def severity_level(self) -> RuleSeverity:
        return self.options.severity

    @property
    def dimension(self) -> str | None:
        return self.options.dimension

    @property
    def where(self) -> str | None:
        return self.options.where

    @property
    def description(self) -> str | None:
        return self.options.description

    @property
    def tolerance(self) -> str | float | None:
        return self.options.tolerance

    @property
    def position(self) -> int | None:
        return self.options.position

    @property
    def target(self) -> int | None:
        return self.options.target

    def rule_error(self, reason: str) -> ColaRuleError:
        """A ``ColaRuleError`` that names this rule by position and type."""
        return ColaRuleError(
            reason, position=self.position, rule_type=self.rule_type, target=self.target, origin=self.options.origin
        )

    @classmethod
    def summary(cls, rule_type: str) -> str:
        """What a rule of ``rule_type`` checks, in one line (empty for an undocumented check)."""
        if rule_type in cls.summaries:
            return cls.summaries[rule_type]
        paragraph = (cls.__doc__ or "").strip().split("\n\n")[0]
        text = " ".join(paragraph.split())
        end = text.find(". ")
        return text if end < 0 else text[: end + 1]

    # -- parsing -------------------------------------------------------------------------

    @classmethod
    def validate(cls, params: Mapping[str, Any], rule_type: str) -> None:
        """Cross-parameter checks, after ``params_spec``. Raise ``ColaRuleError(reason)``."""

    def render_code(self) -> str:
        """The code rendered from the rule: ``type(column)`` for a one-column rule."""
        if isinstance(self.params.get("column"), str):
            return render_code(self.rule_type, self.params["column"])
        columns = self.params.get("columns")
        if isinstance(columns, (list, tuple)) and columns:
            return render_code(self.rule_type, *columns)
        return self.rule_type

    def conditions(self) -> list[str]:
        """SQL conditions the rule evaluates; the planner has Spark analyse them before any job."""
        return [self.where] if self.where is not None else []

    def analyse(self, df: DataFrame) -> None:
        """Have Spark check, without running a job, that the rule can run on ``df``; the
        planner calls it for every rule before the scan. Raise ``ColaRuleError(reason)``.
        By default there is nothing beyond the columns and conditions to check."""

    def columns_used(self, df: DataFrame) -> Sequence[str]:
        """Columns the rule reads; the planner checks they exist before any Spark work."""
        used: list[str] = []
        if isinstance(self.params.get("column"), str):
            used.append(self.params["column"])
        if isinstance(self.params.get("columns"), (list, tuple)):
            used.extend(self.params["columns"])
        return used

    # -- what the check reads besides the data -------------------------------------------

    def references(self) -> Mapping[str, SourceSpec]:
        """The other sources the check reads, by name; the planner reads each one (never
        the check) and hands them over: :meth:`input` gives each."""
        return {}

    def input(self, name: str) -> DataFrame:
        """The DataFrame the planner read for the reference ``name``."""
        try:
            return self._inputs[name]
        except KeyError:
            raise ColaError(
                f"{self!r} reads the reference {name!r}, which the planner has not read; "
                "run the check through Cola().run or cola_core.plan.planner"
            ) from None

    # -- describing the measurement (overridden by subclasses) ---------------------------

    def prepare(self, df: DataFrame) -> DataFrame:
        """Return ``df`` with any helper columns the check's Columns refer to (for example a
        lookup joined from a reference table). It must keep every row exactly once, and the
        planner and the split drop the helper columns again. The default adds nothing."""
        return df

    def aggregations(self, df: DataFrame) -> list[Column]:
        """The check's aggregate Columns; a row check that only counts offending rows has one."""
        if not self.counts_offending:
            raise NotImplementedError(f"{type(self).__name__} states no aggregations")
        return [self.count_offending(df)]

    def from_aggregations(self, values: Sequence[Any]) -> CheckResult:
        """The result, from the values of :meth:`aggregations` (then the distinct counts)."""
        if not self.counts_offending:
            raise NotImplementedError(f"{type(self).__name__} states no aggregations")
        return self.from_offending(int(values[0]))

    def counted_codes(self, codes: Sequence[str]) -> list[str | None]:
        """Which of :meth:`aggregations`' Columns a split can read off its codes column instead.

        Args:
            codes: the codes of the check's (code, predicate) pairs in the split, in the
                order of :meth:`violations`.

        Returns:
            For each Column of :meth:`aggregations`, in order (a shorter list leaves the rest
            out), the code whose rows it counts exactly: the rows in scope for which one of the
            check's predicates with that code holds. None for a Column that counts anything
            else. A row check that only counts its offending rows, all under one code, counts
            that code's rows; one that states its own aggregations (or counts its offending
            rows its own way) says so itself.
        """
        inherited = (type(self).aggregations is BaseCheck.aggregations
                     and type(self).count_offending is BaseCheck.count_offending)
        if self.counts_offending and inherited and len(set(codes)) == 1:
            return [codes[0]]
        return []

    def distinct_sets(self, df: DataFrame) -> list[tuple[str, ...]]:
        """Column sets whose distinct-row count (NULL equal to NULL) the check needs."""
        return []

    def violation(self, df: DataFrame) -> Column:
        raise NotImplementedError

    def violations(self, df: DataFrame) -> list[tuple[str, Column]]:
        """(code, predicate) pairs; a row breaking a predicate is quarantined with its code."""
        return [(self.code, self.violation(df))]

    def violation_text(self, df: DataFrame) -> str | None:
        """The check's one predicate as SQL text built by ``common.sqltext``, when it has a
        shape that can be written so, else None. When given, :meth:`violation` must be
        ``F.expr`` of it: the planner then counts offending rows with one expression of text
        (:meth:`count_where`), which equal rules of a block share."""
        return None

    def sample_values(self, df: DataFrame) -> list[tuple[str, Column]]:
        """(name, Column) pairs shown beside each of the check's sampled rows, read from ``df``
        as ``prepare`` left it (``reference_match`` shows the reference's values). None by default."""
        return []

    def run(self, df: DataFrame) -> CheckResult:
        """Run the check alone. By default this is the check's own aggregation job."""
        if not self.supports_aggregations:
            raise NotImplementedError(f"{type(self).__name__} implements neither run() nor aggregations()")
        prepared = self.prepare(df)
        columns = self.aggregations(prepared)
        values = list(prepared.agg(*columns).first() or []) if columns else []
        for column_set in self.distinct_sets(df):
            values.append(df.select(*column_set).distinct().count())
        return self.from_aggregations(values)

    # -- what a result measured, for the checked dataset's lineage ----------------------

    def measured_column(self) -> str | None:
        """The one column the rule is about, if it names exactly one (``column``, or one of
        ``columns``)."""
        if isinstance(self.params.get("column"), str):
            return str(self.params["column"])
        columns = self.params.get("columns")
        if isinstance(columns, (list, tuple)) and len(columns) == 1 and isinstance(columns[0], str):
            return columns[0]
        return None

    def column_measures(self, result: Mapping[str, Any]) -> dict[str, dict[str, int | float]]:
        """What ``result`` (one of the rule's, as ``CheckResult.to_dict`` gives it: a results
        file's or summary's) measured of each column over every row the rule saw, as
        ``{column: {measure: value}}``; the measures are ``null_count`` (the NULLs),
        ``distinct_rows`` (the distinct values, NULL counted as one), ``min``, ``max`` and
        ``sum``. The metrics of a dataset's lineage are read from them. A check that measures
        one of them says so here; by default, none. A rule with ``where`` is not asked."""
        return {}

    def expectation(self) -> tuple[str | None, str | None]:
        """What the rule demands, as text, and the key of the result (``CheckResult.to_dict``)
        that holds what it found, for the lineage's assertions; ``(None, None)`` when it has no
        number to compare. A metric rule: its ``must_be`` and ``metric_value``. A row rule:
        ``0`` offending rows (none with a ``tolerance``, which is a share, not a count) and
        ``failed_count``. A check with another measure says so here."""
        if "must_be" in self.params:
            return str(self.params["must_be"]), "metric_value"
        if self.is_row_level:
            return (None if self.tolerance is not None else "0"), "failed_count"
        return None, None

    def sql_text(self) -> str | None:
        """The SQL the rule runs as its author wrote it (a ``sql`` rule's query, an
        ``expression`` rule's condition), for the lineage's assertions; None by default."""
        return None

    # -- messages of a counted row check -------------------------------------------------

    def message_label(self) -> str:
        """What a counted row check's message opens with: the rule rendered from its parameters."""
        return self.render_code()

    def describe_pass(self) -> str:
        return "no row breaks the rule"

    def describe_failure(self, failed: int) -> str:
        return "1 row breaks the rule" if failed == 1 else f"{failed} rows break the rule"

    def from_offending(self, failed: int) -> CheckResult:
        """The result of a row check that found ``failed`` offending rows."""
        label = self.message_label()
        if not failed:
            return CheckResult(self.rule_type, True, f"{label}: {self.describe_pass()}")
        return CheckResult(self.rule_type, False, f"{label}: {self.describe_failure(failed)}", failed)

    # -- scope (``where``) and counting ---------------------------------------------------

    def scope(self) -> Column | None:
        """The rule's ``where`` as a Column, or None when the rule sees every row."""
        return scope_column(self.where)

    def in_scope(self, condition: Column) -> Column:
        """``condition`` for rows inside the scope, false outside it."""
        scope = self.scope()
        return condition if scope is None else scope & condition

    def scoped(self, value: Column) -> Column:
        """``value`` inside the scope and NULL outside it, which aggregates then ignore."""
        scope = self.scope()
        if scope is None:
            return value
        from pyspark.sql import functions as F

        return F.when(scope, value)

    def count_rows(self, condition: Column | None = None) -> Column:
        """An aggregate: the rows in scope (meeting ``condition`` when one is given; a row
        where it is NULL is not counted)."""
        from pyspark.sql import functions as F

        # count(when(c, 1)) rather than count_if(c): Spark rewrites count_if into an
        # expression that reads c twice, which costs a regex, say, twice per row.
        one = shared(("literal", 1), lambda: F.lit(1))
        scope = self.scope()
        if condition is not None:
            # A nested when(), not in_scope()'s &: NULL outside the scope is not counted
            # either, and the function costs a third of the operator's round trips.
            return F.count(F.when(condition if scope is None else F.when(scope, condition), one))
        if scope is None:
            return shared(("rows", None), lambda: F.count(one))
        return shared(("rows", self.where), lambda: F.count(F.when(scope, one)))

    def count_where(self, text: str | None, condition: Callable[[], Column]) -> Column:
        """An aggregate: the rows in scope meeting a condition given both as SQL ``text``
        (``common.sqltext``; None when it has no such form) and as the Column ``condition()``
        builds. A rule that sees every row counts the text, in one expression that equal
        conditions of a block share (Spark then computes it once); a scoped rule counts the
        Column (:meth:`count_rows`), since its ``where`` is the user's text, which is never
        spliced into other text."""
        if text is None or self.where is not None:
            return self.count_rows(condition())
        from pyspark.sql import functions as F

        return shared(("count_text", text), lambda: F.expr(f"count(CASE WHEN {text} THEN 1 END)"))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.code}>"
