"""``JobSpec`` (``job/spec.py``): one typed job, its validation, and its one serialised form, the
command line (``to_argv``), which the ``cola`` parser (``cli_args.job_from_argv``) reads back as
the same job."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cola_core import ColaError, JobSpec
from cola_core.cli.args import job_from_argv
from cola_core.storage.specs import parse_output, parse_source

SOURCE = parse_source({"path": "/data/orders.csv", "format": "csv", "options": {"header": "true", "sep": ";"}})

CHECK = JobSpec(
    command="check",
    rules="/jobs/rules.yaml",
    source=SOURCE,
    results="/out/results.json",
    report=parse_output({"table": "dq.report", "mode": "append"}),
    pipeline="orders_daily",
    samples=3,
    fail_exit_code=0,
    check_packages=("myproject.checks", "more_checks"),
    allow_external_access=True,
    master="local[2]",
    conf=(("spark.ui.enabled", "false"), ("spark.sql.shuffle.partitions", "1")),
    verbose=True,
)
SPLIT = dataclasses.replace(
    CHECK,
    command="split",
    source=parse_source({"table": "db.orders"}),
    valid_output=parse_output("/out/valid"),
    invalid_output=parse_output({"path": "/out/invalid", "format": "json", "mode": "overwrite",
                                 "partition_by": ["day"], "options": {"compression": "gzip"}}),
    annotate="dq_codes",
    quarantine_key=("order_id", "line"),
    annotate_valid=True,
)


STREAM = parse_source({"path": "/landing", "format": "json", "stream": True, "schema": "id INT, name STRING"})
SPLIT_OUTPUTS = {"command": "split", "valid_output": parse_output("/v"), "invalid_output": parse_output("/i")}


def from_argv(spec: JobSpec) -> JobSpec:
    return job_from_argv(spec.to_argv())


# -- validation --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"command": "verify"}, "a job's command is 'check' or 'split', got 'verify'"),
        ({"samples": -1}, "samples must be a whole number >= 0, got -1"),
        ({"samples": True}, "samples must be a whole number >= 0, got True"),
        ({"samples": 1.5}, "samples must be a whole number >= 0, got 1.5"),
        ({"allow_external_access": "yes"}, "allow_external_access must be true or false, got 'yes'"),
        ({"valid_output": parse_output("/v")}, "valid_output only applies to a split job"),
        ({"invalid_output": parse_output("/i")}, "invalid_output only applies to a split job"),
        ({"annotate": "dq"}, "annotate only applies to a split job"),
        ({"quarantine_key": ("id",)}, "quarantine_key only applies to a split job"),
        ({"annotate_valid": 1}, "annotate_valid must be true or false, got 1"),
        ({"annotate_valid": True}, "annotate_valid only applies to a split job with annotate"),
        ({"command": "split", "valid_output": parse_output("/v"), "invalid_output": parse_output("/i"),
          "annotate_valid": True}, "annotate_valid only applies to a split job with annotate"),
        ({"command": "split"}, "a split job needs both valid_output and invalid_output"),
        ({"command": "split", "valid_output": parse_output("/v")}, "a split job needs both valid_output and invalid_output"),
        ({"html": " "}, "html must be the path of a file, got ' '"),
        ({"html": 3}, "html must be the path of a file, got 3"),
        ({"checkpoint": "/cp"}, "checkpoint only applies to a split job"),
        ({"source": STREAM}, "a streaming source is split, not checked: run a split job with a checkpoint"),
        ({**SPLIT_OUTPUTS, "source": STREAM},
         "a streaming source needs a checkpoint: the folder where the stream remembers which files it has split"),
        ({**SPLIT_OUTPUTS, "source": SOURCE, "checkpoint": "/cp"},
         "checkpoint only applies to a streaming source (stream: true)"),
        ({**SPLIT_OUTPUTS, "source": STREAM, "checkpoint": " "}, "checkpoint must be the path of a folder, got ' '"),
    ],
)
def test_a_malformed_job_is_refused_with_the_reason(fields, message):
    with pytest.raises(ColaError) as raised:
        JobSpec(**fields)
    assert str(raised.value) == message


def test_sequences_are_stored_as_tuples():
    spec = JobSpec(rules=[{"type": "row_count"}], check_packages=["a"], conf=[["k", 1]])
    assert (spec.rules, spec.check_packages, spec.conf) == (({"type": "row_count"},), ("a",), (("k", "1"),))
    assert SPLIT.outputs == [SPLIT.report, SPLIT.valid_output, SPLIT.invalid_output]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (JobSpec(rules="r.json"), "a job run from the command line needs a source"),
        (JobSpec(rules=({"type": "row_count"},), source=SOURCE), "a job run from the command line reads its rules from a file"),
    ],
)
def test_only_a_job_with_a_source_and_a_rules_file_has_a_command_line(spec, message):
    with pytest.raises(ColaError) as raised:
        spec.to_argv()
    assert str(raised.value) == message


# -- the command line ------------------------------------------------------------------------


def test_a_check_job_with_every_field_reads_back_from_its_command_line():
    assert CHECK.to_argv() == [
        "check", "--rules", "/jobs/rules.yaml", "--input", "/data/orders.csv", "--format", "csv",
        "--option", "header=true", "--option", "sep=;", "--results", "/out/results.json",
        "--pipeline", "orders_daily", "--samples", "3", "--report", '{"table": "dq.report", "mode": "append"}',
        "--checks", "myproject.checks", "--checks", "more_checks", "--master", "local[2]",
        "--conf", "spark.ui.enabled=false", "--conf", "spark.sql.shuffle.partitions=1",
        "--verbose", "--allow-external-access", "--fail-exit-code", "0",
    ]
    assert from_argv(CHECK) == CHECK


def test_the_html_report_file_reads_back_from_its_command_line():
    spec = dataclasses.replace(CHECK, html="/out/report.html")
    argv = spec.to_argv()
    assert argv[argv.index("--results"):argv.index("--pipeline")] == [
        "--results", "/out/results.json", "--html", "/out/report.html",
    ]
    assert from_argv(spec) == spec


def test_a_split_job_with_every_field_reads_back_from_its_command_line():
    argv = SPLIT.to_argv()
    assert argv[:4] == ["split", "--rules", "/jobs/rules.yaml", "--table"]
    assert argv[argv.index("--valid-output") + 1] == "/out/valid"  # a plain parquet path stays plain
    assert from_argv(SPLIT) == SPLIT


def test_a_streaming_split_reads_back_from_its_command_line():
    spec = JobSpec(rules="r.json", source=STREAM, checkpoint="/cp/orders", **SPLIT_OUTPUTS)
    argv = spec.to_argv()
    assert argv[3:12] == ["--input", "/landing", "--format", "json", "--schema", "id INT, name STRING", "--stream",
                          "--samples", "0"]
    assert argv[argv.index("--checkpoint") + 1] == "/cp/orders"
    assert from_argv(spec) == spec


def test_an_output_and_the_spark_settings_are_plain_data_on_the_command_line():
    argv = SPLIT.to_argv()
    assert json.loads(argv[argv.index("--invalid-output") + 1]) == {
        "path": "/out/invalid", "format": "json", "mode": "overwrite", "partition_by": ["day"],
        "options": {"compression": "gzip"},
    }
    assert argv[argv.index("--conf"):argv.index("--verbose")] == [
        "--conf", "spark.ui.enabled=false", "--conf", "spark.sql.shuffle.partitions=1",
    ]


def test_a_default_job_reads_back_from_its_command_line():
    spec = JobSpec(rules="r.json", source=parse_source({"query": "SELECT 1 AS id"}))
    assert spec.to_argv() == ["check", "--rules", "r.json", "--query", "SELECT 1 AS id", "--samples", "0",
                              "--fail-exit-code", "1"]
    assert from_argv(spec) == spec


_WORDS = st.text(alphabet="abcxyz_019./", min_size=1, max_size=8).filter(lambda w: not w.startswith("."))
_OUTPUTS = st.builds(
    lambda path, mode, parts: parse_output({"path": f"/{path}", "mode": mode, "partition_by": parts}),
    _WORDS, st.sampled_from(["append", "overwrite", "errorifexists", "ignore"]), st.lists(_WORDS, max_size=2),
)
_SOURCES = st.one_of(
    st.builds(lambda path, fmt, options, schema: parse_source(
                  {"path": f"/{path}", "format": fmt, "options": options, **({"schema": schema} if schema else {})}),
              _WORDS, st.sampled_from(["parquet", "csv", "json", "orc", "delta"]),
              st.dictionaries(_WORDS, _WORDS, max_size=2), st.sampled_from([None, "id INT", "a STRING, b DOUBLE"])),
    st.builds(lambda table: parse_source({"table": table}), st.sampled_from(["orders", "db.orders"])),
)


_MOMENTS = st.sampled_from(["2024-01-02", "2024-01-02T06:00:00+02:00", "2024-02-29T23:59:59Z"])


@st.composite
def job_specs(draw) -> JobSpec:
    splitting = draw(st.booleans())
    optional = lambda strategy: draw(st.none() | strategy)  # noqa: E731
    source = draw(_SOURCES)
    streaming = splitting and source.path is not None and source.schema is not None and draw(st.booleans())
    source = dataclasses.replace(source, stream=streaming)
    history = optional(_OUTPUTS.map(lambda output: output.to_config()["path"]))
    remote = optional(st.sampled_from(["sc://localhost:15002", "sc://h:1/;token=x"]))
    return JobSpec(
        command="split" if splitting else "check",
        rules=f"/{draw(_WORDS)}.json",
        source=source,
        results=optional(_WORDS.map(lambda w: f"/{w}.json")),
        report=optional(_OUTPUTS),
        pipeline=optional(_WORDS),
        samples=draw(st.integers(0, 50)),
        fail_exit_code=draw(st.integers(0, 9)),
        check_packages=tuple(draw(st.lists(_WORDS, max_size=2))),
        allow_external_access=draw(st.booleans()),
        valid_output=draw(_OUTPUTS) if splitting else None,
        invalid_output=draw(_OUTPUTS) if splitting else None,
        annotate=(annotate := optional(_WORDS) if splitting else None),
        quarantine_key=tuple(draw(st.lists(_WORDS, max_size=2))) if splitting else (),
        annotate_valid=draw(st.booleans()) if annotate else False,
        checkpoint=f"/{draw(_WORDS)}" if streaming else None,
        master=None if remote is not None else optional(st.sampled_from(["local[2]", "yarn", "spark://h:7077"])),
        remote=remote,
        conf=tuple(draw(st.lists(st.tuples(_WORDS, _WORDS), max_size=2))),
        verbose=draw(st.booleans()),
        history=history,
        dataset=None if history is None else optional(_WORDS),
        dag_id=optional(_WORDS),
        task_id=optional(_WORDS),
        airflow_run_id=optional(_WORDS),
        data_date=optional(_MOMENTS),
        data_interval_start=optional(_MOMENTS),
        data_interval_end=optional(_MOMENTS),
        logical_date=optional(_MOMENTS),
        map_index=optional(st.integers(-1, 1000)),
        html=optional(_WORDS.map(lambda w: f"/{w}.html")),
    )


@given(job_specs())
def test_every_job_reads_back_from_its_command_line(spec):
    assert from_argv(spec) == spec
