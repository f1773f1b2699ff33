"""The spark-submit arguments the operators take, declared once.

Each is a keyword argument of ``ColaCheckOperator.__init__`` (spelled out there, since Airflow
and users read the signature) and of ``SparkSubmitHook``, with the same name and default.
The operator's template fields, the arguments refused over Spark Connect and the hook's
arguments are derived from :data:`SUBMIT_ARGUMENTS`;
``tests/airflow_provider_cola/test_operator_args.py`` checks that the signature agrees.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["SUBMIT_ARGUMENTS", "SUBMIT_ONLY", "SUBMIT_TEMPLATE_FIELDS", "SubmitArgument", "submit_arguments"]


@dataclass(frozen=True)
class SubmitArgument:
    """One spark-submit argument of the operators.

    Attributes:
        name: the keyword argument, of the operator and of ``SparkSubmitHook``.
        default: its default, in both.
        templated: whether it is one of the operator's template fields.
        submit_only: whether it only means something to spark-submit: over Spark Connect,
            giving one is a mistake to point out rather than to ignore (``conf`` is applied
            to the session; ``name``, ``verbose`` and ``status_poll_interval`` are harmless).
    """

    name: str
    default: Any = None
    templated: bool = False
    submit_only: bool = True


# In the order of the operator's signature (and so of its template fields).
SUBMIT_ARGUMENTS: tuple[SubmitArgument, ...] = (
    SubmitArgument("conf", templated=True, submit_only=False),
    SubmitArgument("files", templated=True),
    SubmitArgument("py_files", templated=True),
    SubmitArgument("archives", templated=True),
    SubmitArgument("jars", templated=True),
    SubmitArgument("packages", templated=True),
    SubmitArgument("exclude_packages"),
    SubmitArgument("repositories"),
    SubmitArgument("driver_class_path", templated=True),
    SubmitArgument("total_executor_cores"),
    SubmitArgument("executor_cores"),
    SubmitArgument("executor_memory"),
    SubmitArgument("driver_memory"),
    SubmitArgument("num_executors"),
    SubmitArgument("env_vars", templated=True),
    SubmitArgument("name", templated=True, submit_only=False),
    SubmitArgument("keytab", templated=True),
    SubmitArgument("principal", templated=True),
    SubmitArgument("proxy_user", templated=True),
    SubmitArgument("verbose", default=False, submit_only=False),
    SubmitArgument("spark_binary"),
    SubmitArgument("properties_file", templated=True),
    SubmitArgument("yarn_queue"),
    SubmitArgument("deploy_mode"),
    SubmitArgument("status_poll_interval", default=1, submit_only=False),
)

SUBMIT_TEMPLATE_FIELDS: tuple[str, ...] = tuple(argument.name for argument in SUBMIT_ARGUMENTS if argument.templated)
# With each one's default: given (not the default) over Spark Connect, it is refused.
SUBMIT_ONLY: dict[str, Any] = {
    argument.name: argument.default for argument in SUBMIT_ARGUMENTS if argument.submit_only
}


def submit_arguments(task: Any) -> dict[str, Any]:
    """The values of :data:`SUBMIT_ARGUMENTS` on ``task``, by name (the hook's keyword arguments)."""
    return {argument.name: getattr(task, argument.name) for argument in SUBMIT_ARGUMENTS}
