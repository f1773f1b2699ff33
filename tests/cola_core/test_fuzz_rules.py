"""Hostile rule blocks: nothing but a ColaRuleError or a clean list of results ever comes out.

The engine's promise (SPEC sections 6 and 7): a malformed rule is a ``ColaRuleError`` before
any Spark job, bad data is measured, and a rule cannot write. Hypothesis feeds it:

- random structures (``st.recursive``): odd keys, odd nesting, huge and non-finite numbers,
  bytes, sets, dates, self-references and very deep lists;
- every registered rule type, built valid and then mutated with values drawn from hostile
  pools: column names (``a.b``, ``first name``, a backtick), patterns that Java refuses or
  that backtrack, conditions (non-boolean, random, aggregates, windows, JVM calls), SQL text
  (writes hidden behind comments and raw strings, path relations, commands).

The parse-only properties run many examples; the Spark one runs few, on a three-row frame
whose columns have hostile names, and also checks that a canary file outside the data is
never touched (rules are read-only).
"""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cola_core import BaseCheck, CheckResult, Cola, ColaRuleError
from cola_core.errors import ColaSourceError
from cola_core.ruleset.parsing import COMMON_KEYS
from cola_helpers import JobCounter

# -- hostile pools ----------------------------------------------------------------------------


class _Huge(int):
    """An int of thousands of digits that hypothesis can still print in a falsifying example
    (repr of a plain one raises ValueError beyond 4,300 digits); the engine sees an int."""

    def __repr__(self) -> str:
        return f"{'-' if self < 0 else ''}<int of about {abs(int(self)).bit_length() * 30103 // 100000 + 1} digits>"


NAMES = ["id", "a.b", "first name", "we`ird", "name", "`", "``", "`a.b`", "a.b.c", "missing", "", " ",
         "*", "st.x", "x" * 300, "ünï", "col\n", "1", "_validation_df", "id; DROP TABLE t"]
NUMBERS = [0, -1, 1, 5, 2**31, 2**63 - 1, 2**63, -(2**63) - 1, 10**38 - 1, 10**38, _Huge(10**5000), _Huge(-(10**4400)),
           0.5, -0.0, 1e-320, 1.5e308, float("nan"), float("inf"), float("-inf"), True, False,
           Decimal("1.5"), Decimal("NaN"), Decimal("1E+400"), Decimal("0." + "1" * 40)]
THRESHOLDS = ["< 5%", "> 0", "= 0", "between 1 and 2", "not between 0 and 1", "< 1d", "< inf", "> nan",
              "< 1e400", "between 1 and " + "9" * 5000, "< " + "9" * 38, "<", "", " ", "between 2 and 1", "5%"]
PATTERNS = ["^[a-z]+$", "^a{,5}$", "(?<my_name>x)", r"\p{NotAProperty}", r"\p{Alpha}", r"\Q.\E", "(a+)+$",
            "(a|a)*b", "([a-z", "", "^.*$", "(?i)x", "[[:alpha:]]", "a{99999}", "\\", "(?P<n>x)", "\\Z", "$"]
CONDITIONS = ["id > 0", "name", "rand() < 0.5", "count(*) > 1", "row_number() over (order by id) = 1",
              "id > 0; DROP TABLE t", "reflect('java.lang.System', 'getProperty', 'user.home') = 'x'",
              "java_method('java.lang.System', 'getenv', 'HOME') IS NULL", "1 = 1 --", "/* */ 1 = 1",
              "'", "`a.b` > 0", "`first name` = 'x'", "id IN (SELECT 1 FROM text.`/etc/passwd`)", "true",
              "id >", "(", "d > '2022-02-30'", "current_timestamp() > ts", "`we``ird` IS NULL", ""]
VICTIM = Path("/tmp/cola-fuzz-victim")  # a canary dir that a write hidden in SQL would replace
SQL = ["SELECT count(*) > 0 FROM _validation_df", "SELECT * FROM _validation_df WHERE id < 0",
       f"WITH a AS (SELECT 1) -- it's\nINSERT OVERWRITE DIRECTORY '{VICTIM}' SELECT 1",
       f"SELECT r'\\' AS x FROM _validation_df; INSERT OVERWRITE DIRECTORY '{VICTIM}' SELECT 1",
       "SELECT * FROM text.`/etc/passwd`", "SELECT * FROM binaryFile.`/etc`",
       "SELECT reflect('java.lang.System', 'getProperty', 'user.home') = 'x'",
       "SELECT * FROM read_files('/etc/hostname')", "CREATE TEMP VIEW v AS SELECT 1", "SET spark.x = 1",
       "SELEC 1", "", "SELECT 1 /* unclosed", "SELECT '", "DROP VIEW _validation_df", "SELECT `a.b` FROM _validation_df",
       "SELECT 1; SELECT 2", "VALUES (true)", "SELECT true FROM range(10)", "CACHE TABLE _validation_df"]
REFERENCES = ([{"query": "SELECT 1 AS id"}] + [{"query": text} for text in SQL[2:8]]
              + [{"table": "no_such_table"}, {"path": "/no/such/path", "format": "csv"}, {}, {"query": 1}])
TYPES = ["date", "int", "bigint", "decimal(38,0)", "decimal(99,0)", "string", "nope", "", "map<string,int>"]

# A valid rule of every built-in type, over the frame below.
BASE = {
    "avg": {"column": "id", "must_be": "> 0"},
    "castable": {"column": "d", "to": "date"},
    "check": {"metric": "missing_count", "column": "id", "must_be": 0},
    "distinct_count": {"columns": ["id"], "must_be": "> 0"},
    "duplicate_count": {"column": "id", "must_be": 0},
    "duplicate_percent": {"columns": ["id", "name"], "must_be": "< 5%"},
    "expression": {"expression": "id > 0"},
    "foreign_key": {"column": "id", "reference": {"query": "SELECT 1 AS id"}, "reference_columns": ["id"]},
    "freshness": {"column": "ts", "must_be": "< 1d"},
    "invalid_count": {"column": "name", "valid_regex": "^[a-z]+$", "must_be": 0},
    "invalid_percent": {"column": "d", "valid_format": "date", "must_be": "< 5%"},
    "max": {"column": "id", "must_be": "< 100"},
    "mean": {"column": "a.b", "must_be": "< 100"},
    "min": {"column": "id", "must_be": "< 100"},
    "missing_count": {"column": "name", "must_be": 0},
    "missing_percent": {"column": "first name", "must_be": "< 1%"},
    "not_null": {"columns": ["id"]},
    "range": {"column": "id", "min": 0, "max": 10},
    "reconcile": {"aggregate": "sum", "column": "id", "reference": {"query": "SELECT 1 AS id"},
                  "reference_column": "id", "must_be": "= 0"},
    "reference_match": {"keys": ["id"], "columns": ["name"], "reference": {"query": "SELECT 1 AS id, 'ann' AS name"},
                        "missing": "ignore"},
    "regex": {"column": "name", "pattern": "^[a-z]+$", "null_is_valid": True},
    "row_count": {"min": 1},
    "schema": {"required_columns": ["id"]},
    "sql": {"query": "SELECT count(*) > 0 FROM _validation_df"},
    "stddev": {"column": "id", "must_be": "< 100"},
    "sum": {"column": "id", "must_be": "< 100"},
    "unique": {"columns": ["id"]},
    "values_present": {"column": "name", "values": ["ann"]},
}

# Which pool a key draws from; any other key draws from every pool.
_BY_KEY = {
    "column": NAMES, "reference_column": NAMES, "to": TYPES, "aggregate": ["sum", "count", "avg", "nope", ""],
    "pattern": PATTERNS, "valid_regex": PATTERNS, "valid_format": ["date", "email", "ip", "nope", ""],
    "where": CONDITIONS, "expression": CONDITIONS, "reference_where": CONDITIONS, "difference": ["absolute", "relative", "x"],
    "query": SQL, "failed_rows": SQL, "view_name": NAMES, "must_be": THRESHOLDS, "warn": THRESHOLDS, "tolerance": THRESHOLDS,
    "min": [*NUMBERS, "2024-01-31", "2022-02-30", "yesterday"], "max": [*NUMBERS, "2024-01-31", "2022-02-30"],
    "valid_min": NUMBERS, "valid_max": NUMBERS, "valid_length": NUMBERS, "valid_min_length": NUMBERS,
    "valid_max_length": NUMBERS, "reference": REFERENCES, "severity": ["fail", "warn", "WARN", ""],
    "absolute_difference": [{"id": 1}, {"id": -1}, {"name": 0.5}, {"id": "x"}, {"id": True}, {"nope": 1}, {}],
    "relative_difference": [{"id": 50}, {"id": float("nan")}, {"name": 1}, {}], "missing": ["fail", "ignore", "x", ""],
    "null_is_valid": [True, False, "yes"],
}
_LIST_KEYS = ("columns", "keys", "reference_keys", "reference_columns", "required_columns", "forbidden_columns", "values",
              "valid_values", "invalid_values", "missing_values")
_ANY = NAMES + NUMBERS + THRESHOLDS + PATTERNS + CONDITIONS + SQL + [None, [], {}, ["id"], {"x": 1}, b"id", {"id"}]


def _value_for(key: str) -> st.SearchStrategy:
    if key in _LIST_KEYS:
        return st.lists(st.sampled_from(NAMES + NUMBERS + [None, dt.date(2024, 1, 31)]), max_size=3)
    if key == "column_types":
        return st.dictionaries(st.sampled_from(NAMES), st.sampled_from(TYPES), max_size=2)
    pool = _BY_KEY.get(key, _ANY)
    return st.one_of(st.sampled_from(pool), st.sampled_from(_ANY)) if pool is not _ANY else st.sampled_from(_ANY)


@st.composite
def mutated_rules(draw, types: list[str], most: int = 3) -> dict:
    """A valid rule of a registered type, with one to ``most`` keys set, removed or put in targets."""
    rule_type = draw(st.sampled_from(types))
    rule = {"type": rule_type, **BASE.get(rule_type, {})}
    keys = sorted({*rule, *COMMON_KEYS, *_BY_KEY, *_LIST_KEYS, "targets", "metric", "colum"} - {"output"})
    for _ in range(draw(st.integers(1, most))):
        key = draw(st.sampled_from(keys))
        action = draw(st.sampled_from(["set", "set", "set", "delete", "target"]))
        if action == "delete":
            rule.pop(key, None)
        elif action == "target":
            rule["targets"] = draw(st.lists(st.fixed_dictionaries({key: _value_for(key)}), min_size=1, max_size=2))
        else:
            rule[key] = draw(_value_for(key))
    return rule


# -- random structures ------------------------------------------------------------------------

_KEYS = st.one_of(st.sampled_from(sorted({*COMMON_KEYS, *_BY_KEY, "columns", "targets", "metric"})),
                  st.text(max_size=4), st.integers(), st.none(), st.booleans(), st.tuples(st.text(max_size=2)),
                  st.just(_Huge(10**5000)), st.floats())
_LEAVES = st.one_of(st.none(), st.booleans(), st.integers(), st.sampled_from(NUMBERS), st.floats(),
                    st.text(max_size=8), st.sampled_from(NAMES + SQL + CONDITIONS + PATTERNS), st.binary(max_size=3),
                    st.dates(), st.datetimes(), st.decimals(), st.frozensets(st.integers(), max_size=2))
_VALUES = st.recursive(
    _LEAVES, lambda children: st.lists(children, max_size=3) | st.dictionaries(_KEYS, children, max_size=3), max_leaves=12
)


@st.composite
def odd_structures(draw, types: list[str]):
    """Rules whose shape is hostile: random keys and values, self-references, deep nesting."""
    rule = draw(st.dictionaries(_KEYS, _VALUES, max_size=4))
    if draw(st.booleans()):
        rule["type"] = draw(st.sampled_from(types))
    shape = draw(st.sampled_from(["plain", "self", "deep", "shared"]))
    if shape == "self":
        rule[draw(st.sampled_from(["columns", "targets", "values", 1]))] = rule
    elif shape == "deep":
        nested: list = []
        for _ in range(draw(st.sampled_from([2, 31, 33, 5000]))):
            nested = [nested]
        rule["columns"] = nested
    elif shape == "shared":
        shared = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=2))
        rule["columns"] = shared
        rule["targets"] = [{"columns": shared}]
    return rule


def blocks(types: list[str]) -> st.SearchStrategy:
    rule = st.one_of(mutated_rules(types), odd_structures(types))
    return st.one_of(st.lists(rule, max_size=3), _VALUES)


# -- properties -------------------------------------------------------------------------------

COLA = Cola()
TYPES_AVAILABLE = COLA.available


def parsed_or_refused(rules) -> list[BaseCheck] | None:
    """The checks of a block, or None when it is refused: any other outcome fails the test."""
    try:
        checks = COLA.parse(rules)
    except ColaRuleError as error:
        message = str(error)
        assert message.startswith("rules") and error.reason in message
        return None
    assert all(isinstance(check, BaseCheck) for check in checks)
    return checks


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(blocks(TYPES_AVAILABLE))
def test_parse_gives_checks_or_a_rule_error_for_any_block(rules):
    parsed_or_refused(rules)


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(mutated_rules(TYPES_AVAILABLE), min_size=1, max_size=4))
def test_mutated_rules_of_every_type_parse_or_are_refused(rules):
    checks = parsed_or_refused(rules)
    if checks is not None:
        assert len(checks) >= len(rules)  # targets only ever add rules


SCHEMA = jsonschema.Draft202012Validator(COLA.rules_schema())


def _as_an_editor_reads_it(value):
    """A block as text tools read its file: a YAML date is text to them (``check-jsonschema``,
    VS Code); a Python date has no JSON form."""
    if isinstance(value, dict):
        return {key: _as_an_editor_reads_it(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_as_an_editor_reads_it(item) for item in value]
    return value.isoformat() if isinstance(value, (dt.date, dt.datetime)) else value


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(mutated_rules(TYPES_AVAILABLE), min_size=1, max_size=4))
def test_the_rules_schema_accepts_every_block_the_parser_accepts(rules):
    if parsed_or_refused(rules) is not None:
        assert [error.message for error in SCHEMA.iter_errors(_as_an_editor_reads_it(rules))] == []


@pytest.fixture(scope="module")
def hostile_frame(spark):
    return make_hostile_frame(spark)


def make_hostile_frame(spark):
    """Three rows, columns named with a dot, a space and a backtick, and an impossible date."""
    from pyspark.sql import types as T

    schema = T.StructType([
        T.StructField("id", T.IntegerType()), T.StructField("a.b", T.IntegerType()),
        T.StructField("first name", T.StringType()), T.StructField("we`ird", T.StringType()),
        T.StructField("name", T.StringType()), T.StructField("d", T.StringType()),
        T.StructField("ts", T.TimestampType()),
    ])
    now = dt.datetime(2024, 1, 31, 10)
    rows = [(1, 2, "ann lee", "x\n", "ann", "2024-01-31", now), (2, None, None, "`", "bob", "2022-02-30", None),
            (None, 3, "ü", None, None, "not a date", now)]
    return spark.createDataFrame(rows, schema)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large])
@given(rules=st.lists(mutated_rules(TYPES_AVAILABLE, most=1), min_size=1, max_size=2))
def test_running_hostile_rules_gives_clean_results_or_a_rule_error_before_any_job(spark, hostile_frame, rules):
    VICTIM.mkdir(exist_ok=True)
    canary = VICTIM / "canary"
    canary.write_text("still here")
    counter = JobCounter(spark)
    refused = False
    with counter.count() as jobs:
        try:
            results = Cola().run(hostile_frame, rules)
        except ColaRuleError:
            refused = True
        except ColaSourceError as error:
            # A reference that names a missing table or path is not a malformed rule, but it
            # is still a clean error that names the rule, raised before any job.
            assert str(error).startswith("rules["), str(error)
            refused = True
    if refused:
        assert jobs.jobs == 0, "a malformed rule must be refused before any Spark job"
    else:
        assert len(results) == len(COLA.parse(rules))
        for result in results:
            assert isinstance(result, CheckResult)
            str(result)
            json.dumps(result.to_dict(), allow_nan=False)
    assert canary.read_text() == "still here", "a rule wrote outside the data"
