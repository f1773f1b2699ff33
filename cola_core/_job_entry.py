"""The application that spark-submit runs for the ``cola`` command.

    spark-submit --py-files cola_core.zip /path/to/cola_core/_job_entry.py check --rules ...

spark-submit runs a script, not a module, so this file uses absolute imports only (a package's
``__main__.py`` with relative imports fails there). ``cola_core.shipping.job_entry_path()``
gives its path and ``cola_core.shipping.py_files_zip()`` builds the zip.
"""

from __future__ import annotations

import sys

# Python puts this script's folder, the cola_core package itself, first on sys.path. That is
# harmless because no module of cola_core is named like a standard-library one (a test says so).
from cola_core.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
