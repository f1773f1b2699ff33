"""``BaseCheck`` (``checks/base.py``): what an author writes. How a check scopes itself to the
rule's ``where``, and what each check states it can do (or has derived from its methods).

What the engine does with a check (judging, bindings, freezing) is tested with
``checks/machinery.py`` in ``test_checks_machinery.py``."""

from __future__ import annotations

import pytest

from cola_core import BaseCheck, Capability, CheckResult, Cola, ColaRuleError
from cola_core.checks import BUILTIN_CHECKS
from cola_helpers import codes_of, run_all

pytestmark = [pytest.mark.spark, pytest.mark.connect]

ROW, AGGREGATE, SELF_RUNNING = Capability.ROW, Capability.AGGREGATE, Capability.SELF_RUNNING


# -- where: the rule sees only the rows in its scope ------------------------------------------


@pytest.mark.spark
def test_where_scopes_counts_percentages_and_statistics(order_lines):
    live = "status = 'live'"
    results = run_all(
        order_lines,
        {"type": "not_null", "columns": ["email"], "where": live},
        {"type": "missing_percent", "column": "email", "must_be": "< 50%", "where": live},
        {"type": "row_count", "min": 4, "where": live},
        {"type": "avg", "column": "amount", "must_be": "> 0", "where": live},
        {"type": "unique", "columns": ["id", "line"], "where": "status = 'deleted'"},
        {"type": "duplicate_count", "columns": ["id", "line"], "must_be": "= 0", "where": live},
    )
    assert [(r.severity, r.failed_count, r.metric_value, r.message) for r in results] == [
        ("fail", 1, None, "not_null(email): 1 NULL value (email: 1)"),
        ("pass", 0, 100 / 3, "missing_percent(email) = 33.3333 meets must_be (< 50%)"),
        ("fail", 1, None, "row_count = 3 is below min 4"),
        ("pass", 0, 56 / 3, "avg(amount) = 18.6667 meets must_be (> 0)"),
        ("fail", 1, None, "unique(id,line): 1 duplicate row (2 rows, 1 distinct)"),
        ("pass", 0, 0, "duplicate_count(id,line) = 0 meets must_be (= 0)"),
    ]


@pytest.mark.spark
def test_rows_outside_the_scope_are_never_quarantined_by_that_rule(order_lines):
    valid, invalid = Cola().split(
        order_lines,
        [
            {"type": "not_null", "columns": ["email"], "where": "status = 'live'"},
            {"type": "unique", "columns": ["id", "line"], "where": "status = 'deleted'"},
            {"type": "range", "column": "amount", "min": 0, "where": "id > 1"},
        ],
        annotate="dq",
    )
    assert codes_of(invalid) == [(1, 2, ("not_null(email)",)), (2, 1, ("unique(id,line)",)), (2, 1, ("unique(id,line)",))]
    assert sorted((r.id, r.line) for r in valid.collect()) == [(1, 1), (3, 1)]


@pytest.mark.spark
def test_a_scoped_block_is_still_one_scan(order_lines, job_counter):
    rules = [
        {"type": "not_null", "columns": ["email"], "where": "status = 'live'"},
        {"type": "avg", "column": "amount", "must_be": "> 0", "where": "status = 'live'"},
        {"type": "missing_count", "column": "email", "must_be": "= 0", "where": "amount > 0"},
        {"type": "row_count", "min": 1},
        {"type": "expression", "expression": "ends > starts", "where": "status = 'live'"},
        {"type": "castable", "column": "qty", "to": "int"},
        {"type": "values_present", "column": "dt", "values": ["2024-01-01"], "where": "id = 1"},
    ]
    with job_counter.count() as counted:
        run_all(order_lines, *rules)
    assert counted.jobs == 1


@pytest.mark.spark
def test_a_condition_spark_cannot_evaluate_is_a_rule_error_before_any_job(order_lines, job_counter):
    with job_counter.count() as counted, pytest.raises(ColaRuleError) as raised:
        run_all(order_lines, {"type": "row_count"}, {"type": "not_null", "columns": ["id"], "where": "statuz = 'live'"})
    assert counted.jobs == 0
    assert str(raised.value).startswith(
        "rules[1] (not_null): Spark cannot evaluate \"statuz = 'live'\" on this DataFrame: [UNRESOLVED_COLUMN"
    )



# -- capabilities: stated by every built-in, derived for a custom check that states none -------

CAPABILITIES = {
    "not_null": {ROW, AGGREGATE},
    "unique": {ROW, AGGREGATE},
    "range": {ROW},
    "regex": {ROW},
    "schema": {SELF_RUNNING},
    "sql": {SELF_RUNNING},
    "expression": {ROW},
    "castable": {ROW},
    "values_present": {AGGREGATE},
    "foreign_key": {ROW},
    "reconcile": {AGGREGATE},
    "reference_match": {ROW, AGGREGATE},
    "row_count": {AGGREGATE},
    "distinct_count": {AGGREGATE},
    "duplicate_count": {AGGREGATE},
    "duplicate_percent": {AGGREGATE},
    "missing_count": {ROW, AGGREGATE},
    "missing_percent": {ROW, AGGREGATE},
    "invalid_count": {ROW, AGGREGATE},
    "invalid_percent": {ROW, AGGREGATE},
    "min": {AGGREGATE},
    "max": {AGGREGATE},
    "avg": {AGGREGATE},
    "mean": {AGGREGATE},
    "sum": {AGGREGATE},
    "stddev": {AGGREGATE},
    "freshness": {AGGREGATE},
}


def test_every_built_in_check_states_its_capabilities():
    assert {name: set(cls.capabilities) for name, cls in BUILTIN_CHECKS.items()} == CAPABILITIES
    # Each built-in states its own: none is derived from the methods it defines.
    assert not [cls for cls in BUILTIN_CHECKS.values() if "_capabilities_derived" in vars(cls)]
    assert BaseCheck.capabilities == frozenset()


class _ViolationOnly(BaseCheck):
    def violation(self, df):
        raise NotImplementedError


class _RunAndViolation(BaseCheck):
    def run(self, df):
        raise NotImplementedError

    def violation(self, df):
        raise NotImplementedError


class _Aggregating(BaseCheck):
    def aggregations(self, df):
        return []

    def from_aggregations(self, values):
        return CheckResult("aggregating", True)


class _AggregationsAlone(BaseCheck):
    def aggregations(self, df):  # without from_aggregations it cannot read its slice back
        return []


class _Stated(BaseCheck):
    capabilities = frozenset({SELF_RUNNING})

    def violation(self, df):  # stated capabilities win over what the class defines
        raise NotImplementedError


@pytest.mark.parametrize(
    ("cls", "capabilities", "row_level", "counts_offending", "runs_alone"),
    [
        (_ViolationOnly, {ROW}, True, True, False),
        (_RunAndViolation, {ROW, SELF_RUNNING}, True, False, True),
        (_Aggregating, {AGGREGATE}, False, False, False),
        (_AggregationsAlone, set(), False, False, True),
        (_Stated, {SELF_RUNNING}, False, False, True),
    ],
)
def test_a_custom_check_that_states_no_capabilities_gets_them_from_its_methods(
    cls, capabilities, row_level, counts_offending, runs_alone
):
    check = cls({"column": "a"})
    assert set(cls.capabilities) == capabilities
    assert (check.is_row_level, check.counts_offending, check.runs_alone) == (row_level, counts_offending, runs_alone)


def test_a_subclass_of_a_derived_check_derives_again():
    class WithRun(_ViolationOnly):
        def run(self, df):
            raise NotImplementedError

    assert set(WithRun.capabilities) == {ROW, SELF_RUNNING}


def test_the_authors_base_defines_what_an_author_writes_and_inherits_the_machinery():
    from cola_core.checks.machinery import CheckMachinery

    assert issubclass(BaseCheck, CheckMachinery)
    written = {"run", "violation", "violations", "aggregations", "from_aggregations", "prepare", "references",
               "input", "count_rows", "scoped", "render_code", "validate"}
    assert written <= set(vars(BaseCheck))
    machinery = {"finish", "identity", "rule_id", "with_rule_id", "with_history", "with_inputs", "is_bound",
                 "runs_alone", "count_offending", "judging_parameters", "row_codes", "with_code_suffix"}
    assert machinery.isdisjoint(vars(BaseCheck))
    assert all(getattr(BaseCheck, name) is getattr(CheckMachinery, name) for name in machinery)
