"""What the peer libraries do, written as Cola rules.

Seed 003 (SparkDQ): custom row and aggregate checks registered by decorator, loaded as a
package, validated at load time, and defined as dicts or YAML. Seed 004 (ntb-dq-framework):
six dimensions of rules, filter_expression scoping, critical vs warning severity, failed
record samples, the critical failed rows to filter out, and a SQL guard. Each test takes one
of their examples and shows the Cola rule that does the same, with exact results.
"""

from __future__ import annotations

import datetime as dt
import sys
import textwrap

import pytest

from cola_core import Cola, ColaRuleError
from cola_core.ruleset import registry as registry_module
from cola_core.ruleset.registry import load_checks

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def customers(spark):
    rows = [
        (1, "ana@x.io", "Female", 34, "1234567890123", "2024-01-01", "10", 100.0, dt.datetime(2024, 1, 3, 8)),
        (2, "", "Male", 150, "123", "2024-01-02", "x", 50.0, dt.datetime(2024, 1, 3, 9)),
        (3, None, "Other", 28, "9876543210987", "2024-01-02", "7", 25.0, dt.datetime(2024, 1, 3, 10)),
        (3, "d@x.io", "Female", -1, None, "2024-01-04", "3", 25.0, dt.datetime(2024, 1, 3, 11)),
    ]
    return spark.createDataFrame(
        rows,
        "customer_id int, email string, gender string, age int, id_card string, dt string, qty string, "
        "total double, updated_at timestamp",
    )


@pytest.fixture(scope="module")
def reference(spark, tmp_path_factory):
    folder = tmp_path_factory.mktemp("reference") / "customer_dim"
    spark.createDataFrame([(1, 100.0), (2, 50.0), (4, 10.0)], "customer_id int, total double").write.parquet(str(folder))
    return {"path": str(folder), "format": "parquet"}


def outline(results):
    return [(r.code, r.severity, r.failed_count) for r in results]


# -- seed 004: one rule type per dimension --------------------------------------------------


def test_completeness_null_check_counts_null_or_empty(customers):
    # null_check: "rows where the target column is null or empty".
    (result,) = Cola().run(customers, [{"type": "missing_count", "column": "email", "missing_values": [""],
                                        "must_be": "= 0", "dimension": "Completeness"}])
    assert (result.metric_value, result.severity, result.dimension) == (2, "fail", "Completeness")


def test_completeness_missing_partition_is_values_present(customers):
    (result,) = Cola().run(customers, [{"type": "values_present", "column": "dt",
                                        "values": ["2024-01-01", "2024-01-02", "2024-01-03"]}])
    assert result.message == "values_present(dt): 1 of 3 values missing: 2024-01-03"


def test_completeness_volume_check_against_a_baseline(customers):
    # volume_check: baseline 5 rows, 20% threshold -> between 4 and 6 rows.
    (result,) = Cola().run(customers, [{"type": "row_count", "must_be": "between 4 and 6"}])
    assert result.message == "row_count = 4 meets must_be (between 4 and 6)"


def test_validity_rules(customers):
    results = Cola().run(customers, [
        # allowed_values: values outside the list fail (NULLs are missing, not invalid).
        {"type": "invalid_count", "column": "gender", "valid_values": ["Male", "Female"], "must_be": "= 0"},
        # range_check
        {"type": "range", "column": "age", "min": 0, "max": 120},
        # regex_check: nulls excluded, the column read as text.
        {"type": "regex", "column": "id_card", "pattern": r"^\d{13}$", "null_is_valid": True},
        # type_check
        {"type": "castable", "column": "qty", "to": "int"},
    ])
    assert outline(results) == [
        ("invalid_count(gender)", "fail", 1),
        ("range(age,0,120)", "fail", 2),
        ("regex(id_card,^\\d{13}$)", "fail", 1),
        ("castable(qty,int)", "fail", 1),
    ]


def test_uniqueness_duplicate_check(customers):
    unique, duplicates = Cola().run(customers, [
        {"type": "unique", "columns": ["customer_id"]},
        {"type": "duplicate_count", "columns": ["customer_id"], "must_be": "= 0"},
    ])
    assert (unique.failed_count, duplicates.metric_value) == (1, 1)


def test_consistency_business_rule_and_referential_integrity(customers, reference):
    business, orphans = Cola().run(customers, [
        {"type": "expression", "expression": "total > 0 AND age >= 0"},
        {"type": "foreign_key", "column": "customer_id", "reference": reference},
    ])
    assert (business.failed_count, orphans.failed_count) == (1, 2)


def test_accuracy_reconciliation(customers, reference):
    (reconciled,) = Cola().run(customers, [
        {"type": "reconcile", "aggregate": "sum", "column": "total", "reference": reference,
         "difference": "relative", "must_be": "< 5%"},
    ])
    assert (reconciled.severity, reconciled.metric_value) == ("fail", 25.0)


def test_accuracy_reference_match(customers, reference):
    # reference_match: target_key_column / target_comparison_column, the source_* names
    # defaulting to the same. Customer 3 is not in customer_dim.
    (result,) = Cola().run(customers, [
        {"type": "reference_match", "reference": reference, "keys": ["customer_id"], "columns": ["total"],
         "dimension": "Accuracy"},
    ])
    assert result.message == (
        "reference_match(total): 2 rows do not match the reference (missing: 2; 2 compared)"
    )
    assert (result.failed_count, result.dimension) == (2, "Accuracy")


@pytest.fixture(scope="module")
def ledger(spark, tmp_path_factory):
    """Another system's copy of the customers, under other names: id and day key it."""
    folder = tmp_path_factory.mktemp("ledger") / "ledger"
    spark.createDataFrame(
        [(1, "2024-01-01", "ana@x.io", 100.4), (2, "2024-01-02", "bob@x.io", 49.0),
         (3, "2024-01-02", None, 25.0), (3, "2024-01-04", "D@x.io", 25.5)],
        "id bigint, day string, mail string, amount double",
    ).write.parquet(str(folder))
    return {"path": str(folder), "format": "parquet"}


def test_accuracy_tolerance_match(customers, ledger):
    # tolerance_match: a numeric tolerance of 0.5; 49.0 against 50.0 is beyond it.
    (result,) = Cola().run(customers, [
        {"type": "reference_match", "reference": ledger, "keys": ["customer_id", "dt"],
         "reference_keys": ["id", "day"], "columns": ["total"], "reference_columns": ["amount"],
         "absolute_difference": {"total": 0.5}},
    ])
    assert (result.failed_count, result.message) == (
        1, "reference_match(total): 1 row does not match the reference (total: 1; 4 compared)"
    )


def test_consistency_cross_system_match(customers, ledger):
    # cross_system_match: key columns and compared columns, named differently on each side.
    rule = {"type": "reference_match", "reference": ledger, "keys": ["customer_id", "dt"],
            "reference_keys": ["id", "day"], "columns": ["email", "total"], "reference_columns": ["mail", "amount"],
            "dimension": "Consistency"}
    valid, invalid = Cola().split(customers, [rule], annotate="dq")
    assert sorted((row.customer_id, row.dt, tuple(row.dq)) for row in invalid.collect()) == [
        (1, "2024-01-01", ("reference_match(total)",)),
        (2, "2024-01-02", ("reference_match(email)", "reference_match(total)")),
        (3, "2024-01-04", ("reference_match(email)", "reference_match(total)")),
    ]
    # Customer 3 of 2024-01-02 has no email on either side: NULL equals NULL.
    assert [(row.customer_id, row.dt) for row in valid.collect()] == [(3, "2024-01-02")]


def test_timeliness_freshness_and_sla(customers):
    (sla,) = Cola().run(customers, [{"type": "freshness", "column": "updated_at", "must_be": "< 24h"}])
    assert (sla.severity, sla.message.split(" = ")[0]) == ("fail", "freshness(updated_at)")
    assert sla.metric_value > 24 * 3600


# -- seed 004: scoping, severity, samples, critical rows, the SQL guard ----------------------


def test_filter_expression_is_where(customers):
    (result,) = Cola().run(customers, [
        {"type": "missing_count", "column": "email", "missing_values": [""], "must_be": "= 0",
         "where": "COALESCE(age, 0) BETWEEN 0 AND 120"},
    ])
    assert result.metric_value == 1


def test_critical_and_warning_severity_with_samples_and_the_rows_to_filter_out(customers):
    rules = [
        {"type": "not_null", "columns": ["email"], "severity": "fail"},
        {"type": "range", "column": "age", "min": 0, "max": 120, "severity": "warn"},
    ]
    critical, warning = Cola().run(customers, rules, samples=1)
    assert (critical.severity, warning.severity) == ("fail", "warn")
    assert [row["customer_id"] for row in critical.samples + warning.samples] == [3, 2]
    # critical_failed_rows_df: only critical rules remove rows before the load.
    clean, quarantined = Cola().split(customers, rules, annotate="dq")
    assert sorted(row.customer_id for row in clean.collect()) == [1, 2, 3]
    assert [(row.customer_id, row.dq, row.dq_warnings) for row in quarantined.collect()] == [
        (3, ["not_null(email)"], [])
    ]


@pytest.mark.parametrize("query", [
    "DROP TABLE customers",
    "SELECT * FROM _validation_df; DELETE FROM customers",
    "WITH x AS (SELECT 1) INSERT INTO customers SELECT * FROM x",
])
def test_the_sql_guard_refuses_writes(query):
    with pytest.raises(ColaRuleError):
        Cola().parse([{"type": "sql", "failed_rows": query}])


# -- seed 003: custom checks as a package, validated at load time, from YAML ----------------


PACKAGE_INIT = "from .row_checks import PositiveValueCheck\nfrom .aggregate_checks import RowCountMinCheck\n"
ROW_CHECKS = '''
from pyspark.sql import functions as F
from cola_core import BaseCheck
from cola_core.ruleset.registry import register_check

@register_check("positive_value")
class PositiveValueCheck(BaseCheck):
    def violation(self, df):
        return F.col(self.params["column"]) <= 0
'''
AGGREGATE_CHECKS = '''
from pyspark.sql import functions as F
from cola_core import BaseCheck, CheckResult, ColaRuleError
from cola_core.language.params import WHOLE, Param
from cola_core.ruleset.registry import register_check

@register_check("custom_row_count_min")
class RowCountMinCheck(BaseCheck):
    params_spec = {"min_count": Param(WHOLE, required=True)}

    @classmethod
    def validate(cls, params, rule_type):
        if params["min_count"] <= 0:
            raise ColaRuleError(f"min_count ({params['min_count']}) must be greater than 0")

    def aggregations(self, df):
        return [F.count(F.lit(1))]

    def from_aggregations(self, values):
        actual = int(values[0])
        return CheckResult(self.rule_type, actual >= self.params["min_count"],
                           f"{actual} rows, at least {self.params['min_count']} expected", metric_value=actual)
'''


def _forget_package(name: str) -> None:
    # Another test may have imported a package of the same name from another folder.
    for module in [m for m in sys.modules if m == name or m.startswith(f"{name}.")]:
        del sys.modules[module]


@pytest.fixture
def custom_checks(tmp_path, monkeypatch):
    monkeypatch.setattr(registry_module, "_registered", {})
    _forget_package("myproject")
    package = tmp_path / "myproject" / "custom_checks"
    package.mkdir(parents=True)
    (tmp_path / "myproject" / "__init__.py").write_text("")
    (package / "__init__.py").write_text(PACKAGE_INIT)
    (package / "row_checks.py").write_text(textwrap.dedent(ROW_CHECKS))
    (package / "aggregate_checks.py").write_text(textwrap.dedent(AGGREGATE_CHECKS))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield load_checks("myproject.custom_checks")
    _forget_package("myproject")


def test_a_package_of_custom_checks_loads_and_runs_from_yaml(custom_checks, customers, tmp_path, job_counter):
    import yaml

    from cola_core.language.files import read_rules_file

    assert custom_checks == ["custom_row_count_min", "positive_value"]
    rules_file = tmp_path / "checks.yaml"
    rules_file.write_text(yaml.safe_dump([
        {"type": "positive_value", "column": "total", "code": "positive-salary"},
        {"type": "custom_row_count_min", "min_count": 1000, "name": "min-records"},
    ]))
    with job_counter.count() as counted:
        positive, minimum = Cola().run(customers, read_rules_file(rules_file))
    assert counted.jobs == 1  # the custom aggregate joins the single scan
    assert (minimum.passed, minimum.message, minimum.check_name) == (False, "4 rows, at least 1000 expected", "min-records")
    assert (positive.code, positive.message) == ("positive-salary", "positive_value(total): no row breaks the rule")
    _, invalid = Cola().split(customers, read_rules_file(rules_file), annotate="dq")
    assert invalid.count() == 0  # every total is positive


def test_custom_check_config_is_validated_at_load_time(custom_checks):
    with pytest.raises(ColaRuleError) as raised:
        Cola().parse([{"type": "custom_row_count_min", "min_count": 0}])
    assert str(raised.value) == "rules[0] (custom_row_count_min): min_count (0) must be greater than 0"
