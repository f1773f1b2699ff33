"""Import paths kept for users, and package ``__init__``s that only name their package.

The engine's modules live in packages by concern (``docs/architecture.md``). A few paths that
users' code and the documentation import from are kept as modules that only re-export:
``cola_core.params``, ``cola_core.registry`` and ``cola_core.contracts`` (every name of the module
that defines them),
``cola_core.pages`` (every name the pages' one module had, now from the three that define them),
``cola_core.history`` (every public name of its store, append, baselines, retention and
summaries modules) and ``cola_core.report`` (the public names of its package),
``cola_core.cli`` (every name its one module had: ``main``, the console script, and the ``EXIT_*`` names). Every other package ``__init__``
holds a docstring and nothing else, so importing a package never imports its modules.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "cola_core"

# Per kept path, the modules that define its names, each with the names it lends (None: every
# name of the module's __all__). The HTML pages are three modules; cola_core.pages keeps the
# names the one module they were had, so page_parts lends only those of its names.
KEPT = {
    "cola_core.params": {"cola_core.language.params": None},
    "cola_core.registry": {"cola_core.ruleset.registry": None},
    "cola_core.contracts": {"cola_core.language.contracts": None},
    "cola_core.pages": {
        "cola_core.report.pages": None,
        "cola_core.report.index_page": None,
        "cola_core.report.page_parts": ["SEVERITY_COLOURS", "TEXT_BYTES", "TIP_BYTES", "TrendPoint", "sparkline"],
    },
    "cola_core.history": {f"cola_core.history.{name}": None for name in ("append", "baselines", "retention", "store", "summaries")},
    "cola_core.report": {"cola_core.report.pages": ["render_html", "write_page"],
                         "cola_core.report.index_page": ["render_index"]},
    "cola_core.cli": {"cola_core.cli.main": None},
}


def _ruff_order(name: str) -> tuple[int, str]:
    """Where ruff's RUF022 puts a name in an ``__all__``: constants, then classes, then the rest."""
    return (0 if name.isupper() else 1 if name[:1].isupper() else 2, name)


@pytest.mark.parametrize("kept", sorted(KEPT))
def test_a_kept_path_re_exports_the_defining_modules_names(kept):
    module = importlib.import_module(kept)
    lent = {name: importlib.import_module(defining)
            for defining, names in KEPT[kept].items()
            for name in (names if names is not None else importlib.import_module(defining).__all__)}
    assert module.__all__ == sorted(lent, key=_ruff_order)
    assert [name for name in lent if getattr(module, name) is not getattr(lent[name], name)] == []


# The history's modules whose public names (``__all__``) ``cola_core.history`` re-exports; not
# ``index``, the attempt selection the Airflow plugin imports on its own.
HISTORY_MODULES = [
    "cola_core.history.append",
    "cola_core.history.baselines",
    "cola_core.history.retention",
    "cola_core.history.store",
    "cola_core.history.summaries",
]


def test_the_history_package_re_exports_exactly_the_public_names_of_its_modules():
    package = importlib.import_module("cola_core.history")
    sources = [importlib.import_module(name) for name in HISTORY_MODULES]
    defined = [(name, source) for source in sources for name in source.__all__]
    # Every public name once, and nothing else: a name two modules exported would appear twice here.
    assert sorted(package.__all__) == sorted(name for name, _ in defined)
    assert [name for name, source in defined if getattr(package, name) is not getattr(source, name)] == []


def test_the_custom_check_imports_of_the_documentation_still_work():
    from cola_core.params import STRING, Param
    from cola_core.registry import register_check

    assert (Param.__module__, STRING.__class__.__module__) == ("cola_core.language.params", "cola_core.language.params")
    assert register_check.__module__ == "cola_core.ruleset.registry"


def test_every_other_package_init_holds_only_its_docstring():
    inits = sorted(path.parent.name for path in PACKAGE.glob("*/__init__.py"))
    assert inits == ["checks", "cli", "common", "guards", "history", "job", "language", "plan", "report", "ruleset", "storage"]
    bare = [name for name in inits if name not in {"checks", "cli", "history", "report"}]
    for name in bare:
        body = ast.parse((PACKAGE / name / "__init__.py").read_text()).body
        assert len(body) == 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant), name
