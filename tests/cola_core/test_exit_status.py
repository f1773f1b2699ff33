"""The command's exit statuses are named once, and the documentation's table says the same."""

from __future__ import annotations

import re
from pathlib import Path

from cola_core import cli, exit_status

DOCS = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def test_the_statuses_and_their_old_names_on_the_command_line():
    assert (exit_status.OK, exit_status.FAILED, exit_status.REFUSED, exit_status.INTERNAL) == (0, 1, 2, 3)
    assert (cli.EXIT_OK, cli.EXIT_FAILED, cli.EXIT_ERROR, cli.EXIT_INTERNAL) == (0, 1, 2, 3)


def test_the_documented_table_lists_exactly_these_statuses():
    section = DOCS.read_text().split("## Exit status", 1)[1].split("\n## ", 1)[0]
    documented = [int(number) for number in re.findall(r"^\| (\d+) \|", section, flags=re.MULTILINE)]
    assert documented == sorted(value for name, value in vars(exit_status).items() if name.isupper())


def test_a_refused_run_returns_refused_before_any_spark_work(tmp_path, capsys):
    rules = tmp_path / "rules.json"
    rules.write_text('[{"type": "not_null"}]')
    status = cli.main(["check", "--rules", str(rules), "--input", str(tmp_path / "orders.csv")])
    assert status == exit_status.REFUSED
    assert capsys.readouterr().err == (
        "cola: error: rules[0] (not_null): missing required parameter 'columns'\n"
    )
