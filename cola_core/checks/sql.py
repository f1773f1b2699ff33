"""``sql``: free-form SQL over a temp view of the DataFrame (``_validation_df`` by default).

Two modes, one per rule:

- ``query``: returns a single boolean; the rule passes when it is true (write the invariant);
- ``failed_rows``: returns the offending rows; the rule fails when any come back, and the
  rows are on ``result.failed_rows``. With an ``output`` config, the engine writes the rows
  of a failing rule there once the block has run (``failed_rows_output``), like every
  output of the product.

The check runs its own action: the query is arbitrary SQL over the whole DataFrame, so it
cannot be one more aggregate Column of the block's scan.

The query is refused at parse time unless it is one read-only ``SELECT``/``WITH`` statement
(``cola_core.guards.sqlguard``), because ``spark.sql`` executes DDL and DML the moment it is called;
Spark's own parser confirms it before the query runs.

The rule's ``view_name`` is the name the query uses for the DataFrame. The DataFrame is
registered under a fresh name of its own, and the query's references to ``view_name`` are
rewritten to it, so a rule never replaces a view or table the user has, and two blocks
running at once in one session never see each other's data. The view is dropped after the
query is analysed: the DataFrames the rule returns hold the resolved plan.
"""

from __future__ import annotations

import contextlib
import re
import uuid
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from cola_core.checks.base import BaseCheck, Capability
from cola_core.common.sessions import is_classic
from cola_core.common.spark_errors import first_line, is_unreachable
from cola_core.errors import ColaOutputError, ColaRuleError
from cola_core.guards.sqlguard import SWITCH, check_query, confirm_query, outside_access_allowed, rename_relation
from cola_core.language.params import MAPPING, STRING, Param
from cola_core.language.result import CheckResult
from cola_core.storage.specs import OutputSpec, parse_output

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["DEFAULT_VIEW", "SqlCheck"]

DEFAULT_VIEW = "_validation_df"

_VIEW_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_VIEW_PREFIX = "_cola_view_"
# The names Spark may show for the rule's view: Cola's own, or pyspark's over Spark Connect.
_FRESH_VIEW = re.compile(f"(?:{_VIEW_PREFIX}|_pyspark_connect_temp_view_)[0-9a-f]{{32}}")
_POSITION = re.compile(r";?\s*line \d+ pos \d+;?\s*$")


class SqlCheck(BaseCheck):
    """A read-only SQL query over the data: its rows are the failures, or its one number is judged.

    It runs its own Spark action: the query is arbitrary SQL, so it cannot share the scan.
    """

    capabilities = frozenset({Capability.SELF_RUNNING})
    supports_where = False
    params_spec = {
        "query": Param(
            STRING,
            description="Read-only SELECT or WITH query returning one boolean; the rule passes when it is true",
        ),
        "failed_rows": Param(
            STRING,
            description="Read-only SELECT or WITH query returning the offending rows; the rule fails if any come back",
        ),
        "error_message": Param(STRING, description="Message of a failure (default 'SQL validation failed')"),
        "view_name": Param(
            STRING,
            description="Name the SQL uses for the DataFrame, a plain identifier (default _validation_df)",
        ),
        "output": Param(
            MAPPING,
            description="Output config the failed_rows are written to; trusted rules only (allow_external_access)",
        ),
    }

    @classmethod
    def validate(cls, params: Mapping[str, Any], rule_type: str) -> None:
        modes = [key for key in ("query", "failed_rows") if key in params]
        if len(modes) != 1:
            problem = "uses both 'query' and 'failed_rows'" if modes else "needs 'query' or 'failed_rows'"
            raise ColaRuleError(
                f"{problem}; give exactly one: 'query' returns one boolean (true = pass), "
                "'failed_rows' returns the offending rows"
            )
        check_query(params[modes[0]], modes[0])
        view = params.get("view_name", DEFAULT_VIEW)
        if not isinstance(view, str) or not _VIEW_NAME.fullmatch(view):
            raise ColaRuleError(f"'view_name' {view!r} must be a plain identifier such as '_validation_df'")
        if "output" in params and "failed_rows" not in params:
            raise ColaRuleError("'output' only applies with 'failed_rows' (there are no rows to write in query mode)")
        if "output" in params:
            try:
                parse_output(params["output"])
            except ColaOutputError as error:
                raise ColaRuleError(f"'output' is not a valid output config: {error}") from error
            if not outside_access_allowed():
                # The rules author would choose where the engine writes, and could overwrite any
                # path or table the job can reach.
                raise ColaRuleError(
                    "'output' writes the failed rows to a place the rules file chooses, which is refused by "
                    f"default; for trusted rules only, run with {SWITCH}"
                )

    def render_code(self) -> str:
        return self.rule_type

    def columns_used(self, df: DataFrame) -> list[str]:
        return []

    @property
    def failed_rows_output(self) -> OutputSpec | None:
        return parse_output(self.params["output"]) if "output" in self.params else None

    @property
    def error_message(self) -> str:
        return str(self.params.get("error_message", "SQL validation failed"))

    def analyse(self, df: DataFrame) -> None:
        """Spark's parser confirms the text is a query (never a command), and Spark analyses
        it against the DataFrame (an unknown column or table is a rule error): no job runs."""
        from pyspark.errors import PySparkException

        with self._registered(df) as query:
            try:
                query().schema
            except PySparkException as error:
                if is_unreachable(error):
                    raise
                # Spark saw the rewritten text: its positions and the fresh view name are not
                # the user's, so they are left out of the message.
                message = _FRESH_VIEW.sub(self._view_name, _POSITION.sub("", first_line(error)))
                raise ColaRuleError(f"Spark cannot analyse '{self._mode}': {message}") from error

    def run(self, df: DataFrame) -> CheckResult:
        with self._registered(df) as query:
            if self._mode == "query":
                return self._run_query(query())
            failed_rows = query()
        failed = failed_rows.count()
        if failed:
            message = f"{self.error_message} ({failed} failed rows)"
            return CheckResult(self.rule_type, False, message, failed, failed_rows=failed_rows)
        return CheckResult(self.rule_type, True, "sql: no failed rows", failed_rows=failed_rows)

    @property
    def _view_name(self) -> str:
        return str(self.params.get("view_name", DEFAULT_VIEW))

    @property
    def _mode(self) -> str:
        return "query" if "query" in self.params else "failed_rows"

    def sql_text(self) -> str | None:
        return str(self.params[self._mode])

    @contextlib.contextmanager
    def _registered(self, df: DataFrame) -> Iterator[Callable[[], DataFrame]]:
        """The rule's SQL over ``df`` under a fresh name, as a function giving its DataFrame."""
        spark = df.sparkSession
        text = self.params[self._mode]
        confirm_query(spark, text, self._mode)
        view = f"{_VIEW_PREFIX}{uuid.uuid4().hex}"
        sql = rename_relation(text, self._view_name, view)
        if not is_classic(spark):
            # Spark Connect resolves a view's name whenever the query runs, which may be after
            # this block has dropped it (the failed rows are written later). The DataFrame
            # travels with the query instead, as a named subquery; braces are doubled because
            # the text is a format string there.
            template = sql.replace("{", "{{").replace("}", "}}").replace(view, f"{{{view}}}")
            yield lambda: spark.sql(template, None, **{view: df})
            return
        # A fresh name, never createOrReplace: the user's own views stay as they are.
        df.createTempView(view)
        try:
            yield lambda: spark.sql(sql)
        finally:
            spark.catalog.dropTempView(view)

    def _run_query(self, query: DataFrame) -> CheckResult:
        # Two rows are enough to tell "exactly one" from "more than one" without collecting more.
        rows = query.take(2)
        if len(rows) != 1 or len(rows[0]) != 1 or not isinstance(rows[0][0], (bool, type(None))):
            shape = "no rows" if not rows else "more than one row" if len(rows) > 1 else repr(rows[0])
            return CheckResult(
                self.rule_type, False, f"sql: the query must return one boolean value, got {shape}", 1
            )
        if rows[0][0] is True:
            return CheckResult(self.rule_type, True, "sql: invariant holds")
        if rows[0][0] is None:
            return CheckResult(self.rule_type, False, f"{self.error_message} (the query returned NULL)", 1)
        return CheckResult(self.rule_type, False, self.error_message, 1)
