"""A kept import path: a custom check's parameter specs, defined in :mod:`cola_core.language.params`.

Every name of that module's ``__all__``, so that the two cannot drift apart.
"""

from __future__ import annotations

from cola_core.language.params import *  # noqa: F403
from cola_core.language.params import __all__ as __all__
