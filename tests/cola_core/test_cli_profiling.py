"""``cola profile`` and ``cola suggest``: main() in-process against the test session, and the
refusals that come before any Spark work."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from cola_core import Cola
from cola_core.cli.main import main
from cola_core.language.files import read_rules_file
from cola_core.storage.readwrite import read_source
from cola_helpers import DATA, ORDERS_ARGV


def _orders(spark):
    return read_source(spark, {"path": str(DATA / "orders.csv"), "format": "csv",
                               "options": {"header": True, "inferSchema": True}})


@pytest.mark.spark
def test_profile_prints_the_table_and_writes_the_profile_as_json(spark, tmp_path, capsys):
    out = tmp_path / "profile.json"
    assert main(["profile", *ORDERS_ARGV, "--columns", "order_id,amount", "--out", str(out)]) == 0
    expected = Cola().profile(_orders(spark), ["order_id", "amount"])
    assert capsys.readouterr().out == f"{expected}\n"
    assert json.loads(out.read_text()) == expected.to_dict()


@pytest.mark.spark
def test_suggest_writes_a_yaml_rules_file_that_reads_back_as_the_suggestions(spark, tmp_path, capsys):
    out = tmp_path / "rules.yaml"
    assert main(["suggest", *ORDERS_ARGV, "--strictness", "margin", "--out", str(out)]) == 0
    printed = capsys.readouterr()
    profile = Cola().profile(_orders(spark))
    suggested = Cola().suggest(profile, strictness="margin")
    assert printed.out == f"{profile}\n"
    assert printed.err == f"cola: wrote {len(suggested)} suggested rules to {out}\n"
    text = out.read_text()
    assert text.startswith("# Rules suggested by `cola suggest` from a profile of the data.")
    assert f"  # {suggested[1]['name']}\n  - type: \"{suggested[1]['type']}\"\n" in text
    assert read_rules_file(out) == suggested
    # The suggestions pass on the data they came from, through the command as well.
    assert main(["check", "--rules", str(out), *ORDERS_ARGV]) == 0


@pytest.mark.spark
def test_suggest_writes_json_for_a_json_file_and_prints_yaml_without_out(spark, tmp_path, capsys):
    out = tmp_path / "rules.json"
    assert main(["suggest", *ORDERS_ARGV, "--columns", "order_id", "--out", str(out)]) == 0
    capsys.readouterr()
    assert json.loads(out.read_text()) == {"rules": Cola().suggest(_orders(spark), ["order_id"])}
    assert main(["suggest", *ORDERS_ARGV, "--columns", "order_id"]) == 0
    printed = capsys.readouterr().out
    assert "\nrules:\n  # " in printed


@pytest.mark.spark
def test_an_unknown_column_is_refused_with_exit_2(spark, capsys):
    assert main(["profile", *ORDERS_ARGV, "--columns", "order_id,nope"]) == 2
    err = capsys.readouterr().err
    assert err == "cola: error: no column 'nope' in the DataFrame; its columns are order_id, customer, email, amount, status\n"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--out", "/no/such/folder/rules.yaml"], "cola: error: --out: the folder '/no/such/folder' does not exist\n"),
        (["--strictness", "loose"], "cola: error: --strictness must be exact or margin, got 'loose'\n"),
        (["--out", "s3://bucket/rules.yaml"],
         "cola: error: --out must be a local file (a path or a file: URI), got 's3://bucket/rules.yaml'\n"),
        (["--profile-out", "/no/such/folder/profile.json"],
         "cola: error: --profile-out: the folder '/no/such/folder' does not exist\n"),
        (["--dataset", "orders"], "cola: error: --dataset says which earlier runs to learn from; give --history too\n"),
        (["--dataset", "orders", "--data-date", "2024-03-04"],
         "cola: error: --dataset says which earlier runs to learn from; give --history too\n"),
        (["--data-date", "someday"], "cola: error: --data-date must be an ISO date or timestamp such as 2024-01-31 or "
         "2024-01-31T06:00:00Z: 'someday' is not an ISO date or timestamp\n"),
        (["--now", "soon"], "cola: error: --now must be an ISO date or timestamp such as 2024-01-31 or "
         "2024-01-31T06:00:00Z: 'soon' is not an ISO date or timestamp\n"),
        (["--history", "/tmp/history"],
         "cola: error: --history needs --dataset, the dataset whose earlier runs to learn from\n"),
        (["--history", "/tmp/history", "--dataset", "orders", "--data-date", "yesterday"],
         "cola: error: --data-date must be an ISO date or timestamp such as 2024-01-31 or 2024-01-31T06:00:00Z: "
         "'yesterday' is not an ISO date or timestamp\n"),
    ],
)
def test_a_bad_argument_is_refused_before_spark_starts(capsys, arguments, message):
    assert main(["suggest", "--table", "orders", *arguments]) == 2
    assert capsys.readouterr().err == message


def test_a_refusal_makes_no_folder_for_its_record(tmp_path, capsys):
    # The folder's absence is what is refused: writing the record there would make it.
    missing = tmp_path / "no" / "such"
    assert main(["suggest", "--table", "orders", "--profile-out", str(missing / "profile.json")]) == 2
    assert capsys.readouterr().err == f"cola: error: --profile-out: the folder '{missing}' does not exist\n"
    assert not (tmp_path / "no").exists()


@pytest.mark.spark
def test_suggest_learns_from_the_runs_of_cola_check_and_writes_the_profile_too(spark, tmp_path, capsys):
    history, rules = str(tmp_path / "history"), tmp_path / "rules.json"
    rules.write_text(json.dumps([{"type": "row_count", "must_be": "> 0"}]))
    for day in ("2024-03-01", "2024-03-02", "2024-03-03"):
        assert main(["check", "--rules", str(rules), *ORDERS_ARGV, "--history", history, "--dataset", "orders",
                     "--data-date", day]) == 0
    out, profile_out = tmp_path / "suggested.json", tmp_path / "profile.json"
    assert main(["suggest", *ORDERS_ARGV, "--history", history, "--dataset", "orders", "--data-date", "2024-03-04",
                 "--out", str(out), "--profile-out", str(profile_out)]) == 0
    capsys.readouterr()
    suggested = json.loads(out.read_text())["rules"]
    # The same orders every day: no change from one run to the next.
    assert suggested[0] == {
        "type": "row_count", "must_be": "change between 0% and 0%",
        "name": "rows changed by 0% to 0% from one run to the next in the last 4 runs of orders",
    }
    assert suggested[1:] == Cola().suggest(_orders(spark), data_date=dt.date(2024, 3, 4))[1:]
    assert json.loads(profile_out.read_text()) == Cola().profile(_orders(spark)).to_dict()


@pytest.mark.spark
def test_suggest_takes_the_freshness_age_at_now(spark, tmp_path, capsys):
    data = tmp_path / "events.csv"
    data.write_text("id,seen_at\n1,2024-03-01 06:00:00\n2,2024-03-02 18:00:00\n")
    out = tmp_path / "rules.json"
    argv = ["suggest", "--input", str(data), "--format", "csv", "--option", "header=true", "--option",
            "inferSchema=true", "--columns", "seen_at", "--out", str(out)]
    # 2024-03-04 06:00 UTC is 1.5 days after the newest seen_at (UTC, as the tests' session reads it).
    assert main([*argv, "--now", "2024-03-04T06:00:00Z"]) == 0
    capsys.readouterr()
    assert json.loads(out.read_text())["rules"][1] == {
        "type": "freshness", "column": "seen_at", "must_be": "< 3d",
        "name": "the newest seen_at was 1.5 days old at 2024-03-04 06:00:00+00:00",
    }
    # Without --now, at the end of the data date's day: 2024-03-04 00:00 UTC.
    assert main([*argv, "--data-date", "2024-03-03"]) == 0
    capsys.readouterr()
    assert json.loads(out.read_text())["rules"][1] == {
        "type": "freshness", "column": "seen_at", "must_be": "< 3d",
        "name": "the newest seen_at was 1.25 days old at the end of the data date",
    }


def test_a_refusal_is_written_to_each_json_file_the_command_was_to_write(tmp_path, capsys):
    # What ColaProfileOperator reads back: the job's record of why, never its log.
    profile, rules, yaml_rules = tmp_path / "profile.json", tmp_path / "rules.json", tmp_path / "rules.yaml"
    message = "--strictness must be exact or margin, got 'loose'"
    assert main(["suggest", "--table", "orders", "--strictness", "loose", "--profile-out", str(profile),
                 "--out", str(rules)]) == 2
    assert capsys.readouterr().err == f"cola: error: {message}\n"
    record = {"error": {"exit_code": 2, "kind": "error", "message": message}}
    assert json.loads(profile.read_text()) == json.loads(rules.read_text()) == record
    # A YAML --out holds rules, never a record; a usage error is recorded as one.
    assert main(["suggest", "--table", "orders", "--sample", "half", "--profile-out", str(profile),
                 "--out", str(yaml_rules)]) == 2
    usage = "argument --sample: invalid float value: 'half'"
    assert capsys.readouterr().err.splitlines()[-1] == f"cola suggest: error: {usage}"
    assert json.loads(profile.read_text()) == {"error": {"exit_code": 2, "kind": "usage", "message": usage}}
    assert not yaml_rules.exists()
    assert main(["profile", "--table", "orders", "--columns", "a", "--out", str(profile), "--bogus"]) == 2
    assert json.loads(profile.read_text())["error"]["message"] == "unrecognized arguments: --bogus"
