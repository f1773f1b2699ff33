"""Checks made in the worker before any Spark work: rules, source and outputs.

Every problem found here is a :class:`~airflow_provider_cola.errors.ColaConfigError`, so the
task fails at once with the engine's own message and nothing is submitted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from cola_core import Cola, ColaError
from cola_core.io import OutputSpec, SourceSpec, parse_output, parse_source, read_rules_file

from airflow_provider_cola.errors import ColaConfigError

__all__ = ["RuleBlock", "checked_output", "checked_source", "dag_folder", "load_rules"]


def dag_folder(dag: Any) -> Path | None:
    """The folder of the DAG's file (symlinks followed), where relative rule files live."""
    fileloc = getattr(dag, "fileloc", None)
    return Path(fileloc).resolve().parent if fileloc else None


class RuleBlock:
    """A validated rule block, and the file it came from (``None`` for inline rules).

    Attributes:
        rules: the rule dicts, as the engine reads them.
        path: the JSON/YAML file the rules were read from, when they came from one.
    """

    def __init__(self, rules: list[Any], path: Path | None) -> None:
        self.rules = rules
        self.path = path


def load_rules(rules: Any, *, base_dir: str | Path | None = None, cola: Cola | None = None) -> RuleBlock:
    """Read (when ``rules`` is a path) and validate a rule block without touching Spark.

    Args:
        rules: a list of rule dicts, or the path of a JSON or YAML file holding them. A
            relative path is taken from ``base_dir`` (the DAG file's folder).
        base_dir: where relative rule files live.
        cola: the engine whose rule types apply (built-ins by default).

    Raises:
        ColaConfigError: the file cannot be read or parsed, or a rule is malformed (the
            message is the ``ColaRuleError`` text, which names the rule).
    """
    path = None
    if isinstance(rules, (str, Path)):
        path = Path(rules)
        if not path.is_absolute() and base_dir is not None:
            path = Path(base_dir) / path
        try:
            rules = read_rules_file(path)
        except ColaError as error:
            raise ColaConfigError(str(error)) from error
    try:
        (cola or Cola()).parse(rules)
    except ColaError as error:
        raise ColaConfigError(f"invalid Cola rules: {error}") from error
    return RuleBlock(rules, path)


def checked_source(source: Any) -> SourceSpec:
    """Validate a source dict (``path``/``format``/``options``, ``table`` or ``query``).

    Raises:
        ColaConfigError: the source is not one of the three forms.
    """
    try:
        return parse_source(source)
    except ColaError as error:
        raise ColaConfigError(f"invalid Cola source: {error}") from error


def checked_output(config: Mapping[str, Any] | str, what: str) -> OutputSpec:
    """Validate an output config (a dict, or a plain parquet path).

    Args:
        what: the argument's name, for the message (``report``, ``valid_output``...).

    Raises:
        ColaConfigError: the config is malformed.
    """
    try:
        return parse_output(config)
    except ColaError as error:
        raise ColaConfigError(f"invalid {what}: {error}") from error
