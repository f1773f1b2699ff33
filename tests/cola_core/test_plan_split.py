"""The valid/invalid split: codes beside each rejected row, targets, and the partition law."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cola_core import Cola, ColaError, ColaSplit
from cola_helpers import codes_of, sorted_rows

pytestmark = [pytest.mark.spark, pytest.mark.connect]


def _rows(df, *columns):
    return sorted_rows(tuple(row[c] for c in columns) for row in df.collect())


def test_seed_example_codes_beside_each_rejected_row(spark):
    people = spark.createDataFrame(
        [(1, "a@x.com", 30), (7, "g@x.com", 150), (8, None, 40)], "id int, email string, age int"
    )
    valid, invalid = Cola().split(
        people,
        [
            {"type": "not_null", "columns": ["id", "email"]},
            {"type": "range", "column": "age", "min": 1, "max": 99, "code": "AGE_RANGE"},
        ],
        annotate="dq_codes",
    )
    assert _rows(valid, "id") == [(1,)]
    assert _rows(invalid, "id", "dq_codes") == sorted_rows([(7, ["AGE_RANGE"]), (8, ["not_null(email)"])])
    assert valid.schema == people.schema
    assert invalid.schema.simpleString() == "struct<id:int,email:string,age:int,dq_codes:array<string>>"


def test_split_is_a_named_tuple_and_invalid_keeps_the_input_schema_without_annotate(spark):
    df = spark.createDataFrame([(1,), (None,)], "id int")
    result = Cola().split(df, [{"type": "not_null", "columns": ["id"]}])
    assert isinstance(result, ColaSplit)
    assert result.valid is result[0] and result.invalid is result[1]
    assert result.invalid.schema == df.schema
    assert _rows(result.invalid, "id") == [(None,)]


def test_codes_follow_rule_order_and_each_rule_owns_its_rows(spark):
    df = spark.createDataFrame(
        [(1, None, "123", -5.0), (1, "x@y.io", None, 7.0), (2, "bad", "12345678901", None), (3, "ok@y.io", "12345678901", 1.0)],
        "id int, email string, cpf string, amount double",
    )
    rules = [
        {"type": "unique", "columns": ["id"]},
        {"type": "range", "column": "amount", "min": 0},
        {"type": "regex", "column": "cpf", "pattern": "^[0-9]{11}$"},
        {"type": "missing_count", "column": "email", "must_be": "= 0"},
        {"type": "invalid_count", "column": "email", "valid_format": "email", "must_be": "= 0"},
        {"type": "row_count", "min": 100},
        {"type": "avg", "column": "amount", "must_be": "> 1000"},
        {"type": "duplicate_count", "columns": ["id"], "must_be": "= 0"},
        {"type": "schema", "required_columns": ["nope"]},
        {"type": "sql", "query": "SELECT false"},
    ]
    valid, invalid = Cola().split(df, rules, annotate="dq_codes")
    assert _rows(valid, "id", "email") == [(3, "ok@y.io")]
    assert _rows(invalid, "id", "email", "dq_codes") == sorted_rows([
        (1, None, ["unique(id)", "range(amount,0,)", "regex(cpf,^[0-9]{11}$)", "missing_count(email)"]),
        (1, "x@y.io", ["unique(id)", "regex(cpf,^[0-9]{11}$)"]),
        (2, "bad", ["invalid_count(email)"]),
    ])


def test_null_never_breaks_range_alone_but_breaks_regex_and_not_null(spark):
    df = spark.createDataFrame([(None, None)], "age int, doc string")
    _, only_range = Cola().split(df, [{"type": "range", "column": "age", "min": 1}], annotate="c")
    assert only_range.count() == 0
    _, invalid = Cola().split(
        df,
        [{"type": "regex", "column": "doc", "pattern": "x"}, {"type": "not_null", "columns": ["age"]}],
        annotate="c",
    )
    assert _rows(invalid, "c") == [(["regex(doc,x)", "not_null(age)"],)]


def test_unique_marks_every_row_of_a_repeated_key_null_keys_included(spark):
    df = spark.createDataFrame([(1, "a"), (1, "b"), (None, "c"), (None, "d"), (2, "e")], "id int, tag string")
    valid, invalid = Cola().split(df, [{"type": "unique", "columns": ["id"]}])
    assert _rows(valid, "tag") == [("e",)]
    assert _rows(invalid, "tag") == sorted_rows([("a",), ("b",), ("c",), ("d",)])


def test_with_no_row_level_rule_every_row_is_valid(spark):
    df = spark.createDataFrame([(1,), (None,)], "id int")
    valid, invalid = Cola().split(df, [{"type": "row_count", "min": 5}], annotate="dq_codes")
    assert valid.count() == 2
    assert invalid.count() == 0
    assert invalid.columns == ["id", "dq_codes"]


def test_targets_expand_into_independent_rules_with_their_own_codes(spark):
    df = spark.createDataFrame(
        [("12345678901", "123456789012", 5, 30), ("1", "123456789012", 2000, 121)],
        "document string, document2 string, id int, age int",
    )
    rules = [
        {"type": "regex", "targets": [
            {"column": "document", "pattern": "^[0-9]{11}$"},
            {"column": "document2", "pattern": "^[0-9]{12}$"},
        ]},
        {"type": "range", "min": 1, "targets": [{"column": "id", "max": 1000}, {"column": "age", "max": 120}]},
    ]
    results = Cola().run(df, rules)
    assert [(r.code, r.passed, r.failed_count) for r in results] == [
        ("regex(document,^[0-9]{11}$)", False, 1),
        ("regex(document2,^[0-9]{12}$)", True, 0),
        ("range(id,1,1000)", False, 1),
        ("range(age,1,120)", False, 1),
    ]
    _, invalid = Cola().split(df, rules, annotate="dq_codes")
    assert _rows(invalid, "document", "dq_codes") == [
        ("1", ["regex(document,^[0-9]{11}$)", "range(id,1,1000)", "range(age,1,120)"])
    ]


def test_a_target_overrides_the_shared_defaults_and_keeps_its_own_code(spark):
    df = spark.createDataFrame([(0, 0)], "a int, b int")
    rules = [{"type": "range", "min": 1, "targets": [{"column": "a", "code": "A_LOW"}, {"column": "b", "min": 0}]}]
    assert [(r.code, r.passed) for r in Cola().run(df, rules)] == [("A_LOW", False), ("range(b,0,)", True)]


def test_not_null_result_code_and_per_column_row_codes(spark):
    df = spark.createDataFrame([(None, None), (1, None)], "id int, email string")
    rules = [{"type": "not_null", "columns": ["id", "email"]}]
    (result,) = Cola().run(df, rules)
    assert (result.code, result.failed_count) == ("not_null(id,email)", 3)
    _, invalid = Cola().split(df, rules, annotate="why")
    assert _rows(invalid, "id", "why") == sorted_rows([(None, ["not_null(id)", "not_null(email)"]), (1, ["not_null(email)"])])


def test_declared_code_is_used_for_every_column_of_a_multi_column_not_null(spark):
    df = spark.createDataFrame([(None, None)], "id int, email string")
    _, invalid = Cola().split(df, [{"type": "not_null", "columns": ["id", "email"], "code": "MANDATORY"}], annotate="c")
    assert _rows(invalid, "c") == [(["MANDATORY"],)]


def test_rules_measuring_the_same_thing_are_told_apart_in_the_rows_as_in_the_results(spark):
    df = spark.createDataFrame([(None, None), (1, None), (2, "b@x")], "id int, email string")
    rules = [
        {"type": "not_null", "columns": ["id", "email"]},
        {"type": "not_null", "columns": ["id", "email"], "dimension": "Completeness"},
        {"type": "not_null", "columns": ["email"], "where": "id > 0"},
    ]
    assert [(r.code, r.failed_count) for r in Cola().run(df, rules)] == [
        ("not_null(id,email)", 3), ("not_null(id,email)#2", 3), ("not_null(email)", 1),
    ]
    valid, invalid = Cola().split(df, rules, annotate="why")
    assert _rows(valid, "id") == [(2,)]
    # The third rule measures something else (its own scope): its code is the first rule's
    # row code, and a row breaking both carries it once.
    assert _rows(invalid, "id", "why") == sorted_rows([
        (None, ["not_null(id)", "not_null(email)", "not_null(id)#2", "not_null(email)#2"]),
        (1, ["not_null(email)", "not_null(email)#2"]),
    ])


def test_a_passing_metric_rule_still_sends_its_offending_rows_to_quarantine(spark):
    """The split follows the rows, not the verdict (README, "Codes and the quarantine")."""
    orders = spark.createDataFrame(
        [(1, "ann@example.com"), (2, "bob@example.com"), (3, "not an email"), (4, None)], "order_id int, email string"
    )
    rules = [
        {"type": "invalid_percent", "column": "email", "valid_format": "email", "must_be": "< 50%"},
        {"type": "missing_count", "column": "email", "must_be": "<= 1"},
    ]
    assert [str(result) for result in Cola().run(orders, rules)] == [
        "[PASS] check: invalid_percent(email) = 25 meets must_be (< 50%)",
        "[PASS] check: missing_count(email) = 1 meets must_be (<= 1)",
    ]
    valid, invalid = Cola().split(orders, rules, annotate="dq_codes")
    assert _rows(valid, "order_id") == [(1,), (2,)]
    assert _rows(invalid, "order_id", "dq_codes") == [(3, ["invalid_percent(email)"]), (4, ["missing_count(email)"])]


def test_split_reads_the_input_once_in_one_job_and_its_outputs_read_what_it_kept(spark, job_counter, tmp_path):
    """Both outputs come from one evaluation of the rows and their codes (localCheckpoint), so
    they partition an input that would not be the same twice; reading them reads no source."""
    source = str(tmp_path / "orders")
    spark.createDataFrame([(1, "a"), (1, None), (2, "b")], "id int, email string").write.parquet(source)
    df = spark.read.parquet(source)
    rules = [{"type": "unique", "columns": ["id"]}, {"type": "not_null", "columns": ["email"]}]
    with job_counter.count() as counted:
        valid, invalid = Cola().split(df, rules, annotate="dq_codes")
    assert (counted.jobs, counted.input_records) == (1, 3)
    shutil.rmtree(source)  # the source is gone: the outputs read what the split kept
    assert sorted(tuple(row) for row in valid.collect()) == [(2, "b")]
    assert sorted((tuple(row) for row in invalid.collect()), key=lambda row: str(row[1])) == [
        (1, None, ["unique(id)", "not_null(email)"]), (1, "a", ["unique(id)"]),
    ]


def test_annotate_name_must_be_new(spark):
    df = spark.createDataFrame([(1,)], "id int")
    with pytest.raises(ColaError, match=r"annotate column 'ID' already exists in the DataFrame; choose another name"):
        Cola().split(df, [{"type": "not_null", "columns": ["id"]}], annotate="ID")


# --- the partition law, over generated rows and generated row-level rule blocks ----------

_ids = st.one_of(st.none(), st.integers(min_value=0, max_value=3))
_ages = st.one_of(st.none(), st.sampled_from([-1, 0, 1, 17, 18, 99, 100]))
_emails = st.one_of(st.none(), st.sampled_from(["", "a@x", "ab@x", "b@y", "N/A", "zz"]))
_row = st.tuples(_ids, _ages, _emails)

# Key 2 is missing and key 3 is held twice; key 1 has a NULL age.
MATCH_ROWS = [(0, 18, "a@x"), (1, None, "ab@x"), (3, 99, "zz"), (3, 100, "zz")]
MATCH_REFERENCE = ("SELECT * FROM VALUES (0, 18, 'a@x'), (1, CAST(NULL AS INT), 'ab@x'), (3, 99, 'zz'), (3, 100, 'zz') "
                   "AS t(k, a, e)")

_rule_pool = [
    {"type": "not_null", "columns": ["id"]},
    {"type": "not_null", "columns": ["age", "email"]},
    {"type": "unique", "columns": ["id"]},
    {"type": "unique", "columns": ["id", "email"]},
    {"type": "range", "column": "age", "min": 0, "max": 99},
    {"type": "range", "column": "age", "min": 18},
    {"type": "range", "column": "age", "max": 17, "code": "TOO_OLD"},
    {"type": "regex", "column": "email", "pattern": "^[a-b]+@x$"},
    {"type": "missing_count", "column": "email", "missing_values": ["", "N/A"], "must_be": "= 0"},
    {"type": "invalid_count", "column": "age", "valid_values": [0, 1, 18], "must_be": "= 0"},
    {"type": "invalid_percent", "column": "email", "valid_min_length": 2, "missing_values": [""], "must_be": "< 50%"},
    {"type": "row_count", "min": 3},
    {"type": "avg", "column": "age", "must_be": "> 10"},
    {"type": "expression", "expression": "age >= id"},
    {"type": "expression", "expression": "age >= id", "null_is_valid": True, "code": "AGE_VS_ID"},
    {"type": "castable", "column": "email", "to": "int"},
    {"type": "not_null", "columns": ["email"], "where": "age > 17"},
    {"type": "range", "column": "age", "min": 18, "severity": "warn"},
    {"type": "foreign_key", "column": "id", "reference": {"query": "SELECT * FROM VALUES (0), (1), (2) AS t(id)"}},
    {"type": "reference_match", "keys": ["id"], "reference_keys": ["k"], "columns": ["age", "email"],
     "reference_columns": ["a", "e"], "reference": {"query": MATCH_REFERENCE}, "absolute_difference": {"age": 1}},
    {"type": "reference_match", "keys": ["id"], "reference_keys": ["k"], "columns": ["age"], "reference_columns": ["a"],
     "reference": {"query": MATCH_REFERENCE}, "relative_difference": {"age": 1}, "missing": "ignore",
     "where": "age > 17", "code": "REF_AGE"},
]


def _match_codes(row, rule):
    """reference_match against MATCH_ROWS, read plainly: NULL equals NULL, tolerances inclusive."""
    def code(part):
        return rule.get("code", f"reference_match({part})")

    if row["id"] is None:
        return []
    found = [ref for ref in MATCH_ROWS if ref[0] == row["id"]]
    if not found:
        return [code("missing")] if rule.get("missing", "fail") == "fail" else []
    if len(found) > 1:
        return [code("duplicate_key")]
    reference = dict(zip(["a", "e"], found[0][1:], strict=True))
    codes = []
    for column, reference_column in zip(rule["columns"], rule["reference_columns"], strict=True):
        mine, theirs = row[column], reference[reference_column]
        agree = mine == theirs
        limits = {**rule.get("absolute_difference", {}), **rule.get("relative_difference", {})}
        if not agree and mine is not None and theirs is not None and column in limits:
            gap = abs(mine - theirs)
            agree = gap <= rule.get("absolute_difference", {}).get(column, -1) or (
                gap * 100 <= rule.get("relative_difference", {}).get(column, -1) * abs(theirs)
            )
        if not agree:
            codes.append(code(column))
    return codes


def _code_suffixes(rules):
    """'#2', '#3'... for a rule without a declared code that measures what an earlier such rule
    measures (in this pool: the same rule but for its severity), '' for the others. In this
    pool no suffix clashes with another code, so the first free number is the count."""
    seen = Counter()
    suffixes = []
    for rule in rules:
        measured = json.dumps({k: v for k, v in rule.items() if k != "severity"}, sort_keys=True)
        if "code" in rule:
            suffixes.append("")
            continue
        seen[measured] += 1
        suffixes.append("" if seen[measured] == 1 else f"#{seen[measured]}")
    return suffixes


# The oracle reads every rule type's row semantics in one place, one branch per type, so that
# it can be compared with the engine's at a glance.
def _oracle(rows, rules):  # noqa: C901
    """Plain-Python reading of each rule's row semantics: the codes every row breaks."""
    def count(key):
        return Counter(tuple(r[k] for k in key) for r in rows)

    suffixes = _code_suffixes(rules)
    expected = []
    for row in rows:
        codes = []
        for rule, suffix in zip(rules, suffixes, strict=True):
            broken_before = len(codes)
            kind = rule["type"]
            if rule.get("severity") == "warn":
                continue  # a warn rule never quarantines a row
            if rule.get("where") == "age > 17" and not (row["age"] is not None and row["age"] > 17):
                continue  # outside the rule's scope
            if kind == "not_null":
                codes += [f"not_null({c})" for c in rule["columns"] if row[c] is None]
            elif kind == "unique":
                key = tuple(rule["columns"])
                if count(key)[tuple(row[k] for k in key)] > 1:
                    codes.append(f"unique({','.join(key)})")
            elif kind == "range":
                value = row[rule["column"]]
                low, high = rule.get("min"), rule.get("max")
                if value is not None and ((low is not None and value < low) or (high is not None and value > high)):
                    bounds = ",".join("" if b is None else str(b) for b in (low, high))
                    codes.append(rule.get("code", f"range({rule['column']},{bounds})"))
            elif kind == "regex":
                value = row[rule["column"]]
                if value is None or not re.search(rule["pattern"], value):
                    codes.append(f"regex({rule['column']},{rule['pattern']})")
            elif kind.startswith("missing_"):
                value = row[rule["column"]]
                if value is None or value in rule.get("missing_values", []):
                    codes.append(f"{kind}({rule['column']})")
            elif kind == "expression":
                holds = None if row["age"] is None or row["id"] is None else row["age"] >= row["id"]
                if not (holds if holds is not None else rule.get("null_is_valid", False)):
                    codes.append(rule.get("code", f"expression({rule['expression']})"))
            elif kind == "castable":
                value = row[rule["column"]]
                if value is not None and not value.strip().lstrip("+-").isdigit():
                    codes.append(f"castable({rule['column']},int)")
            elif kind == "reference_match":
                codes += _match_codes(row, rule)
            elif kind == "foreign_key":
                if row["id"] is not None and row["id"] not in (0, 1, 2):
                    codes.append("foreign_key(id)")
            elif kind.startswith("invalid_"):
                value = row[rule["column"]]
                present = value is not None and value not in rule.get("missing_values", [])
                valid = ("valid_values" not in rule or value in rule["valid_values"]) and (
                    "valid_min_length" not in rule or len(str(value)) >= rule["valid_min_length"]
                )
                if present and not valid:
                    codes.append(f"{kind}({rule['column']})")
            codes[broken_before:] = [code + suffix for code in codes[broken_before:]]
        expected.append(list(dict.fromkeys(codes)))
    return expected


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(
    rows=st.lists(_row, max_size=12),
    rules=st.lists(st.sampled_from(_rule_pool), min_size=1, max_size=5, unique_by=lambda r: str(r)),
)
def test_valid_and_invalid_partition_the_input_and_codes_are_exactly_the_broken_rules(spark, rows, rules):
    data = [{"rid": i, "id": r[0], "age": r[1], "email": r[2]} for i, r in enumerate(rows)]
    df = spark.createDataFrame([(d["rid"], d["id"], d["age"], d["email"]) for d in data],
                               "rid int, id int, age int, email string")
    valid, invalid = Cola().split(df, rules, annotate="dq_codes")

    everything = ["rid", "id", "age", "email"]
    assert sorted(_rows(valid, *everything) + _rows(invalid, *everything), key=repr) == sorted(
        [tuple(d[c] for c in everything) for d in data], key=repr
    )
    expected = {d["rid"]: codes for d, codes in zip(data, _oracle(data, rules), strict=True)}
    assert {row["rid"]: row["dq_codes"] for row in invalid.collect()} == {
        rid: codes for rid, codes in expected.items() if codes
    }
    assert {row["rid"] for row in valid.collect()} == {rid for rid, codes in expected.items() if not codes}


def test_a_warnings_named_column_is_only_refused_when_the_warnings_column_would_be_added(spark):
    df = spark.createDataFrame([(None, "x")], "id int, dq_warnings string")
    _, invalid = Cola().split(df, [{"type": "not_null", "columns": ["id"]}], annotate="dq")
    assert invalid.columns == ["id", "dq_warnings", "dq"]
    with pytest.raises(ColaError, match=r"annotate column 'dq_warnings' already exists in the DataFrame"):
        Cola().split(df, [{"type": "not_null", "columns": ["id"], "severity": "warn"}], annotate="dq")


@pytest.mark.parametrize("name", ["__cola_codes", "__cola_warnings"])
def test_a_column_named_like_an_internal_one_comes_through_untouched(spark, name):
    df = spark.createDataFrame([(1, "a"), (None, "b"), (3, None)], f"id int, `{name}` string")
    rules = [
        {"type": "not_null", "columns": ["id"]},
        {"type": "not_null", "columns": [name], "severity": "warn"},
    ]
    for key in (None, ["id"]):
        valid, invalid = Cola().split(df, rules, annotate="dq", quarantine_key=key)
        assert valid.columns == ["id", name, "dq_warnings"]
        assert invalid.columns == ["id", name, "dq", "dq_warnings"]
        assert _rows(valid, "id", name, "dq_warnings") == sorted_rows([(1, "a", []), (3, None, [f"not_null({name})"])])
        assert _rows(invalid, "id", name, "dq", "dq_warnings") == [(None, "b", ["not_null(id)"], [])]


# -- warn rules and the quarantine key --------------------------------------------------------


def test_warn_rules_never_quarantine_and_their_codes_go_to_a_warnings_column(order_lines):
    rules = [
        {"type": "not_null", "columns": ["email"]},
        {"type": "range", "column": "amount", "min": 0, "severity": "warn"},
        {"type": "castable", "column": "qty", "to": "int", "severity": "warn"},
    ]
    valid, invalid = Cola().split(order_lines, rules, annotate="dq")
    assert invalid.columns[-2:] == ["dq", "dq_warnings"]
    assert valid.columns[-1] == "dq_warnings"
    assert sorted((r.id, r.line, tuple(r.dq), tuple(r.dq_warnings)) for r in invalid.collect()) == [
        (1, 2, ("not_null(email)",), ("range(amount,0,)", "castable(qty,int)")),
        (2, 1, ("not_null(email)",), ()),
    ]
    assert sorted((r.id, r.line, tuple(r.dq_warnings)) for r in valid.collect()) == [
        (1, 1, ()), (2, 1, ()), (3, 1, ("castable(qty,int)",)),
    ]
    plain_valid, _ = Cola().split(order_lines, [{"type": "not_null", "columns": ["email"]}], annotate="dq")
    assert plain_valid.schema == order_lines.schema


def test_quarantine_key_pulls_in_every_row_of_a_rejected_order(order_lines):
    valid, invalid = Cola().split(
        order_lines, [{"type": "range", "column": "amount", "min": 0}], annotate="dq", quarantine_key=["id"]
    )
    assert codes_of(invalid) == [(1, 1, ("quarantine_key(id)",)), (1, 2, ("range(amount,0,)",))]
    assert sorted((r.id, r.line) for r in valid.collect()) == [(2, 1), (2, 1), (3, 1)]


def test_quarantine_key_ignores_keys_with_a_null(spark):
    df = spark.createDataFrame([(None, -1), (None, 5), (7, 5)], "id int, amount int")
    valid, invalid = Cola().split(df, [{"type": "range", "column": "amount", "min": 0}], quarantine_key=["id"])
    assert sorted((r.id, r.amount) for r in invalid.collect()) == [(None, -1)]
    assert valid.count() == 2

