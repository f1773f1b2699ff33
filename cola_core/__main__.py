"""``python -m cola_core``: the ``cola`` command line (see :mod:`cola_core.cli.main`)."""

from __future__ import annotations

import sys

from cola_core.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
