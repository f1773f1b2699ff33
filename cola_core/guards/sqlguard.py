"""The read-only guard for every piece of SQL text a rules author writes.

SQL reaches the engine in ``sql`` rules (``query``, ``failed_rows``), in ``where``,
``expression`` and ``reference_where`` conditions, and in source and reference queries
(``{"query": ...}``, ``cola --query``). ``spark.sql`` runs a command the moment it is called,
and a function such as ``reflect`` reaches the JVM, so the text is checked in pure Python
before Spark sees it, and again by Spark's own parser when a JVM session is at hand.

The pure-Python check is built on a lexer that follows Spark SQL's lexical rules
(:mod:`cola_core.guards.sqllex`). Only what lies outside literals and comments is code, and the
rules below look at code alone:

- a query is one statement that starts like a query (``SELECT``, ``WITH``, ``FROM``,
  ``VALUES``, ``TABLE`` or a parenthesis); a condition holds no ``;`` at all;
- no write or command keyword (``INSERT``, ``DROP``, ``CACHE``, ...) appears anywhere;
- by default nothing reaches outside the data (see :data:`OUTSIDE_FUNCTIONS` and
  :func:`outside_access`): JVM calls, path relations (```json.`/etc/passwd` ```), table
  functions that read storage, ``IDENTIFIER(...)`` (a name built at run time), script
  transformation (``USING 'program'``) and ``${...}`` (Spark substitutes configuration and
  environment variables into the text before parsing it). :func:`allowing_outside_access`
  lifts that for trusted rules; ``Cola(allow_external_access=True)``, ``cola
  --allow-external-access`` and the operators' ``allow_external_access`` use it.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol

from cola_core.errors import ColaRuleError
from cola_core.guards.sqllex import Token, tokenize
from cola_core.guards.sqlsize import MAX_BUILT_SIZE, built_size_problem

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "MAX_BUILT_SIZE",
    "MAX_NESTING",
    "NONDETERMINISTIC_FUNCTIONS",
    "OUTSIDE_FUNCTIONS",
    "SWITCH",
    "Token",
    "allowing_outside_access",
    "check_condition",
    "check_expression",
    "check_query",
    "check_table_name",
    "confirm_query",
    "nondeterministic_calls",
    "outside_access",
    "outside_access_allowed",
    "rename_relation",
    "spark_expression_problem",
    "spark_parse_problem",
    "tokenize",
    "without_comments",
]

# How the switch is named wherever a user meets it; every refusal message names it.
SWITCH = "allow_external_access=True (cola --allow-external-access)"

# Functions that reach outside the data, from an audit of Spark 4.2's SHOW FUNCTIONS:
# calls into the JVM, readers of local files (protobuf descriptors, Avro schema URLs), the
# Python workers' logs, and the table functions of other engines that read storage.
OUTSIDE_FUNCTIONS = {
    "reflect": "calls a Java method in the JVM",
    "java_method": "calls a Java method in the JVM",
    "try_reflect": "calls a Java method in the JVM",
    "from_protobuf": "may read a descriptor file from storage",
    "to_protobuf": "may read a descriptor file from storage",
    "from_avro": "may read a schema file from storage",
    "from_xml": "may load an XSD schema from storage or the network through its options",
    "schema_of_xml": "may load an XSD schema from storage or the network through its options",
    "to_avro": "may read a schema file from storage",
    "schema_of_avro": "may read a schema file from storage",
    "python_worker_logs": "reads the Python workers' logs",
    "read_files": "reads files from storage",
    "read_kafka": "reads from a Kafka cluster",
    "read_statestore": "reads a streaming state store",
    "read_state_metadata": "reads streaming state metadata",
    # These reach no storage, but they stop the whole job: bad data must be measured.
    "raise_error": "stops the whole job with an error",
    "assert_true": "stops the whole job with an error",
}
# Builtins whose answer changes from one evaluation to the next. A condition built on one
# would put a row in both outputs of a split, or in neither.
NONDETERMINISTIC_FUNCTIONS = frozenset(
    "rand randn random randstr uniform uuid shuffle monotonically_increasing_id spark_partition_id "
    "input_file_name input_file_block_length input_file_block_start".split()
)
# Spark's path relations (``format.`path```) name a data source; these are the short names
# of Spark's own sources and of the common third-party ones.
_FILE_SOURCES = frozenset(
    "parquet csv json orc text textfile binaryfile avro delta xml jdbc libsvm image hive noop kafka "
    "statestore state-metadata iceberg hudi protobuf console rate socket".split()
)
# Parentheses a piece of SQL may nest; real rules use a handful.
MAX_NESTING = 100
# Keywords that only a write or a command uses: refused wherever they appear in code.
_WRITE_KEYWORDS = frozenset(
    "ALTER ANALYZE CACHE CREATE DELETE DROP EXECUTE GRANT INSERT LOAD MERGE MSCK OVERWRITE "
    "REFRESH REPAIR REVOKE TRUNCATE UNCACHE UPDATE".split()
)
_QUERY_STARTERS = frozenset("SELECT WITH FROM VALUES TABLE".split())


# -- the switch ---------------------------------------------------------------------------

_outside_allowed: contextvars.ContextVar[bool] = contextvars.ContextVar("cola_outside_access", default=False)


@contextlib.contextmanager
def allowing_outside_access(allowed: bool = True) -> Iterator[None]:
    """Within the block, SQL text may reach outside the data (trusted rules only).

    A context variable rather than an argument, so that every place that checks SQL (the
    rule parser, the checks' own validation, sources and references) sees the same answer
    for one run, and concurrent runs in other threads keep their own.
    """
    token = _outside_allowed.set(allowed)
    try:
        yield
    finally:
        _outside_allowed.reset(token)


def outside_access_allowed() -> bool:
    return _outside_allowed.get()


# -- the checks ---------------------------------------------------------------------------


def check_query(sql: str, key: str = "query") -> None:
    """Refuse anything but one read-only query.

    Raises:
        ColaRuleError: saying what was refused, and for what reaches outside the data, the
            switch that would allow it.
    """
    tokens = _statement(tokenize(sql, key), key)
    first = next((token for token in tokens if token.text != "("), None)
    if first is None:
        raise ColaRuleError(f"'{key}' holds no query; give a single SELECT or WITH query")
    if not (first.kind == "word" and first.text.upper() in _QUERY_STARTERS):
        raise ColaRuleError(
            f"'{key}' must be a read-only SELECT or WITH query, but starts with {first.text!r}; "
            "Spark would run it as soon as it is parsed"
        )
    _check_code(sql, tokens, key)


def check_expression(sql: str, key: str = "where") -> None:
    """Refuse a condition that is more than an expression, or that reaches outside the data.

    Raises:
        ColaRuleError: as :func:`check_query`.
    """
    tokens = tokenize(sql, key)
    if any(token.text == ";" and token.kind == "symbol" for token in tokens):
        raise ColaRuleError(f"'{key}' must be one SQL expression such as \"amount > 0\", but holds a ';'")
    if not tokens:
        raise ColaRuleError(f"'{key}' holds no expression")
    _check_code(sql, tokens, key)


def check_condition(sql: str, key: str = "where") -> None:
    """:func:`check_expression` for a row condition, which must also be deterministic: the
    scan and the split must reach the same decision for a row.

    Raises:
        ColaRuleError: as :func:`check_expression`, and for a nondeterministic builtin.
    """
    check_expression(sql, key)
    called = nondeterministic_calls(sql)
    if called:
        raise ColaRuleError(
            f"'{key}' calls {called[0]}(), which gives another answer each time it runs; "
            "a condition must decide the same way for a row every time"
        )


def _statement(tokens: list[Token], key: str) -> list[Token]:
    """The tokens of the one statement: a final ``;`` is allowed, any other is refused."""
    while tokens and tokens[-1].kind == "symbol" and tokens[-1].text == ";":
        tokens = tokens[:-1]
    if any(token.kind == "symbol" and token.text == ";" for token in tokens):
        raise ColaRuleError(f"'{key}' holds more than one statement; give a single SELECT or WITH query")
    return tokens


def _check_nesting(tokens: list[Token], key: str) -> None:
    """Refuse parentheses that do not pair up, or that nest too deep.

    Checked on the text alone: the engine analyses a block's conditions together inside one
    expression, where ``"a > 0) OR (b < 0"`` would pair up with the parentheses around it and
    pass for a condition it is not.
    """
    depth = deepest = 0
    for token in tokens:
        if token.kind == "symbol" and token.text == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif token.kind == "symbol" and token.text == ")":
            depth -= 1
            if depth < 0:
                raise ColaRuleError(
                    f"'{key}' closes a parenthesis it never opened (at character {token.start + 1}); "
                    "its parentheses must pair up"
                )
    if depth > 0:
        raise ColaRuleError(f"'{key}' leaves {depth} parenthes{'i' if depth == 1 else 'e'}s open; its parentheses "
                            "must pair up")
    if deepest > MAX_NESTING:
        # Spark's recursive-descent parser overflows the JVM's stack long before a rule could
        # need this many levels.
        raise ColaRuleError(f"'{key}' nests parentheses {deepest} deep; at most {MAX_NESTING} are allowed")


def _check_code(sql: str, tokens: list[Token], key: str) -> None:
    _check_nesting(tokens, key)
    # Bounded work: a value as large as a constant says is refused before Spark folds it.
    too_large = built_size_problem(tokens, key)
    if too_large is not None:
        raise ColaRuleError(too_large)
    # Commands that are not writes (SET, ADD JAR, USE, ...) can only open a statement, which
    # check_query refuses; a write can also follow a query's start (WITH ... INSERT, FROM t
    # INSERT ...), so its keywords are refused everywhere.
    for token in tokens:
        upper = token.text.upper() if token.kind == "word" else ""
        if upper in _WRITE_KEYWORDS:
            raise ColaRuleError(
                f"'{key}' contains {upper!r}, which is not allowed in a read-only query; "
                "quote a column with that name in backticks"
            )
    if outside_access_allowed():
        return
    problem = outside_access(sql, tokens)
    if problem is not None:
        raise ColaRuleError(
            f"'{key}' {problem}: SQL that reaches outside the data is refused by default; "
            f"for trusted rules only, run with {SWITCH}"
        )


def check_table_name(name: str, key: str = "table") -> None:
    """Refuse a table name that is not a plain (possibly qualified) name, or that is a path
    relation: ``spark.read.table("text.`/etc/passwd`")`` reads the file.

    Raises:
        ColaRuleError: as :func:`check_query`.
    """
    tokens = tokenize(name, key)
    shape_ok = bool(tokens) and len(tokens) % 2 == 1 and all(
        (token.kind in ("word", "quoted")) if index % 2 == 0 else (token.kind == "symbol" and token.text == ".")
        for index, token in enumerate(tokens)
    )
    if not shape_ok:
        raise ColaRuleError(f"'{key}' must be a table name such as db.orders (or `odd name`), got {name!r}")
    if not outside_access_allowed() and _is_path_relation(tokens, 0):
        raise ColaRuleError(
            f"'{key}' reads {tokens[0].text}.`{tokens[2].text}` (a path relation reads files): SQL that reaches "
            f"outside the data is refused by default; for trusted rules only, run with {SWITCH}"
        )


def outside_access(sql: str, tokens: list[Token] | None = None) -> str | None:
    """What in ``sql`` reaches outside the data, in words, or None when nothing does."""
    if "${" in sql:
        # Substituted before Spark even lexes the text, so it counts inside literals too.
        return "uses ${...} (Spark replaces it with configuration or environment values)"
    tokens = tokenize(sql) if tokens is None else tokens
    for index, token in enumerate(tokens):
        name = _name_like(token)
        if name is None:
            continue
        if _is_call(tokens, index):
            if name.lower() in OUTSIDE_FUNCTIONS:
                return f"calls {name.lower()}() (it {OUTSIDE_FUNCTIONS[name.lower()]})"
            if name.lower() == "identifier":
                return "uses IDENTIFIER(...) (it builds a name at run time; write the name itself)"
        if _is_path_relation(tokens, index):
            return f"reads {name}.`{_name_like(tokens[index + 2])}` (a path relation reads files)"
        if token.is_word("USING") and index + 1 < len(tokens) and tokens[index + 1].kind == "string":
            return f"runs the program {tokens[index + 1].text} (script transformation)"
    return None


def nondeterministic_calls(sql: str) -> list[str]:
    """The builtin nondeterministic functions ``sql`` calls, by name."""
    tokens = tokenize(sql)
    return [
        token.name for index, token in enumerate(tokens)
        if token.name in NONDETERMINISTIC_FUNCTIONS and _is_call(tokens, index)
    ]


def _is_call(tokens: list[Token], index: int) -> bool:
    following = tokens[index + 1] if index + 1 < len(tokens) else None
    return following is not None and following.kind == "symbol" and following.text == "("


def _is_path_relation(tokens: list[Token], index: int) -> bool:
    """``source.`path```: a two-part name whose first part is a data source (Spark reads the
    file), or a class name in backticks, or whose second part looks like a path."""
    if index + 2 >= len(tokens) or tokens[index + 1].text != "." or tokens[index + 1].kind != "symbol":
        return False
    if index > 0 and tokens[index - 1].kind == "symbol" and tokens[index - 1].text == ".":
        return False  # the tail of a longer name: catalog.db.table
    first, second = _name_like(tokens[index]), _name_like(tokens[index + 2])
    if first is None or second is None:
        return False
    source = first.lower()
    path_like = tokens[index + 2].kind != "word" and ("/" in second or "\\" in second or ":" in second)
    return source in _FILE_SOURCES or (tokens[index].kind != "word" and "." in source) or path_like


def _name_like(token: Token) -> str | None:
    """The name a token may spell, as written: a word, a backtick name, or a double-quoted
    text, which Spark reads as a name under ``spark.sql.ansi.doubleQuotedIdentifiers``."""
    if token.kind == "word":
        return token.text
    if token.kind == "quoted":
        return token.text
    if token.kind == "string" and token.text.startswith('"') and len(token.text) >= 2:
        return token.text[1:-1]
    return None


# -- Spark's own parser -----------------------------------------------------------------------


def confirm_query(spark: SparkSession, sql: str, key: str = "query") -> None:
    """Have Spark's parser confirm that ``sql`` is a query, not a command (nothing runs).

    Raises:
        ColaRuleError: when Spark cannot parse the text as a query.
    """
    problem = spark_parse_problem(spark, sql)
    if problem is not None:
        raise ColaRuleError(f"Spark cannot parse '{key}' as a read-only query: {problem}")


def spark_parse_problem(spark: SparkSession, sql: str) -> str | None:
    """Spark's parse error for ``sql`` read as a query (a command is one), or None.

    Only possible with a JVM session at hand; over Spark Connect the lexer's verdict stands
    and None is returned.
    """
    parser = _jvm_parser(spark)
    if parser is None:
        return None
    try:
        parser.parseQuery(sql)
    except Exception as error:  # a Py4JJavaError wrapping Spark's ParseException
        return _parse_message(error)
    return None


def spark_expression_problem(spark: SparkSession, sql: str) -> str | None:
    """Spark's parse error for ``sql`` read alone as an expression (a condition), or None.

    Only possible with a JVM session at hand; over Spark Connect None is returned (the
    condition is analysed alone by the server when the block's conditions do not hold
    together).
    """
    parser = _jvm_parser(spark)
    if parser is None:
        return None
    try:
        parser.parseExpression(sql)
    except Exception as error:  # a Py4JJavaError wrapping Spark's ParseException
        return _parse_message(error)
    return None


class _SqlParser(Protocol):
    """The part of Spark's ParserInterface (a Py4J proxy, so untyped) that is used here."""

    def parseQuery(self, sql: str) -> object: ...

    def parseExpression(self, sql: str) -> object: ...


def _jvm_parser(spark: SparkSession) -> _SqlParser | None:
    session = getattr(spark, "_jsparkSession", None)
    if session is None:
        return None
    try:
        parser: _SqlParser = session.sessionState().sqlParser()
        return parser
    except Exception:  # a stopped session or an unusual build: fall back on the lexer
        return None


def _parse_message(error: BaseException) -> str:
    java = getattr(error, "java_exception", None)
    text = str(java.getMessage()) if java is not None else str(error)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__


def without_comments(sql: str) -> str:
    """``sql`` as its code alone: each comment (and the white space around it) becomes one
    space, literals and hints are kept as written. Pieces of SQL joined into one text (the
    block's conditions, analysed together) cannot then reach into each other: a line comment
    continued by a final backslash would swallow the text after it."""
    tokens = tokenize(sql)
    parts: list[str] = []
    for index, token in enumerate(tokens):
        if index and token.start > tokens[index - 1].end:
            parts.append(" ")
        parts.append(sql[token.start:token.end])
    return "".join(parts)


def rename_relation(sql: str, old: str, new: str) -> str:
    """``sql`` with every reference to the relation ``old`` pointing at ``new`` instead.

    A reference is a plain or backtick name equal to ``old`` (case-insensitive, as Spark
    resolves names) that is not a function call and not the tail of a qualified name.
    """
    tokens = tokenize(sql)
    wanted = old.lower()
    replacement = "`" + new.replace("`", "``") + "`"
    pieces, last = [], 0
    for index, token in enumerate(tokens):
        if token.name != wanted or _is_call(tokens, index):
            continue
        if index > 0 and tokens[index - 1].kind == "symbol" and tokens[index - 1].text == ".":
            continue
        pieces.extend([sql[last:token.start], replacement])
        last = token.end
    pieces.append(sql[last:])
    return "".join(pieces)
