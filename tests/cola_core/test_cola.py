"""``Cola`` (``cola.py``): its settings, parsing once, and the outputs a run writes (through the runner)."""

from __future__ import annotations

import pytest

import cola_core.cola as cola_module
from cola_core import Cola, ColaError


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"distinct_strategy": "both"}, "distinct_strategy must be 'separate' or 'inline', got 'both'"),
        ({"allow_external_access": "yes"}, "allow_external_access must be true or false, got 'yes'"),
    ],
)
def test_bad_settings_are_refused(settings, message):
    with pytest.raises(ColaError) as raised:
        Cola(**settings)
    assert str(raised.value) == message


def test_samples_must_be_a_whole_number(spark):
    df = spark.createDataFrame([(1,)], "id int")
    with pytest.raises(ColaError) as raised:
        Cola().run(df, [{"type": "row_count"}], samples=-1)
    assert str(raised.value) == "samples must be a whole number >= 0, got -1"


@pytest.mark.spark
def test_checks_parsed_once_are_run_and_split_without_parsing_again(spark, monkeypatch):
    df = spark.createDataFrame([(1,), (None,)], "id int")
    cola = Cola()
    checks = cola.parse([{"type": "not_null", "columns": ["id"]}])
    calls = []
    original = cola_module.parse_rules
    monkeypatch.setattr(cola_module, "parse_rules", lambda *args: calls.append(args) or original(*args))
    [result] = cola.run(df, checks)
    valid, invalid = cola.split(df, checks)
    assert (result.failed_count, valid.count(), invalid.count(), calls) == (1, 1, 1, [])
    cola.run(df, [{"type": "not_null", "columns": ["id"]}])
    assert len(calls) == 1  # rule dicts are parsed


@pytest.fixture(scope="module")
def tiny(spark):
    return spark.createDataFrame([(1, "a"), (2, "b"), (3, None)], "id int, name string")


@pytest.mark.spark
def test_a_failing_sql_rule_writes_its_failed_rows_to_its_output(spark, tiny, tmp_path):
    target = tmp_path / "no_name"
    rules = [
        {"type": "sql", "failed_rows": "SELECT id FROM _validation_df WHERE name IS NULL",
         "output": {"path": str(target), "format": "json"}},
        {"type": "sql", "failed_rows": "SELECT id FROM _validation_df WHERE id > 10",
         "output": {"path": str(tmp_path / "never"), "format": "json"}},
    ]
    # A rule that chooses where the engine writes needs the switch for trusted rules.
    results = Cola(allow_external_access=True).run(tiny, rules)
    assert [(r.passed, r.failed_count) for r in results] == [(False, 1), (True, 0)]
    assert [row.id for row in spark.read.json(str(target)).collect()] == [3]
    assert not (tmp_path / "never").exists()  # a passing rule writes nothing



@pytest.mark.spark
def test_what_a_run_writes_goes_through_the_runner(spark, tiny, tmp_path, monkeypatch):
    import cola_core.job.blocks as blocks_module

    written = []
    monkeypatch.setattr(blocks_module, "write_output", lambda rows, output: written.append(
        ([row.id for row in rows.collect()], output.path)
    ))
    target = str(tmp_path / "no_name")
    rules = [{"type": "sql", "failed_rows": "SELECT id FROM _validation_df WHERE name IS NULL",
              "output": {"path": target, "format": "json"}}]
    [result] = Cola(allow_external_access=True).run(tiny, rules)
    assert (result.passed, written) == (False, [([3], target)])
    assert not (tmp_path / "no_name").exists()  # the runner's write, replaced here, is the only one
