"""The application that spark-submit runs for the ``cola`` command.

    spark-submit --py-files cola_core.zip /path/to/cola_core/_job_entry.py check --rules ...

spark-submit runs a script, not a module, so this file uses absolute imports only (a package's
``__main__.py`` with relative imports fails there). ``cola_core.shipping.job_entry_path()``
gives its path and ``cola_core.shipping.py_files_zip()`` builds the zip.
"""

from __future__ import annotations

import os
import sys

# Python puts this script's folder first on sys.path, and that folder is the cola_core package
# itself: its modules (io.py, cli.py, ...) must not be importable as top-level modules.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or os.curdir) != _HERE]

from cola_core.cli import main  # noqa: E402  (after the sys.path fix, on purpose)

if __name__ == "__main__":
    sys.exit(main())
