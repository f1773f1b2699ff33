"""The Cola job's command line: the arguments of ``cola check``/``cola split``, and its rules file.

Built from values the operators have already validated (``checked_source``, ``load_rules``);
the outputs are checked here, as they are turned into arguments.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from airflow_provider_cola._rules import RuleBlock, checked_output

__all__ = ["job_arguments", "report_arguments", "rules_file", "split_output_arguments"]


def job_arguments(
    command: str,
    *,
    rules: str,
    source: Any,
    results: str,
    pipeline: str,
    samples: int,
    outputs: Sequence[str],
    allow_external_access: bool,
) -> list[str]:
    """The application arguments of the job entry point (``check`` or ``split`` first)."""
    return [
        command,
        "--rules", rules,
        *_source_arguments(source),
        "--results", results,
        "--pipeline", pipeline,
        "--samples", str(samples),
        *outputs,
        *(["--allow-external-access"] if allow_external_access else []),
        # Exit 0 once the results file is written, even when checks failed: the hook
        # treats any non-zero exit as a crash, and the decision is made from the file.
        "--fail-exit-code", "0",
    ]


def report_arguments(report: Mapping[str, Any] | str | None) -> list[str]:
    """``--report`` and its config, once checked; nothing without a report."""
    if report is None:
        return []
    checked_output(report, "report")
    return ["--report", _output_text(report)]


def split_output_arguments(
    valid_output: Mapping[str, Any] | str,
    invalid_output: Mapping[str, Any] | str,
    annotate: str | None,
    quarantine_key: Sequence[str] | None,
) -> list[str]:
    """The arguments only ``cola split`` takes, the outputs checked."""
    arguments: list[str] = []
    for flag, config, what in (
        ("--valid-output", valid_output, "valid_output"),
        ("--invalid-output", invalid_output, "invalid_output"),
    ):
        checked_output(config, what)
        arguments += [flag, _output_text(config)]
    if annotate:
        arguments += ["--annotate", annotate]
    for column in quarantine_key or []:
        arguments += ["--quarantine-key", column]
    return arguments


def rules_file(block: RuleBlock, workdir: Path, deploy_mode: str) -> tuple[str, list[str]]:
    """The ``--rules`` argument, and the files to ship for it.

    Rules given as a list are written to ``workdir/rules.json``. In cluster mode the driver
    runs elsewhere: the file travels with ``--files`` and is read from the driver's working
    folder by its name.
    """
    path = block.path
    if path is None:
        path = workdir / "rules.json"
        path.write_text(json.dumps(block.rules, indent=2), encoding="utf-8")
    path = path.resolve()
    if deploy_mode == "cluster":
        return path.name, [str(path)]
    return str(path), []


def _source_arguments(source: Any) -> list[str]:
    if source.path is not None:
        arguments = ["--input", source.path, "--format", source.format]
        for key, value in source.options.items():
            arguments += ["--option", f"{key}={value}"]
        return arguments
    if source.table is not None:
        return ["--table", source.table]
    return ["--query", source.query]


def _output_text(config: Mapping[str, Any] | str) -> str:
    return config if isinstance(config, str) else json.dumps(dict(config))
