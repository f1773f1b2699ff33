"""The Cola job's rules file: where the driver reads the rules, and what is shipped for it.

The rest of the job's command line is ``cola_core.job.spec.JobSpec.to_argv()`` of the job the
operator builds (``ColaCheckOperator._job_spec``).
"""

from __future__ import annotations

import json
from pathlib import Path

from airflow_provider_cola._rules import RuleBlock

__all__ = ["rules_file"]


def rules_file(block: RuleBlock, workdir: Path, deploy_mode: str) -> tuple[str, list[str]]:
    """The ``--rules`` argument, and the files to ship for it.

    Rules given as a list are written to ``workdir/rules.json``. In cluster mode the driver
    runs elsewhere: the file travels with ``--files`` and is read from the driver's working
    folder by its name. A contract's schema object named after ``#`` (``orders.yaml#orders``)
    stays on the argument, never on the shipped file's path (where ``#`` would rename it).
    """
    path, chosen = block.path, ""
    if path is None:
        path = workdir / "rules.json"
        path.write_text(json.dumps(block.rules, indent=2), encoding="utf-8")
    elif not path.exists() and "#" in path.name:
        name, fragment = path.name.rsplit("#", 1)
        path, chosen = path.with_name(name), f"#{fragment}"
    path = path.resolve()
    if deploy_mode == "cluster":
        return path.name + chosen, [str(path)]
    return str(path) + chosen, []
