"""The read-only SQL guard: the lexer, every SQL-bearing field, the switch, and Spark's parser."""

from __future__ import annotations

import json
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cola_core import Cola, ColaRuleError
from cola_core.cli.main import main
from cola_core.errors import ColaSourceError
from cola_core.guards.sqlguard import (
    allowing_outside_access,
    check_expression,
    check_query,
    rename_relation,
    spark_parse_problem,
    tokenize,
)
from cola_core.storage.readwrite import read_source
from cola_core.storage.specs import parse_source

SWITCH = "for trusted rules only, run with allow_external_access=True (cola --allow-external-access)"


def outside(what: str, key: str = "query") -> str:
    return f"'{key}' {what}: SQL that reaches outside the data is refused by default; {SWITCH}"


def write_keyword(word: str, key: str = "query") -> str:
    return f"'{key}' contains {word!r}, which is not allowed in a read-only query; quote a column with that name in backticks"


# -- the lexer ------------------------------------------------------------------------------


def test_tokens_follow_sparks_lexical_rules():
    sql = "SELECT 'it''s', \"a\\\"b\", r'\\', `we``ird` -- note 'x\n/* a /* b */ c */ FROM t;"
    assert [(t.kind, t.text) for t in tokenize(sql)] == [
        ("word", "SELECT"), ("string", "'it'"), ("string", "'s'"), ("symbol", ","), ("string", '"a\\"b"'),
        ("symbol", ","), ("string", "r'\\'"), ("symbol", ","), ("quoted", "we`ird"), ("word", "FROM"),
        ("word", "t"), ("symbol", ";"),
    ]


def test_a_nested_comment_never_opens_at_a_hint_as_in_spark():
    assert [t.text for t in tokenize("SELECT 1 /* /*+ */ , x -- */")] == ["SELECT", "1", ",", "x"]
    assert [t.text for t in tokenize("SELECT 1 /* /*+ /* */ */ AS y")] == ["SELECT", "1", "AS", "y"]
    assert [t.text for t in tokenize("SELECT /*+ REPARTITION(2) */ 1")] == [
        "SELECT", "/*+", "REPARTITION", "(", "2", ")", "*/", "1"]


def test_a_line_comment_goes_on_after_a_backslash_newline_as_in_spark():
    # Spark's SIMPLE_COMMENT swallows "\<newline>", so the INSERT below is still comment.
    assert [t.text for t in tokenize("SELECT 1 -- c \\\nINSERT INTO t\nFROM x")] == ["SELECT", "1", "FROM", "x"]


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("SELECT 'open", "rules: 'query' has a string literal that is never closed (it opens at offset 7)"),
        ("SELECT r'open", "rules: 'query' has a string literal that is never closed (it opens at offset 8)"),
        ("SELECT `open", "rules: 'query' has a `quoted identifier` that is never closed (it opens at offset 7)"),
        ("SELECT 1 /* a /* b */", "rules: 'query' has a /* comment that is never closed (it opens at offset 9)"),
    ],
)
def test_unclosed_literals_and_comments_are_refused(sql, message):
    with pytest.raises(ColaRuleError) as raised:
        check_query(sql)
    assert str(raised.value) == message


# -- the injection corpus: every SQL-bearing field ---------------------------------------------

# Each text, and the reason the guard gives for it (for the 'query' key).
CORPUS = [
    # The exploit from the issue: a quote inside a -- comment hid the INSERT from the old guard.
    ("WITH a AS (SELECT 1) -- it's fine\nINSERT OVERWRITE DIRECTORY '/tmp/x' SELECT * FROM a", write_keyword("INSERT")),
    # A signed exponent ends a number: Spark reads 1E+5 then INSERT, never the word 5INSERT.
    ("FROM VALUES 1E+5INSERT INTO victim SELECT 42", write_keyword("INSERT")),
    ("SELECT 1e-5reflect('java.lang.System', 'exit', '0')", outside("calls reflect() (it calls a Java method in the JVM)")),
    # A raw string's backslash does not escape the quote, so the INSERT is code.
    ("SELECT r'\\' AS a FROM t INSERT OVERWRITE DIRECTORY '/tmp/x' SELECT 1", write_keyword("INSERT")),
    ("FROM t INSERT INTO u SELECT *", write_keyword("INSERT")),
    ("WITH a AS (SELECT 1) MERGE INTO t USING a ON true WHEN MATCHED THEN DELETE", write_keyword("MERGE")),
    ("SELECT 1; DROP TABLE t", "'query' holds more than one statement; give a single SELECT or WITH query"),
    ("SELECT ';' AS a; CACHE TABLE t", "'query' holds more than one statement; give a single SELECT or WITH query"),
    ("/* SELECT */ DELETE FROM t", "'query' must be a read-only SELECT or WITH query, but starts with 'DELETE'; "
     "Spark would run it as soon as it is parsed"),
    ("SET spark.sql.ansi.enabled=false", "'query' must be a read-only SELECT or WITH query, but starts with 'SET'; "
     "Spark would run it as soon as it is parsed"),
    ("SELECT reflect('java.lang.System', 'exit', '0')", outside("calls reflect() (it calls a Java method in the JVM)")),
    ("SELECT java_method('java.lang.System', 'getenv', 'HOME')",
     outside("calls java_method() (it calls a Java method in the JVM)")),
    ("SELECT `try_reflect` /* hidden */ ('java.lang.System', 'getProperty', 'user.home')",
     outside("calls try_reflect() (it calls a Java method in the JVM)")),
    ("SELECT system.builtin.reflect('java.lang.System', 'exit', '0')",
     outside("calls reflect() (it calls a Java method in the JVM)")),
    ("SELECT assert_true(false)", outside("calls assert_true() (it stops the whole job with an error)")),
    ("SELECT * FROM text.`/etc/passwd`", outside("reads text.`/etc/passwd` (a path relation reads files)")),
    ("SELECT * FROM binaryFile . `/etc`", outside("reads binaryFile.`/etc` (a path relation reads files)")),
    ("SELECT * FROM `org.apache.spark.sql.parquet`.`/data`",
     outside("reads org.apache.spark.sql.parquet.`/data` (a path relation reads files)")),
    ("SELECT * FROM read_files('/etc')", outside("calls read_files() (it reads files from storage)")),
    ("SELECT '${env:HOME}' AS home", outside("uses ${...} (Spark replaces it with configuration or environment values)")),
    ("SELECT * FROM IDENTIFIER('text.`/etc/passwd`')",
     outside("uses IDENTIFIER(...) (it builds a name at run time; write the name itself)")),
    # A nested comment never opens at /*+ in Spark, so the first */ ends the comment here.
    ("SELECT 1 /* /*+ */ , java_method('java.lang.String', 'valueOf', 'x') AS leak -- */",
     outside("calls java_method() (it calls a Java method in the JVM)")),
    ("SELECT first(value) /* /*+ */ FROM text.`/etc/hostname` -- */",
     outside("reads text.`/etc/hostname` (a path relation reads files)")),
    # Under spark.sql.ansi.doubleQuotedIdentifiers a double-quoted text is a name.
    ("SELECT \"reflect\"('java.lang.System', 'getProperty', 'user.home')",
     outside("calls reflect() (it calls a Java method in the JVM)")),
    ("SELECT * FROM \"text\".\"/etc/hostname\"", outside("reads text.`/etc/hostname` (a path relation reads files)")),
    ("SELECT from_xml('<a>1</a>', 'a string', map('rowValidationXSDPath', 'http://127.0.0.1:9/x')) IS NOT NULL",
     outside("calls from_xml() (it may load an XSD schema from storage or the network through its options)")),
    # A hint's parameters are code.
    ("SELECT /*+ REPARTITION(java_method('java.lang.String', 'valueOf', 'x')) */ 1",
     outside("calls java_method() (it calls a Java method in the JVM)")),
    ("SELECT TRANSFORM(id) USING 'cat /etc/passwd' AS (line) FROM t",
     outside("runs the program 'cat /etc/passwd' (script transformation)")),
]
EXPRESSION_CORPUS = [
    ("reflect('java.lang.System', 'exit', '0') IS NULL", "calls reflect() (it calls a Java method in the JVM)"),
    ("java_method('java.lang.System', 'getenv', 'HOME') = 'x'", "calls java_method() (it calls a Java method in the JVM)"),
    ("id IN (SELECT value FROM text.`/etc/passwd`)", "reads text.`/etc/passwd` (a path relation reads files)"),
    ("'${env:HOME}' = ''", "uses ${...} (Spark replaces it with configuration or environment values)"),
    ("raise_error('boom') IS NULL", "calls raise_error() (it stops the whole job with an error)"),
]


@pytest.mark.parametrize(("sql", "reason"), CORPUS)
@pytest.mark.parametrize("mode", ["query", "failed_rows"])
def test_sql_rules_refuse_the_corpus(sql, reason, mode):
    with pytest.raises(ColaRuleError) as raised:
        Cola().parse([{"type": "sql", mode: sql}])
    assert str(raised.value) == "rules[0] (sql): " + reason.replace("'query'", f"'{mode}'", 1)


@pytest.mark.parametrize(("sql", "reason"), CORPUS)
def test_source_queries_refuse_the_corpus(sql, reason):
    with pytest.raises(ColaSourceError) as raised:
        parse_source({"query": sql})
    assert str(raised.value) == "source " + reason


@pytest.mark.parametrize(("sql", "reason"), CORPUS)
def test_reference_queries_refuse_the_corpus(sql, reason):
    rule = {"type": "foreign_key", "column": "id", "reference": {"query": sql}, "reference_columns": ["id"]}
    with pytest.raises(ColaRuleError) as raised:
        Cola().parse([rule])
    assert str(raised.value) == "rules[0] (foreign_key): 'reference' is not a valid input: source " + reason


@pytest.mark.parametrize(("sql", "reason"), EXPRESSION_CORPUS)
@pytest.mark.parametrize(
    ("rule", "key"),
    [
        ({"type": "not_null", "columns": ["id"]}, "where"),
        ({"type": "expression"}, "expression"),
        ({"type": "reconcile", "reference": {"table": "t"}, "aggregate": "count", "must_be": "= 0"}, "reference_where"),
    ],
)
def test_conditions_refuse_the_corpus(sql, reason, rule, key):
    with pytest.raises(ColaRuleError) as raised:
        Cola().parse([{**rule, key: sql}])
    assert str(raised.value) == f"rules[0] ({rule['type']}): " + outside(reason, key)


@pytest.mark.parametrize("key", ["where", "expression", "reference_where"])
@pytest.mark.parametrize("condition", ["rand() < 0.5", "uuid() > 'a'", "id = spark_partition_id()"])
def test_conditions_calling_nondeterministic_builtins_are_refused_when_parsed(key, condition):
    rules = {"where": {"type": "not_null", "columns": ["id"]}, "expression": {"type": "expression"},
             "reference_where": {"type": "reconcile", "reference": {"table": "t"}, "aggregate": "count",
                                 "must_be": "= 0"}}
    rule = {**rules[key], key: condition}
    name = condition.split("(")[0].split()[-1]
    with pytest.raises(ColaRuleError) as raised:
        Cola().parse([rule])
    assert str(raised.value) == (
        f"rules[0] ({rule['type']}): '{key}' calls {name}(), which gives another answer each time it runs; "
        "a condition must decide the same way for a row every time"
    )


def test_a_condition_holds_no_statement_separator():
    with pytest.raises(ColaRuleError) as raised:
        check_expression("id > 0; DROP TABLE t", "where")
    assert str(raised.value) == "rules: 'where' must be one SQL expression such as \"amount > 0\", but holds a ';'"


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT count(*) = 0 FROM _validation_df WHERE amount < 0",
        "SELECT * FROM _validation_df WHERE note = 'INSERT INTO t' -- DROP TABLE t",
        "SELECT `insert` FROM _validation_df /* a DELETE /* nested */ here */",
        "WITH a AS (SELECT 1 AS x) SELECT replace(cast(x AS string), '1', '2') FROM a ORDER BY 1 DESC",
        "(SELECT 1) UNION ALL (SELECT 2);",
        "VALUES (1), (2)",
        "SELECT '$' || '{x}' AS not_a_substitution",
        "SELECT \"a/b\" AS text_with_a_slash, 1.5e3 FROM t WHERE x = \"http://a\"",
        "SELECT * FROM db.parquet_events JOIN other.`my table` USING (id)",
    ],
)
def test_ordinary_queries_pass(sql):
    check_query(sql)


def test_the_switch_allows_reaching_outside_but_never_writes():
    with allowing_outside_access():
        check_query("SELECT reflect('java.util.UUID', 'randomUUID') IS NOT NULL")
        with pytest.raises(ColaRuleError) as raised:
            check_query("WITH a AS (SELECT 1) INSERT INTO t SELECT * FROM a")
    assert str(raised.value) == "rules: " + write_keyword("INSERT")
    with pytest.raises(ColaRuleError):
        check_query("SELECT reflect('a', 'b')")  # the switch ends with its block


def test_cola_and_the_cli_take_the_switch(tmp_path, capsys):
    rule = {"type": "sql", "query": "SELECT reflect('java.util.UUID', 'randomUUID') IS NOT NULL"}
    Cola(allow_external_access=True).parse([rule])
    with pytest.raises(ColaRuleError):
        Cola().parse([rule])
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"type": "row_count", "min": 1}]))
    code = main(["check", "--rules", str(rules), "--query", "SELECT * FROM text.`/etc/hostname`"])
    assert code == 2
    assert capsys.readouterr().err == "cola: error: source " + outside(
        "reads text.`/etc/hostname` (a path relation reads files)") + "\n"


def test_rename_relation_rewrites_only_references_to_the_view():
    sql = "SELECT _validation_df.a, `_VALIDATION_DF`.b, f(_validation_df) FROM _validation_df JOIN db._validation_df x"
    assert rename_relation(sql, "_validation_df", "_cola_1") == (
        "SELECT `_cola_1`.a, `_cola_1`.b, f(`_cola_1`) FROM `_cola_1` JOIN db._validation_df x"
    )
    assert rename_relation("SELECT '_validation_df', _validation_df() -- _validation_df", "_validation_df", "v") == (
        "SELECT '_validation_df', _validation_df() -- _validation_df"
    )


# -- with Spark ------------------------------------------------------------------------------------


@pytest.mark.spark
def test_the_issues_exploit_no_longer_deletes_a_folder(spark, tmp_path):
    victim = tmp_path / "precious"
    victim.mkdir()
    (victim / "data.txt").write_text("keep me")
    sql = f"WITH a AS (SELECT 1 AS x) -- it's only a comment\nINSERT OVERWRITE DIRECTORY '{victim}' SELECT * FROM a"
    df = spark.createDataFrame([(1,)], "id int")
    with pytest.raises(ColaRuleError):
        Cola().run(df, [{"type": "sql", "failed_rows": sql}])
    with pytest.raises(ColaSourceError):
        read_source(spark, {"query": sql})
    assert (victim / "data.txt").read_text() == "keep me"


@pytest.mark.spark
def test_sparks_parser_confirms_sql_rules_before_any_job(spark, job_counter):
    df = spark.createDataFrame([(1,)], "id int")
    with job_counter.count() as jobs, pytest.raises(ColaRuleError) as raised:
        Cola().run(df, [{"type": "not_null", "columns": ["id"]}, {"type": "sql", "query": "SELECT (id) FROM t GROUP BY"}])
    assert jobs.jobs == 0
    assert str(raised.value).startswith(
        "rules[1] (sql): Spark cannot parse 'query' as a read-only query: [PARSE_SYNTAX_ERROR] Syntax error at or near"
    )


LEXER_PIECES = ["SELECT 1", " ", "'", '"', "\\", "r'", "`", "--", "\n", "/*", "/*+", "*/", "INSERT INTO t SELECT 2",
                "DROP TABLE t", ";", "a", "(", ")", "WITH x AS (SELECT 1) ", "\\\n"]


@pytest.mark.spark
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pieces=st.lists(st.sampled_from(LEXER_PIECES), min_size=1, max_size=12))
def test_whatever_the_lexer_accepts_spark_parses_as_a_query(spark, pieces):
    """A differential test against Spark's own lexer and parser: text the guard lets through
    is always a query to Spark, never a command, whatever the quotes and comments do."""
    sql = "SELECT 1 " + "".join(pieces)
    try:
        check_query(sql)
    except ColaRuleError:
        return
    problem = spark_parse_problem(spark, sql)
    # Spark may still find a syntax error, but a command is never a syntax error of a query
    # that Spark would then run: parseQuery refuses every command.
    if problem is None:
        plan = spark._jsparkSession.sessionState().sqlParser().parseQuery(sql)
        assert "Command" not in plan.getClass().getName()
        assert "Insert" not in plan.toString()


def spark_code(spark, sql: str) -> str:
    """The code characters of ``sql`` as Spark's own lexer sees them (comments and spaces
    dropped), read through the same upper-casing stream Spark's parser uses."""
    parser = spark._jvm.org.apache.spark.sql.catalyst.parser
    stream = parser.UpperCaseCharStream(spark._jvm.org.antlr.v4.runtime.CharStreams.fromString(sql))
    lexer = parser.SqlBaseLexer(stream)
    lexer.removeErrorListeners()
    return "".join(token.getText() for token in lexer.getAllTokens() if token.getChannel() == 0)


@pytest.mark.spark
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pieces=st.lists(st.sampled_from([*LEXER_PIECES, "*", "/", "-", "1E+5", "1e-5", ".5E+1", "0.5e+3", "1.5",
                                        "5", "e3", "L", "BD", "D", ".", "_", "+", "R\"", "'it''s'", "``", "/* /*+ */", "x\\'"]), max_size=14))
def test_the_lexer_finds_the_same_code_as_sparks_lexer(spark, pieces):
    """A differential test against Spark's SqlBaseLexer: whatever the quotes, escapes and
    comments, the guard reads exactly the characters Spark reads as code."""
    sql = "SELECT " + "".join(pieces)
    try:
        tokens = tokenize(sql)
    except ColaRuleError:
        return  # unclosed: refused, and Spark refuses it too
    assert "".join(sql[t.start:t.end] for t in tokens) == spark_code(spark, sql)


@pytest.mark.spark
def test_reflect_in_a_sql_rule_runs_only_with_the_switch(spark):
    df = spark.createDataFrame([(1,)], "id int")
    rule = {"type": "sql", "query": "SELECT reflect('java.lang.String', 'valueOf', 7) = '7' FROM _validation_df"}
    [result] = Cola(allow_external_access=True).run(df, [rule])
    assert (result.passed, result.message) == (True, "sql: invariant holds")


@pytest.mark.spark
def test_a_sql_rule_never_replaces_the_users_view_and_leaves_none_behind(spark):
    users = spark.createDataFrame([(1,), (2,), (3,)], "id int")
    users.createOrReplaceTempView("_validation_df")
    try:
        before = {t.name for t in spark.catalog.listTables()}
        df = spark.createDataFrame([(10,)], "id int")
        rules = [
            {"type": "sql", "query": "SELECT count(*) = 1 FROM _validation_df"},
            {"type": "sql", "failed_rows": "SELECT * FROM orders_view WHERE id < 0", "view_name": "orders_view"},
        ]
        results = Cola().run(df, rules)
        assert [(r.passed, r.failed_count) for r in results] == [(True, 0), (True, 0)]
        assert spark.table("_validation_df").count() == 3
        assert {t.name for t in spark.catalog.listTables()} == before
        # The failed rows stay readable after the view is gone: they hold the resolved plan.
        assert results[1].failed_rows.count() == 0
    finally:
        spark.catalog.dropTempView("_validation_df")


@pytest.mark.spark
def test_two_blocks_at_once_in_one_session_never_see_each_others_data(spark):
    frames = {n: spark.createDataFrame([(i,) for i in range(n)], "id int") for n in (3, 5, 7, 11)}
    rule = {"type": "sql", "failed_rows": "SELECT * FROM _validation_df"}
    counts: dict[int, list[int]] = {n: [] for n in frames}

    def measure(n: int) -> None:
        for _ in range(3):
            [result] = Cola().run(frames[n], [rule])
            counts[n].append(result.failed_count)

    threads = [threading.Thread(target=measure, args=(n,)) for n in frames]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counts == {3: [3, 3, 3], 5: [5, 5, 5], 7: [7, 7, 7], 11: [11, 11, 11]}


# -- conditions ----------------------------------------------------------------------------------


@pytest.mark.spark
@pytest.mark.parametrize(
    ("where", "message"),
    [
        ("name", "'name' is of type string, not boolean; write a condition such as \"amount > 0\""),
        ("id + 1", "'id + 1' is of type int, not boolean; write a condition such as \"amount > 0\""),
        ("cola_coin()", "'cola_coin()' is not deterministic (it may call a nondeterministic function); "
         "a condition must decide the same way for a row every time"),
        ("max(id) > 1", "Spark cannot evaluate 'max(id) > 1' on this DataFrame: [INVALID_WHERE_CONDITION] "
         "The WHERE condition \"(max(id) > 1)\" contains invalid expressions: max(id)."),
        ("row_number() OVER (ORDER BY id) > 1", "Spark cannot evaluate 'row_number() OVER (ORDER BY id) > 1' on this "
         "DataFrame: [WINDOW_FUNCTION_NOT_ALLOWED_IN_CLAUSE] It is not allowed to use window functions inside WHERE "
         "clause. SQLSTATE: 42601"),
        ("id >", "Spark cannot evaluate 'id >' on this DataFrame: [PARSE_SYNTAX_ERROR] Syntax error at or near end "
         "of input. SQLSTATE: 42601 (line 1, pos 4)"),
    ],
)
@pytest.mark.parametrize("use", ["where", "expression"])
def test_conditions_must_be_boolean_deterministic_and_row_by_row(spark, job_counter, where, message, use):
    from pyspark.sql.functions import udf

    # A function Cola's name list cannot know: Spark's own plan says it is nondeterministic.
    spark.udf.register("cola_coin", udf(lambda: True, "boolean").asNondeterministic())
    df = spark.createDataFrame([(1, "a")], "id int, name string")
    rule = ({"type": "not_null", "columns": ["id"], "where": where} if use == "where"
            else {"type": "expression", "expression": where})
    for action in (lambda: Cola().run(df, [rule]), lambda: Cola().split(df, [rule])):
        with job_counter.count() as jobs, pytest.raises(ColaRuleError) as raised:
            action()
        assert jobs.jobs == 0
        assert str(raised.value) == f"rules[0] ({rule['type']}): {message}"


# -- names and outputs a rules file chooses ------------------------------------------------------


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("text.`/etc/passwd`", "source 'table' reads text.`/etc/passwd` (a path relation reads files): SQL that "
         f"reaches outside the data is refused by default; {SWITCH}"),
        ("db.orders; DROP TABLE x", "source 'table' must be a table name such as db.orders (or `odd name`), "
         "got 'db.orders; DROP TABLE x'"),
        ("orders WHERE 1=1", "source 'table' must be a table name such as db.orders (or `odd name`), "
         "got 'orders WHERE 1=1'"),
    ],
)
def test_a_table_source_is_a_plain_name_and_never_a_path_relation(table, message):
    with pytest.raises(ColaSourceError) as raised:
        parse_source({"table": table})
    assert str(raised.value) == message
    parse_source({"table": "catalog.db.`my orders`"})


@pytest.mark.spark
def test_a_table_source_reads_no_file_without_the_switch(spark):
    with pytest.raises(ColaSourceError):
        read_source(spark, {"table": "text.`/etc/hostname`"})
    with allowing_outside_access():
        assert read_source(spark, {"table": "text.`/etc/hostname`"}).count() == 1


def test_a_sql_rule_chooses_where_to_write_only_with_the_switch(tmp_path):
    rule = {"type": "sql", "failed_rows": "SELECT * FROM _validation_df", "output": {"path": str(tmp_path / "x")}}
    with pytest.raises(ColaRuleError) as raised:
        Cola().parse([rule])
    assert str(raised.value) == (
        "rules[0] (sql): 'output' writes the failed rows to a place the rules file chooses, which is refused by "
        f"default; {SWITCH}"
    )
    Cola(allow_external_access=True).parse([rule])


@pytest.mark.spark
@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ({"type": "sql", "failed_rows": "SELECT * FROM _validation_df WHERE nope > 0"},
         "rules[1] (sql): Spark cannot analyse 'failed_rows': [UNRESOLVED_COLUMN.WITH_SUGGESTION] A column, variable, "
         "or function parameter with name `nope` cannot be resolved. Did you mean one of the following? [`id`, `s`, `st`]. "
         "SQLSTATE: 42703"),
        ({"type": "sql", "query": "SELECT count(*) = 0 FROM cola_no_such_table"},
         "rules[1] (sql): Spark cannot analyse 'query': [TABLE_OR_VIEW_NOT_FOUND] The table or view "
         "`cola_no_such_table` cannot be found. Verify the spelling and correctness of the schema and catalog."),
        ({"type": "not_null", "columns": ["s.x"]},
         "rules[1] (not_null): column 's.x' cannot be read as a nested field: [INVALID_EXTRACT_BASE_FIELD_TYPE] "
         "Can't extract a value from \"s\". Need a complex type [STRUCT, ARRAY, MAP] but got \"STRING\". SQLSTATE: 42000"),
        ({"type": "not_null", "columns": ["st.zz"]},
         "rules[1] (not_null): column 'st.zz' cannot be read as a nested field: [FIELD_NOT_FOUND] No such struct "
         "field `zz` in `a`. SQLSTATE: 42704"),
        ({"type": "not_null", "columns": ["id"], "where": "(" * 101 + "id > 0" + ")" * 101},
         "rules[1] (not_null): 'where' nests parentheses 101 deep; at most 100 are allowed"),
    ],
)
def test_rules_spark_cannot_analyse_are_rule_errors_before_any_job(spark, job_counter, rule, message):
    df = spark.createDataFrame([(1, "x", (1,))], "id int, s string, st struct<a: int>")
    with job_counter.count() as jobs, pytest.raises(ColaRuleError) as raised:
        Cola().run(df, [{"type": "row_count", "min": 1}, rule])
    assert jobs.jobs == 0
    assert str(raised.value) == message


def test_a_view_name_is_a_plain_identifier_with_nothing_after_it():
    with pytest.raises(ColaRuleError) as raised:
        Cola().parse([{"type": "sql", "query": "SELECT true", "view_name": "orders\n"}])
    assert str(raised.value) == "rules[0] (sql): 'view_name' 'orders\\n' must be a plain identifier such as '_validation_df'"


# -- every condition alone: parentheses pair up within the condition itself ------------------


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ({"type": "not_null", "columns": ["amount"], "where": "amount > 0) OR (amount < 0"},
         "rules[0] (not_null): 'where' closes a parenthesis it never opened (at character 11); its parentheses "
         "must pair up"),
        ({"type": "expression", "expression": "amount > 0) OR (amount < 0"},
         "rules[0] (expression): 'expression' closes a parenthesis it never opened (at character 11); its "
         "parentheses must pair up"),
        ({"type": "expression", "expression": "(amount > 0"},
         "rules[0] (expression): 'expression' leaves 1 parenthesis open; its parentheses must pair up"),
        ({"type": "sql", "query": "SELECT ((1)"},
         "rules[0] (sql): 'query' leaves 1 parenthesis open; its parentheses must pair up"),
    ],
)
def test_a_condition_whose_parentheses_only_pair_up_inside_the_block_is_refused_alone(rule, message):
    # With another condition in the block: the engine analyses a block's conditions together,
    # inside one expression whose own parentheses would pair up with these.
    other = {"type": "range", "column": "amount", "min": 0, "where": "amount IS NOT NULL"}
    with pytest.raises(ColaRuleError) as raised:
        Cola().parse([rule, other])
    assert str(raised.value) == message


@pytest.mark.spark
def test_a_condition_that_only_parses_inside_the_block_is_a_rule_error_before_any_job(spark, job_counter):
    """A line comment continued by a final backslash: alone, "amount > 0 AND amount -" is no
    condition; joined to the next one it swallowed the text between them, and the block read
    as "amount > 0 AND amount - amount < 5"."""
    df = spark.createDataFrame([(1,)], "amount int")
    rules = [
        {"type": "not_null", "columns": ["amount"], "where": "amount > 0 AND amount - -- then\\"},
        {"type": "expression", "expression": "amount < 5"},
    ]
    for action in (lambda: Cola().run(df, rules), lambda: Cola().split(df, rules)):
        with job_counter.count() as jobs, pytest.raises(ColaRuleError) as raised:
            action()
        assert jobs.jobs == 0
        assert str(raised.value).startswith(
            "rules[0] (not_null): Spark cannot evaluate 'amount > 0 AND amount - -- then\\\\' on this DataFrame: "
            "[PARSE_SYNTAX_ERROR] Syntax error at or near end of input"
        ), str(raised.value)
