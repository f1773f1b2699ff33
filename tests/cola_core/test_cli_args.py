"""The parser of the ``cola`` command line (``cli/args.py``): its commands, its usage errors,
and a command line read back as the ``JobSpec`` it names, each error naming its flag."""

from __future__ import annotations

import pytest

from cola_core import ColaError, ColaOutputError, JobSpec
from cola_core.cli.args import build_parser, job_from_argv, job_spec, parse_arguments
from cola_core.storage.specs import history_spec, parse_output, parse_source

CHECK = ["check", "--rules", "r.json", "--table", "db.orders"]


def usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The last line argparse says on stderr when it refuses ``argv`` with exit status 2."""
    with pytest.raises(SystemExit) as exited:
        parse_arguments(argv)
    assert exited.value.code == 2
    return capsys.readouterr().err.splitlines()[-1]


def test_the_commands_are_check_split_profile_suggest_and_history(capsys):
    assert usage_error([], capsys) == (
        "cola: error: the following arguments are required: {check,split,profile,suggest,history,schema}"
    )
    assert usage_error(["history"], capsys) == (
        "cola history: error: the following arguments are required: {exclude,prune,daily,dimensions,trend,top,html}"
    )
    args = parse_arguments(["history", "top", "--history", "/h", "--top", "3", "--remote", "sc://h:1"])
    assert (args.command, args.action, args.history, args.top, args.remote, args.master) == (
        "history", "top", "/h", 3, "sc://h:1", None,
    )
    assert build_parser().prog == "cola"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--format", "csv"], "cola: error: --format only applies with --input"),
        (["--option", "a=b"], "cola: error: --option only applies with --input"),
        (["--mastr", "yarn"], "cola: error: unrecognized arguments: --mastr yarn"),
        (["--conf", "=1"], "cola check: error: argument --conf: expected KEY=VALUE, got '=1'"),
        (["--remote", "http://h:1"],
         "cola check: error: argument --remote: a Spark Connect URL looks like sc://host:15002, got 'http://h:1'"),
        (["--map-index", "two"], "cola check: error: argument --map-index: invalid int value: 'two'"),
        (["--schema", "id INT"], "cola: error: --schema only applies with --input"),
        (["--stream"], "cola: error: unrecognized arguments: --stream"),
    ],
)
def test_usage_errors_are_argparse_s(extra, message, capsys):
    assert usage_error([*CHECK, *extra], capsys) == message


SPLIT = ["split", "--rules", "r.json", "--valid-output", "/v", "--invalid-output", "/i"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--table", "db.orders", "--stream", "--checkpoint", "/cp"],
         "cola: error: --stream only applies with --input (a folder that files arrive in)"),
        (["--input", "/in", "--schema", "id INT", "--stream"],
         "cola: error: --stream and --checkpoint go together: a stream remembers in its checkpoint which files it "
         "has split"),
        (["--input", "/in", "--checkpoint", "/cp"],
         "cola: error: --stream and --checkpoint go together: a stream remembers in its checkpoint which files it "
         "has split"),
    ],
)
def test_a_stream_needs_an_input_folder_and_a_checkpoint(extra, message, capsys):
    assert usage_error([*SPLIT, *extra], capsys) == message


def test_a_streaming_split_command_line_is_read_as_its_job():
    spec = job_from_argv([*SPLIT, "--input", "/in", "--format", "json", "--schema", "id INT", "--stream",
                          "--checkpoint", "/cp"])
    assert (spec.source, spec.checkpoint) == (
        parse_source({"path": "/in", "format": "json", "schema": "id INT", "stream": True}), "/cp",
    )
    with pytest.raises(ColaError) as raised:
        job_from_argv([*SPLIT, "--input", "/in", "--format", "json", "--stream", "--checkpoint", "/cp"])
    assert str(raised.value).startswith("a streaming source needs its 'schema'")


def test_a_history_command_may_not_name_a_remote_that_is_not_a_connect_url(capsys):
    assert usage_error(["history", "daily", "--history", "/h", "--remote", "h:1"], capsys) == (
        "cola history daily: error: argument --remote: a Spark Connect URL looks like sc://host:15002, got 'h:1'"
    )


def test_a_command_line_is_read_as_its_job():
    argv = [
        "split", "--rules", "r.yaml", "--input", "/in", "--format", "csv", "--option", "header=true",
        "--valid-output", "/v", "--invalid-output", '{"table": "dq.bad", "mode": "append"}', "--annotate", "dq",
        "--history", "/h", "--dataset", "orders", "--data-date", "2024-01-02", "--conf", "spark.x= a=b ",
    ]
    assert job_from_argv(argv) == JobSpec(
        command="split", rules="r.yaml",
        source=parse_source({"path": "/in", "format": "csv", "options": {"header": "true"}}),
        valid_output=parse_output("/v"), invalid_output=parse_output({"table": "dq.bad", "mode": "append"}),
        annotate="dq", history=history_spec("/h"), dataset="orders", data_date="2024-01-02T00:00:00+00:00",
        conf=(("spark.x", " a=b "),),
    )
    # A check's parser has no split flags: the job's split fields keep their defaults.
    assert job_spec(parse_arguments(CHECK)) == JobSpec(rules="r.json", source=parse_source({"table": "db.orders"}))


@pytest.mark.parametrize(
    ("extra", "error", "message"),
    [
        (["--report", '{"path": "/r", "mode": overwrite}'], ColaOutputError,
         "--report is not valid JSON: Expecting value (line 1, column 24)"),
        (["--history", '{"path": "/h", "mode": "overwrite"}'], ColaOutputError,
         "--history: a history store is only appended to, but its mode is 'overwrite'; leave 'mode' out or set it "
         'to "append"'),
        (["--data-date", "2024-02-30"], ColaError,
         "--data-date must be an ISO date or timestamp such as 2024-01-31 or 2024-01-31T06:00:00Z: "
         "day is out of range for month"),
        (["--dataset", "orders"], ColaError, "dataset is written beside the results in a history store; give history too"),
        (["--samples", "-1"], ColaError, "samples must be a whole number >= 0, got -1"),
    ],
)
def test_a_value_the_job_refuses_is_a_cola_error_naming_its_flag_when_the_parser_read_it(extra, error, message):
    with pytest.raises(error) as raised:
        job_from_argv([*CHECK, *extra])
    assert str(raised.value) == message
