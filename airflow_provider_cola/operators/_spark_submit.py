"""Running the Cola job through ``SparkSubmitHook``: finding spark-submit, its environment, its log.

Airflow often runs from a virtualenv that is not activated, so the venv's ``bin/`` is not on
``PATH``. The hook only accepts the bare names ``spark-submit``/``spark2-submit``/
``spark3-submit``, and pyspark's ``spark-submit`` script itself runs whatever ``python3`` is
on ``PATH`` to find Spark's home. Both are solved by putting the running interpreter's
folder first on the ``PATH`` of the spark-submit process: the environment is given to that
process, and the worker's own ``os.environ`` is never changed.

``ColaSubmitHook`` uses ``SparkSubmitHook``'s public API (its constructor, ``submit`` with the
keyword arguments it hands to ``Popen``, ``on_kill``, ``spark_binary``), except in
:class:`_SubmitHookInternals`, the one place that touches the hook's private members.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections import deque
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook
from airflow.sdk.exceptions import AirflowException

from airflow_provider_cola._spark_target import SubmitTarget, submit_target
from airflow_provider_cola.errors import ColaJobError
from cola_core import exit_status
from cola_core.storage.session import driver_conf, jvm_noise, spark_defaults, uses_local_python

__all__ = [
    "ColaSubmitHook", "interpreter_bin_dir", "launcher_environment", "refused_message",
]

# Spark's log4j lines at INFO say what Spark did, not what went wrong, and Java stack frames
# say where; a failure message leaves both out so that the errors themselves fit in its tail.
_NOISE_LINE = re.compile(
    r"^(\d{2}/\d{2}/\d{2} \d{2}:\d{2}:\d{2} INFO |\{\"ts\":.*\"level\":\"INFO\"|\s+at \S+\(.*\)$|\s*\.\.\. \d+ more$)"
)
_TAIL_LINES = 30
_MASK = "******"


def interpreter_bin_dir(binary: str) -> Path | None:
    """The running interpreter's folder, when ``binary`` is there but not on ``PATH``.

    This is the case of an unactivated virtualenv with pyspark installed: its
    ``bin/spark-submit`` sits next to ``sys.executable``.
    """
    if shutil.which(binary):
        return None
    folder = Path(sys.executable).parent
    return folder if (folder / binary).is_file() else None


def launcher_environment(
    binary: str, master: str, env_vars: Mapping[str, Any] | None, conf: Mapping[str, Any] | None
) -> dict[str, str]:
    """What spark-submit's environment needs on top of this process's:

    - ``PATH`` starting with the interpreter's folder when spark-submit is only found there;
    - ``PYSPARK_PYTHON`` set to this interpreter, for a local or standalone master, unless the
      user set it (in the environment, ``env_vars`` or ``spark.pyspark.python``).
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
    return changes


def refused_message(message: str, kind: str | None = None) -> str:
    """The message of a task whose job refused its inputs (``kind``: what its record says it refused)."""
    what = "its command line" if kind == "usage" else "its inputs"
    return f"the Cola job refused {what} (exit code {exit_status.REFUSED}, so it is not retried): {message}"


def _env_vars_reach_only_spark_submit(target: SubmitTarget) -> bool:
    """Whether ``SparkSubmitHook`` gives ``env_vars`` to spark-submit's process and to nothing
    else: in client mode, on a master other than YARN (where they also go to the application
    master) and Kubernetes (where they go to the driver only)."""
    return target.deploy_mode == "client" and "yarn" not in target.master and "k8s" not in target.master


class _SubmitHookInternals(SparkSubmitHook):
    """Every use of ``SparkSubmitHook``'s private members, and nothing else.

    The hook has no public way to mask more than its own ``secret``/``password`` keys in the
    command line it logs, to see spark-submit's output lines before it logs and keeps them,
    or to give spark-submit's exit status. These three members do that; each is checked
    against the installed provider (its signature, and that a real spark-submit run goes
    through it) by ``tests/airflow_provider_cola/test_hook_internals.py``.
    """

    def __init__(self, *args: Any, secrets: Mapping[str, str] | None = None, **kwargs: Any) -> None:
        self._cola_log: deque[str] = deque(maxlen=400)
        self._cola_secrets = dict(secrets or {})
        super().__init__(*args, **kwargs)

    def _mask_cmd(self, connection_cmd: str | list[str]) -> str:
        """The hook's masking (it logs the command line through this), then every pair of ``secrets``."""
        masked = super()._mask_cmd(connection_cmd)
        # Longest first, so that a value holding another secret's value is masked whole.
        for key, value in sorted(self._cola_secrets.items(), key=lambda pair: -len(pair[1])):
            masked = masked.replace(f"{key}={value}", f"{key}={_MASK}")
        return masked

    def _process_spark_submit_log(self, itr: Iterator[Any]) -> None:
        """Keep spark-submit's lines for :meth:`ColaSubmitHook.log_tail`, without the JVM's
        start-up notice, before the hook logs them (and keeps its own tail)."""

        def keep(lines: Iterator[Any]) -> Iterator[Any]:
            for line in lines:
                text = str(line).rstrip("\n")
                if jvm_noise(text):
                    # The JVM's notice on every start: not worth a line of the task log.
                    continue
                self._cola_log.append(text)
                yield line

        super()._process_spark_submit_log(keep(itr))

    @property
    def exit_code(self) -> int | None:
        """spark-submit's exit status, once it has run (None before, or when it could not start)."""
        process = self._submit_sp
        return None if process is None else process.returncode


class ColaSubmitHook(_SubmitHookInternals):
    """``SparkSubmitHook`` that keeps Spark quiet, keeps the tail of its log and explains failures.

    In client deploy mode (the driver runs here, and its log is the task's log) the job gets
    ``cola_core.storage.session.quiet_spark_conf``'s settings: Spark logs at WARN with the
    ``log4j2.properties`` shipped in ``cola_core`` (appended to the user's
    ``spark.driver.extraJavaOptions``, never replacing them), unless the conf, the
    properties file (or spark-defaults.conf) or the environment name a log4j configuration
    of their own; and no console progress bar unless they set one. So the first lines after
    the spark-submit command line are the job's results table.

    spark-submit runs with :func:`launcher_environment`'s variables added to this process's
    environment, handed to its process (``os.environ`` is left alone). With ``env_vars`` on a
    YARN master the hook builds that environment itself from ``os.environ`` and ``env_vars``
    (which also go to the application master), so there spark-submit must be on ``PATH``.

    Every failure of ``submit`` (spark-submit missing, a non-zero exit) becomes a
    :class:`ColaJobError` whose message ends with the last meaningful lines of the log, once:
    the hook's own exception, which repeats them after the whole command line, is not chained.
    """

    def __init__(
        self,
        *,
        conn_id: str = "spark_default",
        conf: Mapping[str, Any] | None = None,
        env_vars: Mapping[str, Any] | None = None,
        properties_file: str | None = None,
        deploy_mode: str | None = None,
        spark_binary: str | None = None,
        secrets: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> None:
        """Take ``SparkSubmitHook``'s arguments, and ``secrets``: ``key: value`` pairs to mask.

        The hook masks only keys holding ``secret`` or ``password`` in the command it logs;
        every pair in ``secrets`` (see ``airflow_provider_cola._secrets.sensitive_settings``) is masked there too.
        """
        self.target: SubmitTarget = submit_target(conn_id, deploy_mode, spark_binary)
        user_env = {str(key): str(value) for key, value in (env_vars or {}).items()}
        settings = dict(conf or {})
        if self.target.deploy_mode == "client":
            # What spark-submit will see: this environment with the task's env_vars (for a
            # master other than YARN and Kubernetes, the hook starts spark-submit with them).
            environ = {**os.environ, **user_env}
            defaults = spark_defaults(properties_file, environ)
            # Quiet logs; a rule that exhausts a local JVM's memory fails alone instead of
            # killing the job (a local master runs its driver here: client mode); no call sites.
            settings = driver_conf(self.target.master, settings, defaults, environ)
        self.environment = launcher_environment(self.target.binary, self.target.master, env_vars, conf)
        if env_vars and _env_vars_reach_only_spark_submit(self.target):
            # The hook then starts spark-submit with this process's environment and env_vars,
            # whatever submit() is given: the launcher's variables go with them (the user's win).
            env_vars = {**self.environment, **env_vars}
        super().__init__(
            conn_id=conn_id, conf=settings, env_vars=dict(env_vars) if env_vars else None,
            properties_file=properties_file, deploy_mode=deploy_mode, spark_binary=spark_binary,
            secrets=secrets, **kwargs,
        )

    @property
    def binary(self) -> str:
        """The spark-submit the hook runs: ``spark_binary``, else the connection's ``spark-binary``."""
        return self.target.binary

    @property
    def master(self) -> str:
        """The master URL resolved from the connection (``yarn`` when there is none)."""
        return self.target.master

    @property
    def deploy_mode(self) -> str:
        """``client`` or ``cluster``."""
        return self.target.deploy_mode

    def log_tail(self) -> str:
        """The last lines of the Spark log, INFO lines and Java stack frames left out, secrets masked."""
        lines = [line for line in self._cola_log if line.strip() and not _NOISE_LINE.match(line)]
        if not lines:
            return "(spark-submit printed nothing)"
        return "\n".join(self._mask_cmd([line]) for line in lines[-_TAIL_LINES:])

    def submit(self, application: str = "", **kwargs: Any) -> str | None:
        """Run spark-submit, in this environment with :attr:`environment`'s variables, and wait for it.

        Raises:
            ColaJobError: spark-submit is missing, or it exited with a non-zero status
                (:attr:`exit_code` says which).
        """
        kwargs.setdefault("env", {**os.environ, **self.environment})
        try:
            return super().submit(application, **kwargs)
        except FileNotFoundError as error:
            raise ColaJobError(
                f"{self.binary} was not found: put Spark's bin/ on PATH, install pyspark next to "
                f"this Python ({sys.executable}), or set spark-binary on the connection"
            ) from error
        except AirflowException:
            # Not chained: the hook's exception says the same (the whole command line, which the
            # task log shows already, then its own tail of the log), so the tail came twice.
            raise ColaJobError(
                f"the Cola Spark job failed (spark-submit exit code {self.exit_code}).\n"
                f"Last lines of the Spark log:\n{self.log_tail()}"
            ) from None
