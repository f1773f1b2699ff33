"""``BaseCheck``: the contract every check, built-in or custom, follows.

Checks describe; the planner acts. What a check can do is stated by its ``capabilities``:

- :attr:`Capability.ROW`: ``violation(df)`` (or ``violations(df)`` for several codes) gives
  a boolean Column, true for an offending row. The check joins the valid/invalid split, and
  unless it is also ``AGGREGATE`` or ``SELF_RUNNING``, the planner counts its offending rows
  in the block's single scan (:meth:`BaseCheck.count_offending`, the one way to count them).
- :attr:`Capability.AGGREGATE`: ``aggregations(df)`` / ``from_aggregations(values)`` are the
  check's share of the block's single ``df.agg(...)`` and how to read its slice back;
  ``distinct_sets(df)`` names column sets whose distinct-row count it needs.
- :attr:`Capability.SELF_RUNNING`: ``run(df)`` starts the check's own Spark action. Only for
  a measurement that cannot be an aggregate Column (arbitrary SQL, the schema).

A check is built once, with its parameters and the rule's options, and never changes after;
the planner hands it the DataFrames it refers to (:meth:`BaseCheck.references`) by making a
bound copy.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import enum
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import reduce
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

from cola_core._columns import is_true, scope_column, shared
from cola_core._format import format_number, render_code
from cola_core.errors import ColaError, ColaRuleError
from cola_core.judging import history_runs
from cola_core.params import Param
from cola_core.result import CheckResult, RuleSeverity
from cola_core.thresholds import threshold_of

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from cola_core.specs import OutputSpec, SourceSpec

__all__ = ["BaseCheck", "Capability", "RuleOptions"]


class Capability(str, enum.Enum):
    """What a check contributes to a block (see the module docstring)."""

    ROW = "row"
    AGGREGATE = "aggregate"
    SELF_RUNNING = "self_running"


@dataclass(frozen=True)
class RuleOptions:
    """What a rule says around its check, whatever its type.

    Attributes:
        severity: ``fail``, or ``warn`` (reported, but never fails the block nor
            quarantines a row).
        dimension: the quality dimension the rule reports under.
        where: a SQL condition; the rule sees only the rows meeting it.
        tolerance: the share of offending rows a row rule accepts (``"< 1%"``).
        position: the rule's index in the block, for error messages.
        target: the index in the rule's ``targets``, when it was expanded from one.
    """

    severity: RuleSeverity = "fail"
    dimension: str | None = None
    where: str | None = None
    tolerance: str | float | None = None
    position: int | None = None
    target: int | None = None


def _canonical(value: Any) -> Any:
    """``value`` in one JSON spelling: a whole float as an int (1.0 and 1 measure the same),
    dates as ISO text, tuples as lists."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return [_canonical(item) for item in value]
    if isinstance(value, Mapping):
        return {str(key): _canonical(item) for key, item in value.items()}
    return value


class _FrozenOnceBuilt(type):
    """Checks are values: once ``__init__`` (a subclass's included) returns, no attribute
    can be set, so nothing can change a rule after the parser validated it."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        check = super().__call__(*args, **kwargs)
        object.__setattr__(check, "_built", True)
        return check


_LEGACY_METHODS = ("aggregations", "from_aggregations", "run", "violation", "violations")


class BaseCheck(metaclass=_FrozenOnceBuilt):
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
        params_spec: declared parameters (:mod:`cola_core.params`); ``None`` accepts any.
        supports_where: whether a rule of this kind may be scoped with ``where``.
        scopes_itself: for an ``AGGREGATE`` check, whether its aggregations honour ``where``
            (built-ins do, through :meth:`count_rows` and :meth:`scoped`). A scoped rule of a
            check that does not runs alone, on the filtered rows, at the cost of one job.
    """

    capabilities: ClassVar[frozenset[Capability]] = frozenset()
    # Parameters that judge a measurement rather than define it: left out of the rule_id, so
    # that a tuned threshold keeps its history.
    identity_excludes: ClassVar[frozenset[str]] = frozenset({"must_be", "warn", "baseline"})
    _capabilities_derived: ClassVar[bool] = False
    params_spec: ClassVar[Mapping[str, Param] | None] = None
    supports_where: ClassVar[bool] = True
    scopes_itself: ClassVar[bool] = False
    # What the parser appends to the rendered code of a rule that measures what an earlier
    # rule of its block measures (``#2``); every row code rendered from the rule carries it
    # too (:meth:`with_code_suffix`).
    code_suffix: str = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        stating = [klass for klass in cls.__mro__[:-2] if "capabilities" in vars(klass)]
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
        self._inputs: Mapping[str, DataFrame] = MappingProxyType({})
        self._rule_id: str | None = None
        self._history: tuple[float, ...] | None = None

    def __setattr__(self, name: str, value: Any) -> None:
        if self.__dict__.get("_built"):
            raise AttributeError(f"a check is built once and never changes; cannot set {name!r} on {self!r}")
        object.__setattr__(self, name, value)

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
        return ColaRuleError(reason, position=self.position, rule_type=self.rule_type, target=self.target)

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

    def row_codes(self) -> tuple[str, ...]:
        """The codes the rule's offending rows carry in the split, known before any data: its
        ``code`` for a row rule, nothing for a rule that does not split. A rule that names a
        code per part (``not_null``'s per column) lists them all, so that the parser can
        choose a suffix no other rule's code has."""
        return (self.code,) if Capability.ROW in self.capabilities else ()

    def with_code_suffix(self, suffix: str) -> BaseCheck:
        """A copy whose rendered code ends with ``suffix``, and so does every row code rendered
        from the rule (the parser's ``#2`` for a rule that measures what an earlier rule of
        its block measures). Only for a rule without a declared code."""
        coded = copy.copy(self)
        object.__setattr__(coded, "code", self.code + suffix)
        object.__setattr__(coded, "code_suffix", self.code_suffix + suffix)
        return coded

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

    @property
    def failed_rows_output(self) -> OutputSpec | None:
        """Where the rows a failing rule returns are written (a ``sql`` rule's ``output``);
        the engine writes them after the block has run."""
        return None

    # -- identity ------------------------------------------------------------------------

    def identity(self) -> str:
        """The rule_id derived from what the rule measures: its type, its parameters but the
        ``identity_excludes`` ones, and its ``where``; never its thresholds, name, code,
        severity, dimension, tolerance or position. ``not_null:3f9a2c1b7e4d``."""
        measured = {key: value for key, value in self.params.items() if key not in self.identity_excludes}
        text = json.dumps(
            {"type": self.rule_type, "params": _canonical(measured), "where": self.where},
            sort_keys=True,
            separators=(",", ":"),
        )
        return f"{self.rule_type}:{hashlib.sha256(text.encode()).hexdigest()[:12]}"

    @property
    def rule_id(self) -> str:
        """The id the parser gave the rule in its block (declared, or ``identity()`` with a
        ``#2`` suffix for the second rule of the block that derives it); ``identity()``
        for a check built by hand."""
        return self._rule_id or self.identity()

    def with_rule_id(self, rule_id: str) -> BaseCheck:
        """A copy of the check known by ``rule_id`` (the parser's block-wide assignment)."""
        named = copy.copy(self)
        object.__setattr__(named, "_rule_id", rule_id)
        return named

    # -- earlier runs ----------------------------------------------------------------------

    @property
    def history_runs(self) -> int:
        """How many earlier values of its metric the rule's change or anomaly thresholds need
        (0 for a rule that judges its value alone)."""
        if self.params_spec is not None and "must_be" not in self.params_spec:
            return 0
        return history_runs(self.params) if "must_be" in self.params else 0

    @property
    def history_values(self) -> tuple[float, ...] | None:
        """The metric's earlier values, newest first, as the history store holds them for
        this rule and dataset; None when no store was read."""
        return self._history

    def with_history(self, values: Sequence[float]) -> BaseCheck:
        """A copy of the check that judges against ``values`` (newest first)."""
        judged = copy.copy(self)
        object.__setattr__(judged, "_history", tuple(values))
        return judged

    # -- what the check reads besides the data -------------------------------------------

    def references(self) -> Mapping[str, SourceSpec]:
        """The other sources the check reads, by name; the planner reads each one (never
        the check) and hands them over with :meth:`with_inputs`."""
        return {}

    def with_inputs(self, inputs: Mapping[str, DataFrame]) -> BaseCheck:
        """A copy of the check that reads ``inputs`` (name -> DataFrame, see :meth:`references`)."""
        bound = copy.copy(self)
        object.__setattr__(bound, "_inputs", MappingProxyType(dict(inputs)))
        return bound

    @property
    def is_bound(self) -> bool:
        """Whether every reference has been handed over."""
        return set(self.references()) <= set(self._inputs)

    def input(self, name: str) -> DataFrame:
        """The DataFrame the planner read for the reference ``name``."""
        try:
            return self._inputs[name]
        except KeyError:
            raise ColaError(
                f"{self!r} reads the reference {name!r}, which the planner has not read; "
                "run the check through Cola().run or cola_core.planner"
            ) from None

    # -- capabilities --------------------------------------------------------------------

    @property
    def is_row_level(self) -> bool:
        """Whether the check's predicates join the split."""
        return Capability.ROW in self.capabilities

    @property
    def counts_offending(self) -> bool:
        """A row check whose result is the count of its offending rows, made in the scan."""
        return self.capabilities.isdisjoint({Capability.AGGREGATE, Capability.SELF_RUNNING}) and self.is_row_level

    @property
    def supports_aggregations(self) -> bool:
        """Whether the check's measurement joins the block's single scan."""
        return Capability.AGGREGATE in self.capabilities or self.counts_offending

    @property
    def runs_alone(self) -> bool:
        """Whether the planner runs the check with its own action: a self-running check, or
        a scoped aggregate one whose aggregations do not honour ``where``."""
        if not self.supports_aggregations:
            return True
        return self.where is not None and Capability.AGGREGATE in self.capabilities and not self.scopes_itself

    @classmethod
    def takes_tolerance(cls) -> bool:
        """A tolerance is a share of offending rows: it needs a row check measured in the scan,
        and a metric rule already says how much is acceptable with ``must_be``."""
        caps = cls.capabilities
        metric = cls.params_spec is not None and "must_be" in cls.params_spec
        in_scan = Capability.AGGREGATE in caps or Capability.SELF_RUNNING not in caps
        return Capability.ROW in caps and in_scan and not metric

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

    def distinct_sets(self, df: DataFrame) -> list[tuple[str, ...]]:
        """Column sets whose distinct-row count (NULL equal to NULL) the check needs."""
        return []

    def window_keys(self) -> tuple[str, ...] | None:
        """The columns its row predicate partitions a window by (``unique``), if it does.

        A split evaluates that window anyway, so ``split_write`` counts the distinct keys
        of the check's own distinct set on it instead of in a pass of their own.
        """
        return None

    def violation(self, df: DataFrame) -> Column:
        raise NotImplementedError

    def violations(self, df: DataFrame) -> list[tuple[str, Column]]:
        """(code, predicate) pairs; a row breaking a predicate is quarantined with its code."""
        return [(self.code, self.violation(df))]

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

    def judging_parameters(self) -> dict[str, str]:
        """The parameters that judge the measurement, as the rule wrote them: the
        ``identity_excludes`` but ``baseline`` (a mapping that says where the earlier value
        comes from; the result carries the value itself), then ``tolerance``. ``must_be`` and
        ``warn`` come first, as a reader looks for them, then ``min`` before ``max``, as a range
        reads; the rest by name. ``{"must_be": "> 5"}``."""
        judging = self.identity_excludes - {"baseline"}
        first = ("must_be", "warn", "min", "max")
        keys: list[str] = [key for key in first if key in judging] + sorted(judging.difference(first))
        shown = {key: str(self.params[key]) for key in keys if self.params.get(key) is not None}
        if self.tolerance is not None:
            shown["tolerance"] = str(self.tolerance)
        return shown

    def finish(self, result: CheckResult, rows_in_scope: int | None = None) -> CheckResult:
        """Complete a check's result with what the rule says around it.

        Fills in the name, code, dimension and thresholds (:meth:`judging_parameters`) a
        custom check may leave out (thresholds it gives are kept, each name and value made
        text, and one whose value is None left out, as :meth:`judging_parameters` leaves it:
        the results file and the XCom carry an object of strings), then applies the
        rule's ``tolerance`` (a failed row rule passes when its share of offending rows meets
        it) and ``severity`` (a ``warn`` rule that fails is reported as a warn).

        Args:
            rows_in_scope: rows the rule saw; the planner gives it for every rule it measured
                in the scan, and it becomes the result's ``rows_checked``.

        Raises:
            ColaRuleError: a custom check's own thresholds are no mapping, or two of their
                names are the same text (``1`` and ``"1"``).
        """
        updates: dict[str, Any] = {}
        if result.rows_checked is None and rows_in_scope is not None:
            updates["rows_checked"] = rows_in_scope
        if result.check_name is None and self.name is not None:
            updates["check_name"] = self.name
        if result.code is None:
            updates["code"] = self.code
        if result.rule_id is None:
            updates["rule_id"] = self.rule_id
        if result.dimension is None and self.dimension is not None:
            updates["dimension"] = self.dimension
        judging = self.judging_parameters() if result.thresholds is None else None
        if judging:
            updates["thresholds"] = judging
        elif result.thresholds is not None:
            given = self._own_thresholds(result.thresholds)
            if given != result.thresholds or type(result.thresholds) is not dict:
                updates["thresholds"] = given
        if self.tolerance is not None and rows_in_scope is not None and result.severity == "fail":
            share = 100.0 * result.failed_count / rows_in_scope if rows_in_scope else 0.0
            within = threshold_of(self.tolerance).accepts(share)
            verdict = "within" if within else "beyond"
            shown = format_number(share)
            updates["message"] = f"{result.message}; {shown}% of rows, {verdict} tolerance ({self.tolerance})"
            if within:
                updates.update(passed=True, severity="pass")
        severity = updates.get("severity", result.severity)
        if self.severity_level == "warn" and severity == "fail":
            updates.update(passed=True, severity="warn")
        return dataclasses.replace(result, **updates) if updates else result

    def _own_thresholds(self, thresholds: Any) -> dict[str, str]:
        """A custom check's own thresholds ({"limit": 5}) as text, in its order: the provider
        reads the results file's thresholds as an object of strings, and refuses any other. A
        None value is left out, as :meth:`judging_parameters` leaves out a parameter not given."""
        if not isinstance(thresholds, Mapping):
            raise self.rule_error(
                "the check's result gives thresholds that are no mapping of names to values (such as "
                f'{{"limit": 5}}): got {type(thresholds).__name__}'
            )
        given: dict[str, str] = {}
        named: dict[str, Any] = {}
        for name, value in thresholds.items():
            text = str(name)
            if text in named:
                raise self.rule_error(
                    f"the check's result gives thresholds named {named[text]!r} and {name!r}, the same "
                    f"name {text!r} once made text: give each its own name"
                )
            named[text] = name
            if value is not None:
                given[text] = str(value)
        return given

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

    def any_violation(self, df: DataFrame) -> Column:
        """True for a row in scope that breaks any of the check's predicates (NULL is not)."""
        from pyspark.sql import functions as F

        broken = F.lit(False)
        for _, predicate in self.violations(df):
            broken = broken | is_true(predicate)
        return self.in_scope(broken)

    def count_offending(self, df: DataFrame) -> Column:
        """An aggregate: the rows in scope that break any of the check's predicates. A NULL
        predicate blames no row, as ``count`` skips the NULL it leaves."""
        predicates = [predicate for _, predicate in self.violations(df)]
        return self.count_rows(reduce(lambda a, b: a | b, predicates))

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

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.code}>"
