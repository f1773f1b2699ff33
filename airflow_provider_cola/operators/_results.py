"""Reading back the results file the Cola job wrote, and refusing anything that is not whole.

A results file that is missing, empty, not JSON, or not exactly what
``cola_core.report.summarise`` produces is never read as a pass: it raises
:class:`~airflow_provider_cola.errors.ColaJobError` with the tail of the Spark log.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any, Callable

from cola_core import CheckResult, ColaError
from cola_core.report import summarise

from airflow_provider_cola.errors import ColaConfigError, ColaJobError

__all__ = ["ResultsFile", "local_path"]


def local_path(location: str) -> str:
    """``location`` without its ``file:`` scheme (other schemes are kept)."""
    return location.removeprefix("file://") if location.startswith("file://") else location.removeprefix("file:")


class ResultsFile:
    """Where one run's results file is written, and how it is read back.

    In client deploy mode the driver runs here, so a file in the task's temporary folder is
    enough. With ``results_uri`` (needed in cluster deploy mode, where the driver runs on the
    cluster) each run writes a uniquely named file under that folder, which must be storage
    both the driver and this worker mount (NFS, a shared volume). A stale file from an
    earlier run can never be read, and the file is removed once read.

    Attributes:
        target: the path or URI passed to the job as ``--results``.
    """

    def __init__(self, workdir: str | Path, results_uri: str | None = None) -> None:
        if results_uri and "://" in local_path(results_uri):
            raise ColaConfigError(
                f"results_uri must be a folder on storage that this worker and the Spark driver both "
                f"mount (a path or a file: URI), got {results_uri!r}"
            )
        if results_uri:
            self.target = f"{results_uri.rstrip('/')}/cola-results-{uuid.uuid4().hex}.json"
        else:
            self.target = str(Path(workdir) / "results.json")

    def _path(self) -> Path:
        return Path(local_path(self.target))

    def read(self, *, split: bool, log_tail: Callable[[], str]) -> dict[str, Any]:
        """The results summary, checked to be exactly what ``summarise`` would produce.

        Args:
            split: whether the job was a split (whose summary carries the row counts).
            log_tail: gives the tail of the Spark log, for the error message.

        Raises:
            ColaJobError: the file is missing, unreadable or corrupt.
        """
        path = self._path()
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError as error:
            raise self._error("the Cola Spark job finished but wrote no results file", log_tail) from error
        except OSError as error:
            raise self._error(f"cannot read the results file ({error})", log_tail) from error
        try:
            summary = _checked_summary(json.loads(text), split)
        except (ValueError, TypeError, KeyError, ColaError) as error:
            raise self._error(f"the results file is corrupt ({_short(error)})", log_tail) from error
        self.discard()
        return summary

    def discard(self) -> None:
        """Remove the results file, if it is there (best effort)."""
        try:
            self._path().unlink()
        except OSError:
            pass

    def _error(self, problem: str, log_tail: Callable[[], str]) -> ColaJobError:
        return ColaJobError(f"{problem}: {self.target}\nLast lines of the Spark log:\n{log_tail()}")


def _checked_summary(data: Any, split: bool) -> dict[str, Any]:
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise ValueError("expected an object with a 'results' list")
    results = [CheckResult.from_dict(item) for item in data["results"]]
    counts = {} if not split else {"valid_count": data["valid_count"], "invalid_count": data["invalid_count"]}
    expected = summarise(results, **counts)
    if data != expected:
        differing = sorted(key for key in {*data, *expected} if data.get(key) != expected.get(key))
        raise ValueError(f"its {', '.join(differing)} do not match its results")
    return expected


def _short(error: BaseException) -> str:
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    return text if len(text) <= 200 else text[:200] + "..."
