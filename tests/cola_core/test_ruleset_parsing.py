"""Rule parsing: every malformed rule is a ColaRuleError naming its position and type,
raised in pure Python before any Spark job."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cola_core import Cola, ColaRuleError
from cola_core.checks import BUILTIN_CHECKS
from cola_core.errors import MAX_LISTED_RULE_ERRORS
from cola_core.language.files import read_rules_file
from cola_core.report.results import summarise
from cola_helpers import THRESHOLD_HINT

KNOWN = (
    "avg, castable, check, distinct_count, duplicate_count, duplicate_percent, expression, foreign_key, freshness, "
    "invalid_count, invalid_percent, max, mean, min, missing_count, missing_percent, not_null, range, reconcile, "
    "reference_match, regex, row_count, schema, sql, stddev, sum, unique, values_present"
)

MALFORMED = [
    ("not a list", 'rules: must be a list of rule objects such as [{"type": "not_null", "columns": ["id"]}], got str'),
    ({"type": "not_null"}, 'rules: must be a list of rule objects such as [{"type": "not_null", "columns": ["id"]}], got dict'),
    ([1], 'rules[0]: each rule is an object with a \'type\', e.g. {"type": "not_null", "columns": ["id"]}, got int'),
    ([{}], "rules[0]: has no 'type' (a non-empty string); got {}"),
    (
        [{"type": "row_count"}, {"type": "nul_null", "columns": ["a"]}],
        f"rules[1] (nul_null): unknown rule type 'nul_null' (did you mean 'not_null'?); known types are {KNOWN}",
    ),
    (
        [{"type": "not_null", "columns": "id"}],
        "rules[0] (not_null): 'columns' must be a non-empty list of column names "
        "(it is always a list, even for one column), got 'id'",
    ),
    ([{"type": "not_null"}], "rules[0] (not_null): missing required parameter 'columns'"),
    # A shared option is checked even when every target gives its own (a reader would read it).
    (
        [{"type": "avg", "column": "id", "must_be": "> 0", "severity": "id", "targets": [{"severity": "fail"}]}],
        "rules[0] (avg): 'severity' must be 'fail' or 'warn', got 'id'",
    ),
    (
        [{"type": "not_null", "name": 5, "targets": [{"columns": ["a"], "name": "a present"}]}],
        "rules[0] (not_null): 'name' must be a non-empty string, got 5",
    ),
    (
        [{"type": "regex", "column": 5, "pattern": "x", "targets": [{"column": "a"}]}],
        "rules[0] (regex): 'column' must be a non-empty string, got 5",
    ),
    (
        [{"type": "not_null", "columns": ["a"], "colum": 1}],
        "rules[0] (not_null): unknown parameter 'colum' (did you mean 'columns'?); "
        "valid parameters are code, columns, description, dimension, id, name, severity, tolerance, where",
    ),
    ([{"type": "not_null", "columns": ["a"], "name": ""}], "rules[0] (not_null): 'name' must be a non-empty string, got ''"),
    (
        [{"type": "range", "column": "a"}],
        "rules[0] (range): needs at least one of 'min' or 'max', e.g. {\"type\": \"range\", \"column\": \"age\", \"min\": 0}",
    ),
    ([{"type": "range", "column": "a", "min": 5, "max": 1}], "rules[0] (range): 'min' (5) is greater than 'max' (1)"),
    (
        [{"type": "range", "column": "a", "min": "yesterday"}],
        "rules[0] (range): 'min' is 'yesterday', which is neither a number nor an ISO date like '2024-01-31'",
    ),
    (
        [{"type": "range", "column": "a", "min": float("nan")}],
        "rules[0] (range): 'min' is nan; a number in a rule must be finite",
    ),
    (
        [{"type": "regex", "column": "a", "pattern": "([a-z"}],
        "rules[0] (regex): 'pattern' is not a valid regex (unterminated character set at position 1)\n    ([a-z\n     ^",
    ),
    (
        [{"type": "missing_percent", "column": "a", "must_be": "< abc"}],
        f"rules[0] (missing_percent): 'must_be' is not a valid threshold: unexpected 'a'; {THRESHOLD_HINT}\n    < abc\n      ^",
    ),
    (
        [{"type": "missing_percent", "column": "a", "must_be": True}],
        "rules[0] (missing_percent): 'must_be' must be a threshold string such as '< 5%' (or a plain number), got True",
    ),
    (
        [{"type": "check", "metric": "avgg", "column": "a", "must_be": "> 1"}],
        "rules[0] (check): unknown metric 'avgg'; a 'check' rule needs 'metric' set to one of avg, distinct_count, "
        "duplicate_count, duplicate_percent, freshness, invalid_count, invalid_percent, max, mean, min, missing_count, "
        "missing_percent, row_count, stddev, sum (or write the metric as the type)",
    ),
    (
        [{"type": "row_count", "min": 1, "must_be": "> 0"}],
        "rules[0] (row_count): mixes the bounds form (min) with the metric form (must_be); "
        'use either {"min": 1, "max": 100} or {"must_be": "between 1 and 100"}',
    ),
    ([{"type": "row_count", "warn": "> 0"}], "rules[0] (row_count): 'warn' needs 'must_be' next to it"),
    ([{"type": "row_count", "min": -1}], "rules[0] (row_count): 'min' must be a whole number >= 0, got -1"),
    (
        [{"type": "avg", "column": "a", "must_be": "< 1d"}],
        "rules[0] (avg): 'must_be' (< 1d) uses a duration unit, which only a freshness rule measures; write a plain number",
    ),
    ([{"type": "avg", "column": "a"}], "rules[0] (avg): missing required parameter 'must_be'"),
    (
        [{"type": "invalid_count", "column": "a", "must_be": "0"}],
        "rules[0] (invalid_count): invalid_count needs at least one validity setting (valid_values, invalid_values, "
        "valid_format, valid_regex, valid_min, valid_max, valid_min_length, valid_max_length, valid_length), "
        'e.g. {"valid_format": "email"}',
    ),
    (
        [{"type": "invalid_count", "column": "a", "must_be": "0", "valid_format": "emial"}],
        "rules[0] (invalid_count): unknown valid_format 'emial'; known formats are alphanumeric, boolean, cnpj, cpf, "
        "credit_card, date, decimal, email, integer, ip, ipv4, number, percentage, phone, timestamp, url, uuid",
    ),
    (
        [{"type": "duplicate_count", "column": "a", "columns": ["b"], "must_be": "0"}],
        "rules[0] (duplicate_count): give 'column' or 'columns', not both",
    ),
    (
        [{"type": "schema"}],
        "rules[0] (schema): needs at least one of 'required_columns', 'forbidden_columns', 'column_types' or "
        "'logical_types', "
        'e.g. {"type": "schema", "required_columns": ["id"]}',
    ),
    (
        [{"type": "sql", "query": "DROP TABLE orders"}],
        "rules[0] (sql): 'query' must be a read-only SELECT or WITH query, but starts with 'DROP'; "
        "Spark would run it as soon as it is parsed",
    ),
    (
        [{"type": "sql", "failed_rows": "SELECT * FROM t; DELETE FROM t"}],
        "rules[0] (sql): 'failed_rows' holds more than one statement; give a single SELECT or WITH query",
    ),
    (
        [{"type": "sql", "query": "WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x"}],
        "rules[0] (sql): 'query' contains 'INSERT', which is not allowed in a read-only query; "
        "quote a column with that name in backticks",
    ),
    (
        [{"type": "sql", "query": "SELECT true", "failed_rows": "SELECT 1"}],
        "rules[0] (sql): uses both 'query' and 'failed_rows'; give exactly one: 'query' returns one boolean "
        "(true = pass), 'failed_rows' returns the offending rows",
    ),
    (
        [{"type": "sql", "query": "SELECT true", "view_name": "my view"}],
        "rules[0] (sql): 'view_name' 'my view' must be a plain identifier such as '_validation_df'",
    ),
]


@pytest.mark.parametrize(("rules", "message"), MALFORMED)
def test_malformed_rules_are_refused_with_position_type_and_fix(rules, message):
    with pytest.raises(ColaRuleError) as raised:
        Cola().parse(rules)
    assert str(raised.value) == message
    assert isinstance(raised.value, ValueError)


def test_error_carries_position_type_and_reason():
    with pytest.raises(ColaRuleError) as raised:
        Cola().parse([{"type": "row_count"}, {"type": "row_count"}, {"type": "range", "column": "a"}])
    error = raised.value
    assert (error.position, error.rule_type, error.target) == (2, "range", None)
    assert error.reason.startswith("needs at least one of 'min' or 'max'")


def test_read_only_sql_allows_keywords_inside_literals_and_comments():
    checks = Cola().parse(
        [
            {"type": "sql", "query": "SELECT COUNT(*) = 0 FROM _validation_df WHERE note = 'DROP; DELETE' -- update\n"},
            {"type": "sql", "failed_rows": "(SELECT * FROM _validation_df WHERE `update` > 0);"},
            {"type": "sql", "query": "with t as (select 1 as x) select count(*) = 1 from t"},
        ]
    )
    assert [c.rule_type for c in checks] == ["sql", "sql", "sql"]


def test_java_only_regex_constructs_are_accepted():
    checks = Cola().parse(
        [
            {"type": "regex", "column": "name", "pattern": r"^\p{Lu}\p{L}+$"},
            {"type": "regex", "column": "name", "pattern": r"\Q(a+b)\E"},
        ]
    )
    assert [c.code for c in checks] == [r"regex(name,^\p{Lu}\p{L}+$)", r"regex(name,\Q(a+b)\E)"]


def test_legacy_check_wrapper_is_normalised_to_the_metric():
    # One block each: in one block the second would measure what the first does, and its
    # code would be told apart with '#2' (test_a_rule_measuring_what_an_earlier_one_does_...).
    (legacy,) = Cola().parse(
        [{"type": "check", "metric": "missing_percent", "column": "cpf", "must_be": "< 5%", "name": "cpf"}]
    )
    (canonical,) = Cola().parse([{"type": "missing_percent", "column": "cpf", "must_be": "< 5%", "name": "cpf"}])
    assert type(legacy) is type(canonical)
    assert (legacy.rule_type, legacy.params, legacy.name, legacy.code) == (
        canonical.rule_type,
        canonical.params,
        canonical.name,
        canonical.code,
    ) == ("missing_percent", {"column": "cpf", "must_be": "< 5%"}, "cpf", "missing_percent(cpf)")


def test_thresholds_may_be_plain_numbers():
    (check,) = Cola().parse([{"type": "duplicate_count", "columns": ["id"], "must_be": 0, "warn": 0.5}])
    assert check.params["must_be"] == 0


def test_available_lists_every_type_and_the_wrapper():
    assert ", ".join(Cola().available) == KNOWN


# Keys and values a careless or hostile rule author might write.
_keys = st.sampled_from(
    [
        "type", "name", "code", "column", "columns", "min", "max", "pattern", "must_be", "warn", "metric",
        "targets", "query", "failed_rows", "view_name", "valid_format", "valid_values", "missing_values",
        "required_columns", "column_types", "error_message", "output", "valid_min", "valid_length", "bogus",
        "severity", "where", "tolerance", "dimension", "expression", "to", "values", "null_is_valid",
    ]
)
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from([*BUILTIN_CHECKS, "check", "< 5%", "between 1 and 2", "SELECT 1", "id", "[", "email", "warn",
                     "int", "decimal(3,1)", "a > b"]),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_keys, inner, max_size=3)),
    max_leaves=6,
)
_rules = st.dictionaries(_keys, _values, max_size=6)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(_rules, _values), max_size=4))
def test_random_rule_blocks_parse_or_raise_cola_rule_error(rules):
    try:
        checks = Cola().parse(rules)
    except ColaRuleError as error:
        assert str(error).startswith(("rules", "rules["))
    else:
        assert all(check.code for check in checks)


@pytest.mark.spark
def test_malformed_block_starts_no_spark_job(spark, job_counter):
    df = spark.createDataFrame([(1, "a")], "id int, email string")
    bad_blocks = [
        [{"type": "row_count", "min": 1}, {"type": "regex", "column": "email", "pattern": "(unclosed"}],
        [{"type": "row_count", "min": 1}, {"type": "not_null", "columns": ["emial"]}],
        [{"type": "sql", "query": "DROP TABLE x"}],
    ]
    for rules in bad_blocks:
        with job_counter.count() as counted, pytest.raises(ColaRuleError):
            Cola().run(df, rules)
        assert counted.jobs == 0
        with job_counter.count() as counted, pytest.raises(ColaRuleError):
            Cola().split(df, rules)
        assert counted.jobs == 0


@pytest.mark.spark
def test_unknown_column_is_a_rule_error_naming_the_rule(spark):
    df = spark.createDataFrame([(1, "a")], "id int, email string")
    with pytest.raises(ColaRuleError) as raised:
        Cola().run(df, [{"type": "row_count"}, {"type": "not_null", "columns": ["id", "emial"]}])
    assert str(raised.value) == "rules[1] (not_null): column 'emial' does not exist; the DataFrame has id, email"


# -- every malformed rule of a block at once ------------------------------------------------

# Six rules, five of them malformed in five ways (one in its second target); rule 0 is fine.
SEVERAL_BAD = """\
- type: row_count
  min: 1
- type: regex
  column: email
  pattern: "([a-z"
- type: not_null
  columns: id
- type: range
  min: 0
  targets:
    - column: age
      max: 120
    - column: amount
      min: 5
      max: 1
- type: missing_percent
  column: cpf
  must_be: "< abc"
- type: nul_null
  columns: [id]
"""
SEVERAL_BAD_ERRORS = [
    "rules[1] (regex): 'pattern' is not a valid regex (unterminated character set at position 1)\n    ([a-z\n     ^",
    "rules[2] (not_null): 'columns' must be a non-empty list of column names (it is always a list, even for one "
    "column), got 'id'",
    "rules[3].targets[1] (range): 'min' (5) is greater than 'max' (1)",
    f"rules[4] (missing_percent): 'must_be' is not a valid threshold: unexpected 'a'; {THRESHOLD_HINT}\n"
    "    < abc\n      ^",
    f"rules[5] (nul_null): unknown rule type 'nul_null' (did you mean 'not_null'?); known types are {KNOWN}",
]
SEVERAL_BAD_MESSAGE = "rules: 5 malformed rules:\n" + "\n".join(f"- {error}" for error in SEVERAL_BAD_ERRORS)


def test_every_malformed_rule_of_a_file_is_reported_at_once_in_rule_order(tmp_path):
    path = tmp_path / "rules.yaml"
    path.write_text(SEVERAL_BAD)
    with pytest.raises(ColaRuleError) as raised:
        Cola().parse(read_rules_file(path))
    error = raised.value
    assert str(error) == SEVERAL_BAD_MESSAGE
    # The error's own fields are the first malformed rule's; every one is on `errors`.
    assert (error.position, error.rule_type, error.target, error.reason) == (
        1, "regex", None, "'pattern' is not a valid regex (unterminated character set at position 1)\n    ([a-z\n     ^"
    )
    assert [str(each) for each in error.errors] == SEVERAL_BAD_ERRORS
    assert [(each.position, each.rule_type, each.target) for each in error.errors] == [
        (1, "regex", None), (2, "not_null", None), (3, "range", 1), (4, "missing_percent", None), (5, "nul_null", None),
    ]
    assert isinstance(error, ValueError)


def test_one_malformed_rule_is_reported_as_before():
    with pytest.raises(ColaRuleError) as raised:
        Cola().parse([{"type": "row_count"}, {"type": "not_null"}])
    assert str(raised.value) == "rules[1] (not_null): missing required parameter 'columns'"
    assert raised.value.errors == (raised.value,)


def test_at_most_twenty_errors_are_listed_and_the_rest_are_counted():
    assert MAX_LISTED_RULE_ERRORS == 20
    listed = [f"- rules[{position}] (not_null): missing required parameter 'columns'" for position in range(20)]
    with pytest.raises(ColaRuleError) as raised:
        Cola().parse([{"type": "not_null"}] * 25)
    assert str(raised.value) == "\n".join(["rules: 25 malformed rules, the first 20:", *listed, "and 5 more"])
    assert [each.position for each in raised.value.errors] == list(range(25))
    with pytest.raises(ColaRuleError) as raised:
        Cola().parse([{"type": "not_null"}] * 20)
    assert str(raised.value) == "\n".join(["rules: 20 malformed rules:", *listed])


def test_errors_of_the_block_as_a_whole_still_stop_at_the_first():
    # The structure pass reads the whole block before any rule: its first problem is the error.
    with pytest.raises(ColaRuleError) as raised:
        Cola().parse([{"type": "not_null"}, {"type": "range", "column": "a", "min": float("nan")}, {"type": "x"}])
    assert str(raised.value) == "rules[1] (range): 'min' is nan; a number in a rule must be finite"
    # Ids are compared once every rule has parsed: a malformed rule is reported first...
    twice = [{"type": "row_count", "id": "rows"}, {"type": "row_count", "min": 1, "id": "rows"}]
    with pytest.raises(ColaRuleError) as raised:
        Cola().parse([*twice, {"type": "not_null"}])
    assert str(raised.value) == "rules[2] (not_null): missing required parameter 'columns'"
    # ...and the id declared twice once it is fixed, as before.
    with pytest.raises(ColaRuleError) as raised:
        Cola().parse([*twice, {"type": "not_null", "columns": ["a"]}])
    assert str(raised.value) == "rules[1] (row_count): 'id' 'rows' is already the id of rules[0]; give each rule its own id"


@pytest.mark.spark
def test_a_block_with_several_malformed_rules_starts_no_spark_job(spark, job_counter, tmp_path):
    df = spark.createDataFrame([(1, "a")], "id int, email string")
    path = tmp_path / "rules.yaml"
    path.write_text(SEVERAL_BAD)
    rules = read_rules_file(path)
    for action in (Cola().run, Cola().split):
        with job_counter.count() as counted, pytest.raises(ColaRuleError) as raised:
            action(df, rules)
        assert (counted.jobs, str(raised.value)) == (0, SEVERAL_BAD_MESSAGE)


# -- codes of a block: rules that measure the same thing are told apart ---------------------


def test_a_rule_measuring_what_an_earlier_one_does_gets_a_suffixed_code_as_its_rule_id():
    checks = Cola().parse([
        {"type": "row_count", "min": 1},
        {"type": "row_count", "must_be": "change between -10% and 10%"},
        {"type": "missing_percent", "column": "cpf", "must_be": "< 5%"},
        {"type": "missing_percent", "column": "cpf", "must_be": "< 1%", "severity": "warn"},
        {"type": "row_count", "max": 100},
    ])
    assert [check.code for check in checks] == [
        "row_count", "row_count#2", "missing_percent(cpf)", "missing_percent(cpf)#2", "row_count#3",
    ]
    assert [check.rule_id.partition("#")[2] for check in checks] == ["", "2", "", "2", "3"]


def test_one_rule_per_code_keeps_its_rendered_code():
    checks = Cola().parse([
        {"type": "row_count", "min": 1},
        {"type": "not_null", "columns": ["id", "email"]},
        {"type": "range", "column": "age", "min": 1, "max": 99},
        {"type": "range", "column": "age", "min": 18},
        {"type": "avg", "column": "amount", "must_be": "> 0"},
        {"type": "unique", "columns": ["order_id", "line_number"]},
    ])
    assert [check.code for check in checks] == [
        "row_count", "not_null(id,email)", "range(age,1,99)", "range(age,18,)", "avg(amount)",
        "unique(order_id,line_number)",
    ]


def test_declared_codes_are_kept_and_may_be_shared_and_rules_measuring_different_things_keep_theirs():
    checks = Cola().parse([
        {"type": "not_null", "columns": ["email"], "code": "CONTACT"},
        {"type": "not_null", "columns": ["phone"], "code": "CONTACT"},
        {"type": "not_null", "columns": ["email"], "code": "CONTACT"},
        {"type": "not_null", "columns": ["email"], "where": "country = 'BR'"},
        {"type": "not_null", "columns": ["email"], "where": "vip"},
        {"type": "row_count", "min": 1, "code": "row_count#2"},
        {"type": "row_count", "min": 1},
        {"type": "row_count", "min": 5},
    ])
    # A suffix is never one the block already has, declared or rendered.
    assert [check.code for check in checks] == [
        "CONTACT", "CONTACT", "CONTACT", "not_null(email)", "not_null(email)", "row_count#2", "row_count", "row_count#3",
    ]


def test_a_multi_column_not_null_measured_twice_suffixes_its_result_and_row_codes():
    first, second = Cola().parse([{"type": "not_null", "columns": ["id", "email"]}] * 2)
    assert (first.code, first.row_codes()) == ("not_null(id,email)", ("not_null(id)", "not_null(email)"))
    assert (second.code, second.row_codes()) == ("not_null(id,email)#2", ("not_null(id)#2", "not_null(email)#2"))


@pytest.mark.spark
def test_two_row_count_rules_report_distinct_codes_in_results_and_asset_events(spark):
    from airflow_provider_cola._outcome import asset_extra

    df = spark.createDataFrame([(1,), (2,), (3,)], "id int")
    results = Cola().run(df, [{"type": "row_count", "min": 1}, {"type": "row_count", "must_be": "> 5"}])
    assert [(r.code, r.severity, r.message) for r in results] == [
        ("row_count", "pass", "row_count = 3 is within bounds (min 1)"),
        ("row_count#2", "fail", "row_count = 3 violates must_be (> 5)"),
    ]
    extra = asset_extra(summarise(results))
    assert (extra["failed_codes"], extra["warned_codes"]) == (["row_count#2"], [])
    assert extra["failed_rule_ids"] == [results[1].rule_id] == [f"{results[0].rule_id}#2"]


# -- the common options: severity, where, tolerance, dimension ------------------------------


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ({"type": "not_null", "columns": ["id"], "severity": "critical"},
         "rules[0] (not_null): 'severity' must be 'fail' or 'warn', got 'critical' "
         "(a 'warn' rule is reported but never fails the block nor quarantines a row)"),
        ({"type": "schema", "required_columns": ["id"], "where": "id > 0"},
         "rules[0] (schema): 'where' does not apply to a schema rule; it reads no rows"),
        ({"type": "sql", "query": "SELECT true", "where": "id > 0"},
         "rules[0] (sql): 'where' does not apply to a sql rule; put the condition in the query's own WHERE"),
        ({"type": "not_null", "columns": ["id"], "where": "id > 0; DROP TABLE t"},
         "rules[0] (not_null): 'where' must be one SQL expression such as \"amount > 0\", but holds a ';'"),
        ({"type": "missing_count", "column": "id", "must_be": "0", "tolerance": "< 1%"},
         "rules[0] (missing_count): 'tolerance' applies to row rules that count offending rows (not_null, unique, "
         "range, regex, expression, castable, foreign_key, reference_match); a metric rule sets its limit with 'must_be'"),
        ({"type": "not_null", "columns": ["id"], "tolerance": "< 1d"},
         "rules[0] (not_null): 'tolerance' (< 1d) is a share of rows, such as '< 1%', not a duration"),
        ({"type": "not_null", "columns": ["id"], "tolerance": "lots"},
         "rules[0] (not_null): 'tolerance' is not a valid threshold: unexpected 'l'; a threshold looks like "
         "'< 5%', '>= 10', 'between 1 and 2' or '< 1d'\n    lots\n    ^"),
        ({"type": "not_null", "columns": ["id"], "dimension": ""},
         "rules[0] (not_null): 'dimension' must be a non-empty string, got ''"),
    ],
)
def test_malformed_common_options_are_refused(rule, message):
    with pytest.raises(ColaRuleError) as raised:
        Cola().parse([rule])
    assert str(raised.value) == message
