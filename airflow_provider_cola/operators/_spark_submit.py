"""Running the Cola job through ``SparkSubmitHook``: finding spark-submit, its environment, its log.

Airflow often runs from a virtualenv that is not activated, so the venv's ``bin/`` is not on
``PATH``. The hook only accepts the bare names ``spark-submit``/``spark2-submit``/
``spark3-submit``, and pyspark's ``spark-submit`` script itself runs whatever ``python3`` is
on ``PATH`` to find Spark's home. Both are solved by putting the running interpreter's
folder first on ``PATH`` while the hook runs spark-submit.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections import deque
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from airflow.providers.apache.spark.hooks.spark_submit import DEFAULT_SPARK_BINARY, SparkSubmitHook
from airflow.sdk.exceptions import AirflowException

from airflow_provider_cola.errors import ColaJobError, ColaJobRefused
from cola_core import exit_status
from cola_core.session import jvm_noise, quiet_spark_conf, spark_defaults, survivable_conf, uses_local_python

__all__ = ["ColaSubmitHook", "interpreter_bin_dir", "launcher_environment", "refused_message"]

# Spark's log4j lines at INFO say what Spark did, not what went wrong, and Java stack frames
# say where; a failure message leaves both out so that the errors themselves fit in its tail.
_NOISE_LINE = re.compile(
    r"^(\d{2}/\d{2}/\d{2} \d{2}:\d{2}:\d{2} INFO |\{\"ts\":.*\"level\":\"INFO\"|\s+at \S+\(.*\)$|\s*\.\.\. \d+ more$)"
)
_TAIL_LINES = 30
_MASK = "******"
# cola exits 2 for a usage, source or rule error: the same inputs would be refused again.
EXIT_REFUSED = exit_status.REFUSED
# The lines the job prints for such an error: "cola: error: ..." (argparse: "cola check: error: ...").
_JOB_ERROR = re.compile(r"^cola(?: [a-z]+)?: error: ")
_LOG_LINE = re.compile(r"^\d{2}/\d{2}/\d{2} \d{2}:\d{2}:\d{2} |^\{\"ts\":")


def interpreter_bin_dir(binary: str) -> Path | None:
    """The running interpreter's folder, when ``binary`` is there but not on ``PATH``.

    This is the case of an unactivated virtualenv with pyspark installed: its
    ``bin/spark-submit`` sits next to ``sys.executable``.
    """
    if shutil.which(binary):
        return None
    folder = Path(sys.executable).parent
    return folder if (folder / binary).is_file() else None


@contextmanager
def launcher_environment(
    binary: str, master: str, env_vars: Mapping[str, Any] | None, conf: Mapping[str, Any] | None
) -> Iterator[dict[str, str]]:
    """Set up this process's environment for the spark-submit the hook is about to start.

    The hook starts spark-submit (and, on a cluster, its status and kill commands) with this
    process's environment, so the changes are made here and undone on exit:

    - ``PATH`` starts with the interpreter's folder when spark-submit is only found there;
    - ``PYSPARK_PYTHON`` is this interpreter, for a local or standalone master, unless the
      user set it (in the environment, ``env_vars`` or ``spark.pyspark.python``).

    Yields:
        the variables that were set, for the log.
    """
    changes: dict[str, str] = {}
    folder = interpreter_bin_dir(binary)
    if folder is not None:
        changes["PATH"] = os.pathsep.join([str(folder), os.environ.get("PATH", "")])
    user_set_python = (
        "PYSPARK_PYTHON" in os.environ
        or "PYSPARK_PYTHON" in (env_vars or {})
        or "spark.pyspark.python" in (conf or {})
    )
    if not user_set_python and uses_local_python(master):
        changes["PYSPARK_PYTHON"] = sys.executable
    saved = {name: os.environ.get(name) for name in changes}
    os.environ.update(changes)
    try:
        yield changes
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def refused_message(message: str) -> str:
    """The message of a task whose job refused its inputs."""
    return f"the Cola job refused its inputs (exit code {EXIT_REFUSED}, so it is not retried): {message}"


class ColaSubmitHook(SparkSubmitHook):
    """``SparkSubmitHook`` that keeps Spark quiet, keeps the tail of its log and explains failures.

    In client deploy mode (the driver runs here, and its log is the task's log) the job gets
    ``cola_core.session.quiet_spark_conf``'s settings: Spark logs at WARN with the
    ``log4j2.properties`` shipped in ``cola_core`` (appended to the user's
    ``spark.driver.extraJavaOptions``, never replacing them), unless the conf, the
    properties file (or spark-defaults.conf) or the environment name a log4j configuration
    of their own; and no console progress bar unless they set one. So the first lines after
    the spark-submit command line are the job's results table.

    Every failure of ``submit`` (spark-submit missing, a non-zero exit) becomes a
    :class:`ColaJobError` whose message ends with the last meaningful lines of the log, once:
    the hook's own exception, which repeats them after the whole command line, is not chained.
    """

    def __init__(self, *args: Any, secrets: Mapping[str, str] | None = None, **kwargs: Any) -> None:
        """Take ``SparkSubmitHook``'s arguments, and ``secrets``: ``key: value`` pairs to mask.

        The hook masks only keys holding ``secret`` or ``password`` in the command it logs;
        every pair in ``secrets`` (see ``airflow_provider_cola._secrets.sensitive_settings``) is masked there too.
        """
        super().__init__(*args, **kwargs)
        self._cola_log: deque[str] = deque(maxlen=400)
        self._cola_secrets = dict(secrets or {})
        if self.deploy_mode == "client":
            # What spark-submit will see: this environment with the task's env_vars (for a
            # master other than YARN and Kubernetes, the hook starts spark-submit with them).
            environ = {**os.environ, **{str(k): str(v) for k, v in (self._env_vars or {}).items()}}
            defaults = spark_defaults(self._properties_file, environ)
            self._conf = quiet_spark_conf(self._conf, defaults, environ)
            # A rule that exhausts a local JVM's memory fails alone instead of killing the job
            # (a local master runs its driver here: client mode).
            self._conf = survivable_conf(self._connection["master"], self._conf, defaults)

    def _mask_cmd(self, connection_cmd: str | list[str]) -> str:
        masked = super()._mask_cmd(connection_cmd)
        # Longest first, so that a value holding another secret's value is masked whole.
        for key, value in sorted(self._cola_secrets.items(), key=lambda pair: -len(pair[1])):
            masked = masked.replace(f"{key}={value}", f"{key}={_MASK}")
        return masked

    @property
    def binary(self) -> str:
        """The spark-submit the hook runs: ``spark_binary``, else the connection's ``spark-binary``.

        ``spark_binary`` itself stays ``None`` when the connection cannot be read; the hook then
        runs ``spark-submit``, and so this says.
        """
        return str(self._connection["spark_binary"] or DEFAULT_SPARK_BINARY)

    @property
    def master(self) -> str:
        """The master URL resolved from the connection (``yarn`` when there is none)."""
        return str(self._connection["master"])

    @property
    def deploy_mode(self) -> str:
        """``client`` or ``cluster``."""
        return self._connection["deploy_mode"] or "client"

    def _process_spark_submit_log(self, itr: Iterator[Any]) -> None:
        def keep(lines: Iterator[Any]) -> Iterator[Any]:
            for line in lines:
                text = str(line).rstrip("\n")
                if jvm_noise(text):
                    # The JVM's notice on every start: not worth a line of the task log.
                    continue
                self._cola_log.append(text)
                yield line

        super()._process_spark_submit_log(keep(itr))

    def log_tail(self) -> str:
        """The last lines of the Spark log, INFO lines and Java stack frames left out, secrets masked."""
        lines = [line for line in self._cola_log if line.strip() and not _NOISE_LINE.match(line)]
        if not lines:
            return "(spark-submit printed nothing)"
        return "\n".join(self._mask_cmd([line]) for line in lines[-_TAIL_LINES:])

    def job_error(self) -> str | None:
        """What the job printed after ``cola: error:`` (with the lines that follow it), if it did."""
        lines = self.log_tail().splitlines()
        starts = [index for index, line in enumerate(lines) if _JOB_ERROR.match(line)]
        if not starts:
            return None
        first = lines[starts[0]]
        message = [first[_JOB_ERROR.match(first).end():]]  # type: ignore[union-attr]
        for line in lines[starts[0] + 1:]:
            if _LOG_LINE.match(line) or _JOB_ERROR.match(line):
                break
            message.append(line)
        return "\n".join(message)

    def submit(self, application: str = "", **kwargs: Any) -> str | None:
        """Run spark-submit and wait for it; raises :class:`ColaJobError` when it fails."""
        try:
            return super().submit(application, **kwargs)
        except FileNotFoundError as error:
            raise ColaJobError(
                f"{self.binary} was not found: put Spark's bin/ on PATH, install pyspark next to "
                f"this Python ({sys.executable}), or set spark-binary on the connection"
            ) from error
        except AirflowException:
            process = self._submit_sp
            code = process.returncode if process is not None else None
            if code == EXIT_REFUSED and self.deploy_mode == "client":
                # In client mode spark-submit exits with the job's own status.
                message = self.job_error() or f"it printed no error; last lines of the Spark log:\n{self.log_tail()}"
                raise ColaJobRefused(refused_message(message)) from None
            # Not chained: the hook's exception says the same (the whole command line, which the
            # task log shows already, then its own tail of the log), so the tail came twice.
            raise ColaJobError(
                f"the Cola Spark job failed (spark-submit exit code {code}).\n"
                f"Last lines of the Spark log:\n{self.log_tail()}"
            ) from None
