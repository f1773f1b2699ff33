"""Tests mirror the source tree (issue 11): every ``cola_core`` module has its test module.

``cola_core/<module>.py`` is tested in ``tests/cola_core/test_<module>.py`` and
``cola_core/<package>/<module>.py`` in ``tests/cola_core/test_<package>_<module>.py`` (a private
module's leading underscore dropped: ``_version`` -> ``test_version``). Helpers two test modules
would share live in ``tests/cola_helpers.py``; fixtures in ``tests/conftest.py``.

Cross-cutting suites test a promise of the whole engine rather than one module, and keep
their own names:

- ``tests/cola_core/test_fuzz_rules.py``: hostile rule blocks (hypothesis) give a ColaRuleError
  or results, never anything else;
- ``tests/cola_core/test_hostile_data.py``: bad data (impossible dates, line terminators, huge
  numbers) is measured, never a crash;
- ``tests/cola_core/test_independence.py``: cola_core needs only pyspark and the standard library;
- ``tests/cola_core/test_column_names.py``: every rule type on names with dots, spaces, backticks;
- ``tests/cola_core/test_identity.py``: rule ids, derived by the checks and assigned by the parser;
- ``tests/cola_core/test_kept_paths.py``: the import paths kept for users re-export exactly, and a
  package ``__init__`` holds only its docstring;
- ``tests/cola_core/test_connect.py``: over Spark Connect, the same results as classic mode, the
  requests Cola sends, and ``--remote``;
- ``tests/cola_core/test_custom_checks.py``: custom checks written as the seeds document them,
  through registry, planner and split together;
- ``tests/cola_core/test_fuzz_rule_text.py``: the parser and the rules schema accept the same text
  in every string field (hypothesis, under check-jsonschema's regex engines);
- ``tests/cola_core/test_rule_text_shown.py``: a rules author's text is shown as data wherever it
  goes (printed results and tables, profiles, pages);
- ``tests/cola_core/test_guards_runtime.py``: what no guard can read before Spark (a stack
  overflow, Spark's program limits) fails the rule at fault, and the others are measured;
- ``tests/test_peer_parity.py``: the same answers as the hand-written peers' checks;
- ``tests/test_run_batch_spark.py``: a whole batch, each rule alone and in one block;
- ``tests/test_docs_examples.py``, ``tests/test_import_cycles.py``, ``tests/test_environment.py``:
  the docs' examples, the layer contract, the environment.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "cola_core"
TESTS = ROOT / "tests" / "cola_core"

# Modules tested through another module's tests, and why. Keep this short: a module that can
# be tested on its own gets its own test module instead.
EXEMPT = {
    # Package __init__s only re-export.
    "cola_core": "its names are the public API, which test_public_api.py checks exactly",
    "cola_core.checks": "the built-in table; test_checks_base.py checks every entry's capabilities, "
                        "test_ruleset_registry.py the registry it seeds",
    # Packages that only name themselves, and import paths kept for users (re-exports).
    **{
        f"cola_core.{name}": "a package docstring or a kept path's re-exports; test_kept_paths.py checks each"
        for name in ("common", "guards", "language", "storage", "ruleset", "plan", "job", "cli", "history", "report",
                     "params", "registry", "pages", "contracts")
    },
    # Entry points that only call into a tested module.
    "cola_core.__main__": "`python -m cola_core` calls cli.main; test_cli_main.py runs the command that way",
    "cola_core._version": "one constant; test_cli_main.py checks that `cola --version` prints it",
    # Private parts reached only through the public module built on them.
    "cola_core.guards.sqllex": "the SQL lexer of sqlguard; test_guards_sqlguard.py drives it with a lexer corpus",
    "cola_core.guards.backtracking": "the regex backtracking analysis behind compile_pattern; "
                                      "test_guards_regex.py refuses each catastrophic shape",
    "cola_core.common.columns": "column resolution; test_column_names.py runs every rule type on hostile names",
    "cola_core.common.spark_errors": "reads exceptions only a live JVM raises; test_storage_readwrite.py, test_cli_main.py and "
                               "test_hostile_data.py assert the messages of real failures it classifies",
    # Modules split out of a larger one by concern, still tested through the tests of the module
    # they came from (each is worth a test module of its own).
    "cola_core.checks.differences": "agreement within a difference; test_checks_reference.py and "
                                    "test_checks_reference_match.py assert reconcile's and reference_match's tolerances",
    "cola_core.checks.reference_base": "what the reference rules share; test_checks_reference.py tests comparison_type "
                                       "and the reference specs",
    "cola_core.checks.row_count": "the row_count check; test_checks_core.py tests both of its forms",
    "cola_core.cli.usage": "usage errors and their record paths; test_cli_main.py and test_cli_profiling.py run the "
                           "refused command lines",
    "cola_core.guards.sqltree": "the expression tree behind sqlsize; test_guards_sqlsize.py reads every shape through it",
    "cola_core.guards.sqlvalues": "what each call builds, for sqlsize; test_guards_sqlsize.py",
    "cola_core.guards.sqltime": "constant dates and intervals, for sqlsize's sequence bound; test_guards_sqlsize.py",
    "cola_core.job.stream_records": "a streamed batch's record and digest; test_job_ledger.py and test_job_stream.py",
    "cola_core.ruleset.suggestions_file": "the suggestions' YAML and JSON; test_ruleset_suggestions.py and "
                                          "test_ruleset_vetting.py read them back",
    "cola_core.storage.hadoop_files": "Hadoop's file system for publish; test_storage_publish.py",
    "cola_core.storage.local_files": "the Connect client's file system; test_connect.py runs it over a real server",
}


def modules() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        found.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


def mirror_of(module: str) -> Path:
    """``cola_core.guards.regex`` -> ``tests/cola_core/test_guards_regex.py``."""
    parts = [part.lstrip("_") for part in module.split(".")[1:]]
    return TESTS / f"test_{'_'.join(parts)}.py"


def test_every_module_has_its_test_module():
    missing = [module for module in modules() if module not in EXEMPT and not mirror_of(module).is_file()]
    assert missing == []


def test_every_exemption_is_still_needed_and_names_tests_that_exist():
    assert [module for module in EXEMPT if module not in modules()] == []
    assert [module for module in EXEMPT if module != "cola_core" and mirror_of(module).is_file()] == []
    named = {name for reason in EXEMPT.values() for name in re.findall(r"test_\w+\.py", reason)}
    assert sorted(name for name in named if not (TESTS / name).is_file()) == []


CROSS_CUTTING = {
    "test_fuzz_rules", "test_hostile_data", "test_independence", "test_column_names", "test_custom_checks",
    "test_identity", "test_connect", "test_kept_paths", "test_fuzz_rule_text", "test_rule_text_shown",
    "test_guards_runtime",
}


def test_every_engine_test_module_mirrors_a_module_or_is_a_listed_suite():
    mirrors = {mirror_of(module).stem for module in modules() if module not in EXEMPT}
    strays = sorted(path.stem for path in TESTS.glob("test_*.py") if path.stem not in mirrors | CROSS_CUTTING)
    # test_public_api tests the package __init__ (exempt above under its own name).
    assert strays == ["test_public_api"]
    assert all(f"tests/cola_core/{name}.py" in __doc__ for name in CROSS_CUTTING)
