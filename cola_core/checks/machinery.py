"""What the engine does with a check, beside what its author writes.

:class:`CheckMachinery` is the part of every check that the parser and the planner use and a
check's author never writes: the rule's identity (its ``rule_id`` and the codes of its rows),
the copies the planner binds (to an id, to the metric's history, to the references it read),
how the capabilities translate into a plan, and how a measured result is completed and judged
(``finish``). :class:`cola_core.checks.base.BaseCheck` inherits it; an author reads that
class alone.

A check is a value: once built, no attribute can be set (:class:`FrozenOnceBuilt`), and each
binding is a copy.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from functools import reduce
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from cola_core.checks.options import Capability, RuleOptions
from cola_core.common.columns import is_true
from cola_core.common.formatting import format_number
from cola_core.language.judging import history_runs
from cola_core.language.result import CheckResult
from cola_core.language.thresholds import threshold_of

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from cola_core.errors import ColaRuleError
    from cola_core.language.params import Param
    from cola_core.language.result import RuleSeverity
    from cola_core.storage.specs import OutputSpec, SourceSpec

__all__ = ["CheckMachinery", "FrozenOnceBuilt"]

# A binding returns a copy of the check's own class.
_Check = TypeVar("_Check", bound="CheckMachinery")


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


class FrozenOnceBuilt(type):
    """Checks are values: once ``__init__`` (a subclass's included) returns, no attribute
    can be set, so nothing can change a rule after the parser validated it."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        check = super().__call__(*args, **kwargs)
        object.__setattr__(check, "_built", True)
        return check


class CheckMachinery(metaclass=FrozenOnceBuilt):
    """The engine's side of a check: identity, bindings, planning and judging."""

    # What the parser appends to the rendered code of a rule that measures what an earlier
    # rule of its block measures (``#2``); every row code rendered from the rule carries it
    # too (:meth:`with_code_suffix`).
    code_suffix: str = ""
    # The bindings, each set on a copy (with_rule_id, with_history, with_inputs).
    _rule_id: str | None = None
    _history: tuple[float, ...] | None = None
    _inputs: Mapping[str, DataFrame] = MappingProxyType({})

    if TYPE_CHECKING:
        # What the author's side (BaseCheck) provides and this side reads.
        capabilities: ClassVar[frozenset[Capability]]
        identity_excludes: ClassVar[frozenset[str]]
        params_spec: ClassVar[Mapping[str, Param] | None]
        scopes_itself: ClassVar[bool]
        params: Mapping[str, Any]
        rule_type: str
        name: str | None
        code: str
        options: RuleOptions

        @property
        def where(self) -> str | None: ...
        @property
        def tolerance(self) -> str | float | None: ...
        @property
        def dimension(self) -> str | None: ...
        @property
        def severity_level(self) -> RuleSeverity: ...
        def rule_error(self, reason: str) -> ColaRuleError: ...
        def references(self) -> Mapping[str, SourceSpec]: ...
        def violations(self, df: DataFrame) -> list[tuple[str, Column]]: ...
        def in_scope(self, condition: Column) -> Column: ...
        def count_rows(self, condition: Column | None = None) -> Column: ...
        def violation_text(self, df: DataFrame) -> str | None: ...
        def count_where(self, text: str | None, condition: Callable[[], Column]) -> Column: ...

    def __setattr__(self, name: str, value: Any) -> None:
        if self.__dict__.get("_built"):
            raise AttributeError(f"a check is built once and never changes; cannot set {name!r} on {self!r}")
        object.__setattr__(self, name, value)

    # -- codes -----------------------------------------------------------------------------

    def row_codes(self) -> tuple[str, ...]:
        """The codes the rule's offending rows carry in the split, known before any data: its
        ``code`` for a row rule, nothing for a rule that does not split. A rule that names a
        code per part (``not_null``'s per column) lists them all, so that the parser can
        choose a suffix no other rule's code has."""
        return (self.code,) if Capability.ROW in self.capabilities else ()

    def with_code_suffix(self: _Check, suffix: str) -> _Check:
        """A copy whose rendered code ends with ``suffix``, and so does every row code rendered
        from the rule (the parser's ``#2`` for a rule that measures what an earlier rule of
        its block measures). Only for a rule without a declared code."""
        coded = copy.copy(self)
        object.__setattr__(coded, "code", self.code + suffix)
        object.__setattr__(coded, "code_suffix", self.code_suffix + suffix)
        return coded

    @property
    def failed_rows_output(self) -> OutputSpec | None:
        """Where the rows a failing rule returns are written (a ``sql`` rule's ``output``);
        the engine writes them after the block has run."""
        return None

    # -- identity --------------------------------------------------------------------------

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

    def with_rule_id(self: _Check, rule_id: str) -> _Check:
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

    def with_history(self: _Check, values: Sequence[float]) -> _Check:
        """A copy of the check that judges against ``values`` (newest first)."""
        judged = copy.copy(self)
        object.__setattr__(judged, "_history", tuple(values))
        return judged

    # -- the references, read by the planner ------------------------------------------------

    def with_inputs(self: _Check, inputs: Mapping[str, DataFrame]) -> _Check:
        """A copy of the check that reads ``inputs`` (name -> DataFrame, see ``references``)."""
        bound = copy.copy(self)
        object.__setattr__(bound, "_inputs", MappingProxyType(dict(inputs)))
        return bound

    @property
    def is_bound(self) -> bool:
        """Whether every reference has been handed over."""
        return set(self.references()) <= set(self._inputs)

    # -- what the capabilities mean for the plan --------------------------------------------

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

    def window_keys(self) -> tuple[str, ...] | None:
        """The columns its row predicate partitions a window by (``unique``), if it does.

        A split evaluates that window anyway, so ``split_write`` counts the distinct keys
        of the check's own distinct set on it instead of in a pass of their own.
        """
        return None

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
        return self.count_where(
            self.violation_text(df), lambda: reduce(lambda a, b: a | b, (p for _, p in self.violations(df)))
        )

    # -- completing and judging a result ----------------------------------------------------

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
