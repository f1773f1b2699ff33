"""Reading back the files the Cola job wrote, and refusing anything that is not whole.

A results file that is missing, empty, not UTF-8, not strict JSON (a duplicate key
included), or not exactly what ``cola_core.report.results.summarise`` produces for the validated
block (one result per expanded rule, in order, each with that rule's ``rule_type``, ``code``,
``rule_id`` and name, every key of its type, counts that add up) is never read as a pass: it raises
:class:`~airflow_provider_cola.errors.ColaJobError` with the tail of the Spark log. A file
that records a refused run (``cola_core.report.results.refusal_results``) raises
:class:`~airflow_provider_cola.errors.ColaJobRefused`, which is not retried.

Any other JSON file a job writes for this worker (``cola suggest``'s profile and rules, for
``ColaProfileOperator``) is read the same way by :meth:`ResultsFile.load`: once, strictly, and
handed to a check of its own.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

from airflow_provider_cola.errors import ColaConfigError, ColaJobError, ColaJobRefused
from airflow_provider_cola.operators._spark_submit import refused_message
from cola_core import CheckResult, ColaError
from cola_core.common.formatting import json_type, plural
from cola_core.language.result import DETAILS_CHARS, RESULT_KEYS, SEVERITIES
from cola_core.plan.cost import SparkCost
from cola_core.report.results import REFUSAL_KEY, REFUSAL_KINDS, summarise
from cola_core.storage.specs import without_file_scheme

__all__ = ["Refusal", "ResultsFile"]

_Loaded = TypeVar("_Loaded")


@dataclass(frozen=True)
class Refusal:
    """A refusal the job wrote down (``cola_core.report.results.refusal_results``).

    Attributes:
        kind: what it refused (``REFUSAL_KINDS``: ``usage`` for its command line...).
        message: the job's words.
    """

    kind: str
    message: str

    def error(self) -> ColaJobRefused:
        """The task's final error, saying the job's message."""
        return ColaJobRefused(refused_message(self.message, self.kind), kind=self.kind)


class ResultsFile:
    """Where one run's results file (or another file the job writes for this worker) is
    written, and how it is read back.

    In client deploy mode the driver runs here, so a file in the task's temporary folder is
    enough. With ``results_uri`` (needed in cluster deploy mode, where the driver runs on the
    cluster) each run writes a uniquely named file under that folder, which must be storage
    both the driver and this worker mount (NFS, a shared volume). A stale file from an
    earlier run can never be read, and the file is removed once read, whatever it held.

    Args:
        name: the file's name in ``workdir``; under ``results_uri`` it is
            ``cola-<stem>-<unique><suffix>``.
        what: the file, as the errors name it.

    Attributes:
        target: the path or URI passed to the job (as ``--results``, for the results file).
    """

    def __init__(
        self, workdir: str | Path, results_uri: str | None = None, name: str = "results.json",
        what: str = "results file",
    ) -> None:
        if results_uri and "://" in without_file_scheme(results_uri):
            raise ColaConfigError(
                f"results_uri must be a folder on storage that this worker and the Spark driver both "
                f"mount (a path or a file: URI), got {results_uri!r}"
            )
        self.what = what
        if results_uri:
            named = Path(name)
            self.target = f"{results_uri.rstrip('/')}/cola-{named.stem}-{uuid.uuid4().hex}{named.suffix}"
        else:
            self.target = str(Path(workdir) / name)

    def _path(self) -> Path:
        return Path(without_file_scheme(self.target))

    def load(self, log_tail: Callable[[], str], checked: Callable[[Any], _Loaded]) -> _Loaded:
        """The file's strict JSON (UTF-8, no NaN, no duplicate key), as ``checked`` gives it back.

        The file is removed once read, whatever it held.

        Args:
            log_tail: gives the tail of the Spark log, for the error message.
            checked: takes the JSON value and returns it, or what it makes of it; raises
                ``ValueError``, ``TypeError``, ``KeyError`` or ``ColaError`` for a value the job
                does not write.

        Raises:
            ColaJobError: the file is missing, unreadable or corrupt.
        """
        path = self._path()
        try:
            raw = path.read_bytes()
        except FileNotFoundError as error:
            raise self._error(f"the Cola Spark job finished but wrote no {self.what}", log_tail) from error
        except OSError as error:
            self.discard()
            raise self._error(f"cannot read the {self.what} ({error})", log_tail) from error
        # Read once: a corrupt file must not stay behind in results_uri either.
        self.discard()
        try:
            return checked(_loaded(raw))
        except (ValueError, TypeError, KeyError, RecursionError, ColaError) as error:
            raise self._error(f"the {self.what} is corrupt ({_short(error)})", log_tail) from error

    def read(
        self, *, split: bool, checks: Sequence[Any], log_tail: Callable[[], str], stream: bool = False
    ) -> dict[str, Any]:
        """The results summary, checked to be exactly what ``summarise`` would produce.

        The file is removed once read, whether it was good, corrupt or a refusal.

        Args:
            split: whether the job was a split (whose summary carries the row counts).
            checks: the block's checks as validated in the worker (``RuleBlock.checks``:
                its rules after ``targets`` expansion, in order); result ``i`` must carry
                ``checks[i]``'s ``rule_type`` and ``code``, and its ``name`` as
                ``check_name`` when the rule has one.
            log_tail: gives the tail of the Spark log, for the error message.
            stream: whether the split read a streaming source (its summary carries ``stream``,
                its batches: ``cola_core.job.stream.StreamSummary.batch_lines``).

        Raises:
            ColaJobRefused: the file records that the job refused its inputs.
            ColaJobError: the file is missing, unreadable or corrupt.
        """
        def summary_or_refusal(data: Any) -> dict[str, Any] | Refusal:
            return _refusal(data) or _checked_summary(data, split, checks, stream)

        summary = self.load(log_tail, summary_or_refusal)
        if isinstance(summary, Refusal):
            raise summary.error()
        return summary

    def refusal(self) -> Refusal | None:
        """The job's refusal, when the file it left records a refused run; else ``None``.

        Read after a failed submit: whatever else the file holds is not looked at, since the
        failure itself is reported.
        """
        try:
            return _refusal(_loaded(self._path().read_bytes()))
        except (OSError, ValueError, TypeError, KeyError, RecursionError):
            return None

    def discard(self) -> None:
        """Remove the results file, if it is there (best effort)."""
        with contextlib.suppress(OSError):
            self._path().unlink()

    def _error(self, problem: str, log_tail: Callable[[], str]) -> ColaJobError:
        return ColaJobError(f"{problem}: {self.target}\nLast lines of the Spark log:\n{log_tail()}")


def _loaded(raw: bytes) -> Any:
    """The JSON in ``raw``: strict UTF-8, and no NaN or Infinity (the job never writes them)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"not UTF-8: {error.reason} at byte {error.start}") from error
    try:
        return json.loads(text, parse_constant=_refuse_constant, object_pairs_hook=_unique_keys)
    except RecursionError as error:
        raise ValueError("nested too deeply to be a results file") from error


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json.loads keeps the last of two equal keys; the job never writes one twice.
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise ValueError(f"duplicate key {key!r}")
        data[key] = value
    return data


def _refusal(data: Any) -> Refusal | None:
    """The refusal a results file records instead of results (``report.refusal_results``)."""
    if not isinstance(data, dict) or REFUSAL_KEY not in data:
        return None
    error = data[REFUSAL_KEY]
    if (
        set(data) != {REFUSAL_KEY} or not isinstance(error, dict) or set(error) != {"exit_code", "kind", "message"}
        or not isinstance(error["message"], str) or error["kind"] not in REFUSAL_KINDS
    ):
        raise ValueError(
            f"its {REFUSAL_KEY!r} must be {{\"exit_code\": 2, \"kind\": \"...\", \"message\": \"...\"}} alone, "
            f"its kind one of {', '.join(REFUSAL_KINDS)}"
        )
    return Refusal(error["kind"], error["message"])


def _checked_summary(data: Any, split: bool, checks: Sequence[Any], stream: bool = False) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {json_type(data)}")
    keys = {*_SUMMARY_KEYS, *(_SPLIT_KEYS if split else ()), *(("stream",) if stream else ()), "cost",
            "contract_gaps"}
    # An engine of an earlier release writes no cost; contract_gaps only for a contract with some.
    _exact_keys(data, keys, "the summary", optional=("cost", "contract_gaps"))
    gaps = data.get("contract_gaps", [])
    written = "contract_gaps" in data
    if not isinstance(gaps, list) or (written and not gaps) or not all(isinstance(gap, str) for gap in gaps):
        raise ValueError("contract_gaps must be a list of one string or more")
    if not isinstance(data["results"], list):
        raise ValueError(f"'results' must be a list, got {json_type(data['results'])}")
    if len(data["results"]) != len(checks):
        raise ValueError(
            f"it holds {plural(len(data['results']), 'result')} for a block of {plural(len(checks), 'rule')}"
        )
    results = [_checked_result(item, index) for index, item in enumerate(data["results"])]
    for index, (item, check) in enumerate(zip(data["results"], checks, strict=True)):
        _matches_rule(item, check, index)
    counts = {key: _count(data[key], key) for key in _SPLIT_KEYS} if split else {}
    cost = SparkCost.from_dict(data["cost"]) if "cost" in data else None
    expected = summarise(results, **counts, cost=cost, contract_gaps=gaps)
    if stream:
        expected["stream"] = _checked_batches(data["stream"], counts)
    if data != expected:
        differing = sorted(key for key in {*data, *expected} if data.get(key) != expected.get(key))
        raise ValueError(f"its {', '.join(differing)} do not match its results")
    return expected


def _checked_batches(lines: Any, counts: dict[str, int]) -> dict[str, Any]:
    """A stream's ``{"batch_count", "batches"}``: each line whole, and when every batch is
    listed, their rows adding up to the split's counts."""
    if not isinstance(lines, dict):
        raise ValueError(f"'stream' must be an object, got {json_type(lines)}")
    _exact_keys(lines, {"batch_count", "batches"}, "stream")
    batch_count = _count(lines["batch_count"], "stream.batch_count")
    if not isinstance(lines["batches"], list) or len(lines["batches"]) > batch_count:
        raise ValueError(f"stream.batches must be a list of at most {batch_count} batches")
    for index, line in enumerate(lines["batches"]):
        where = f"stream.batches[{index}]"
        if not isinstance(line, dict):
            raise ValueError(f"{where} must be an object, got {json_type(line)}")
        _exact_keys(line, {"batch_id", "severity", *_SPLIT_KEYS}, where)
        for key in ("batch_id", *_SPLIT_KEYS):
            _count(line[key], f"{where}.{key}")
        if line["severity"] not in SEVERITIES:
            raise ValueError(f"{where}.severity must be one of {', '.join(SEVERITIES)}, got {line['severity']!r}")
    if len(lines["batches"]) == batch_count:
        for key in _SPLIT_KEYS:
            if sum(line[key] for line in lines["batches"]) != counts[key]:
                raise ValueError(f"the batches' {key} do not add up to the split's")
    return cast(dict[str, Any], lines)


def _checked_result(item: Any, index: int) -> CheckResult:
    """One result, each key of the type ``CheckResult.to_dict`` gives it (``RESULT_KEYS``, read
    off the dataclass: the form is written once, in cola_core)."""
    where = f"results[{index}]"
    if not isinstance(item, dict):
        raise ValueError(f"{where} must be an object, got {json_type(item)}")
    optional = tuple(name for name, key in RESULT_KEYS.items() if key.optional and name not in _ALWAYS_WRITTEN)
    _exact_keys(item, set(RESULT_KEYS), where, optional=optional)
    for name, key in RESULT_KEYS.items():
        problem = key.problem(item[name]) if name in item else None
        if problem is not None:
            raise ValueError(f"{where}.{name} {problem}")
    if item["severity"] not in SEVERITIES:
        raise ValueError(f"{where}.severity must be one of {', '.join(SEVERITIES)}, got {item['severity']!r}")
    _count(item["failed_count"], f"{where}.failed_count")
    if "rows_checked" in item:
        _count(item["rows_checked"], f"{where}.rows_checked")
    if item["passed"] != (item["severity"] != "fail"):
        raise ValueError(f"{where}.passed is {item['passed']} for severity {item['severity']!r}")
    if item.get("evaluation_failed") is False:
        raise ValueError(f"{where}.evaluation_failed is only written when true")
    result = CheckResult.from_dict(item)
    if "details" in item and result.details != item["details"]:
        # CheckResult leaves out details over their bound; the engine never writes such.
        raise ValueError(f"{where}.details are over their bound of {DETAILS_CHARS:,} characters")
    return result


def _matches_rule(item: dict[str, Any], check: Any, index: int) -> None:
    """Result ``index`` is the one the block's rule at that place gives (type, code, id, name)."""
    expected = {"rule_type": check.rule_type, "code": check.code, "rule_id": check.rule_id}
    if check.name is not None:
        expected["check_name"] = check.name
    for key, value in expected.items():
        if item[key] != value:
            raise ValueError(
                f"results[{index}].{key} is {item[key]!r}, but the block's rule {index + 1} gives {value!r}"
            )


def _exact_keys(data: dict[str, Any], keys: set[str], where: str, optional: tuple[str, ...] = ()) -> None:
    missing = sorted(keys - set(data) - set(optional))
    unknown = sorted(set(data) - keys)
    if missing or unknown:
        problems = [f"missing {', '.join(missing)}"] * bool(missing) + [f"unknown {', '.join(unknown)}"] * bool(unknown)
        raise ValueError(f"{where} has {' and '.join(problems)}")


def _count(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{what} must be a whole number >= 0, got {value!r}")
    return value


_SUMMARY_KEYS = ("severity", "passed", "counts", "results")
_SPLIT_KEYS = ("valid_count", "invalid_count")
# The engine always writes a rule_id (CheckResult.to_dict() only when it is set).
_ALWAYS_WRITTEN = ("rule_id",)


def _short(error: BaseException) -> str:
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    return text if len(text) <= 200 else text[:200] + "..."
