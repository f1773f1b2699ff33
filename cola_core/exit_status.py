"""The exit statuses of the ``cola`` command, in one place.

The command line sets them, and the Airflow provider reads them back from ``spark-submit``:
``REFUSED`` is what tells a task that retrying cannot help.
"""

from __future__ import annotations

__all__ = ["FAILED", "INTERNAL", "OK", "REFUSED"]

OK = 0
# A check failed (the default of ``--fail-exit-code``; the operators pass 0 and read the results).
FAILED = 1
# The job refused its inputs: a malformed rule, source, output or option. Deterministic, so the
# provider never retries it.
REFUSED = 2
# Something that is none of the above: a bug, a dying JVM, a lost cluster.
INTERNAL = 3
