"""``on_quality`` alerts: checked when the DAG is parsed, the ``cola`` summary their templates
see, and real DAG runs that send a mail to an SMTP server and JSON to a webhook on 127.0.0.1."""

from __future__ import annotations

import email
import html
import json
import re
import socket
from email.message import Message
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote

import pytest
from airflow.providers.smtp.notifications.smtp import SmtpNotifier

from cola_expected import ORDERS_FAIL_SUMMARY, SPLIT_FAIL_SUMMARY, priced
from cola_servers import smtp_server, webhook_server

pytestmark = pytest.mark.airflow

REPO = Path(__file__).resolve().parents[2]


def _operator(**arguments):
    from airflow_provider_cola.operators import ColaCheckOperator

    return ColaCheckOperator(task_id="t", rules=[{"type": "row_count", "min": 1}], source={"table": "t"}, **arguments)


def _split_operator(**arguments):
    from airflow_provider_cola.operators import ColaSplitOperator

    return ColaSplitOperator(
        task_id="t", rules=[{"type": "row_count", "min": 1}], source={"table": "t"}, valid_output="/v",
        invalid_output="/q", **arguments,
    )


def _decorated(**arguments):
    from airflow.sdk import DAG

    from airflow_provider_cola.decorators import cola_check

    def orders(spark):
        return spark.range(1)

    with DAG("parse_only", schedule=None):
        return cola_check(rules=[{"type": "row_count", "min": 1}], **arguments)(orders)().operator


ENTRY_POINTS = pytest.mark.parametrize("build", [_operator, _split_operator, _decorated],
                                       ids=["check", "split", "decorator"])


def _callback(context):
    """A callable alert."""


@ENTRY_POINTS
def test_on_quality_takes_a_notifier_a_callable_or_a_list_of_them(airflow_host, build):
    mail = SmtpNotifier(to="ops@example.com")
    assert build().on_quality == ()
    assert build().on_quality_severity == "fail"
    assert build(on_quality=mail).on_quality == (mail,)
    assert build(on_quality=_callback, on_quality_severity="warn").on_quality == (_callback,)
    created = build(on_quality=[mail, _callback], on_quality_severity="warn")
    assert (created.on_quality, created.on_quality_severity) == ((mail, _callback), "warn")


@ENTRY_POINTS
@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"on_quality": "ops@example.com"},
         "on_quality must be an Airflow notifier (a BaseNotifier such as SmtpNotifier(...)) or a callable taking the "
         "task context, or a list of them; got 'ops@example.com'"),
        ({"on_quality": [_callback, {"to": "ops@example.com"}]},
         "on_quality[1] must be an Airflow notifier (a BaseNotifier such as SmtpNotifier(...)) or a callable taking "
         "the task context, or a list of them; got {'to': 'ops@example.com'}"),
        ({"on_quality": SmtpNotifier},
         "on_quality must be a notifier instance, not the class SmtpNotifier: write SmtpNotifier(...) with its "
         "arguments"),
        ({"on_quality": _callback, "on_quality_severity": "error"},
         "on_quality_severity must be 'warn' (alert on a warning or a failure) or 'fail' (on a failure only), "
         "got 'error'"),
        ({"on_quality": _callback, "on_quality_severity": "FAIL"},
         "on_quality_severity must be 'warn' (alert on a warning or a failure) or 'fail' (on a failure only), "
         "got 'FAIL'"),
    ],
    ids=["text", "dict-in-list", "class", "unknown-severity", "upper-case"],
)
def test_a_wrong_on_quality_is_refused_when_the_dag_is_parsed(airflow_host, build, arguments, message):
    with pytest.raises(ValueError) as refused:
        build(**arguments)
    assert str(refused.value) == message


@pytest.fixture
def airflow_host(airflow_home):
    """Airflow configured (the test environment), without a DAG run."""
    return airflow_home


def test_the_summary_an_alert_sees_for_a_failed_split(airflow_host):
    from airflow_provider_cola.alerts import alert_summary

    cola = alert_summary(
        SPLIT_FAIL_SUMMARY, dag_id="orders", task_id="split_orders", run_id="scheduled__2024-01-03T00:00:00+00:00",
        map_index=2, report_url="https://airflow.example.com/cola/report?dag_id=orders",
    )
    failed = [result for result in SPLIT_FAIL_SUMMARY["results"] if result["severity"] == "fail"]
    assert cola == {
        "severity": "fail",
        "headline": "4 of 4 checks failed (not_null(order_id), unique(order_id), NEGATIVE_AMOUNT, BAD_COUNTRY)",
        "counts": {"pass": 0, "warn": 0, "fail": 4},
        "total": 4,
        "failed_codes": ["not_null(order_id)", "unique(order_id)", "NEGATIVE_AMOUNT", "BAD_COUNTRY"],
        "warned_codes": [],
        "failed_names": ["not_null(order_id)", "unique(order_id)", "NEGATIVE_AMOUNT", "BAD_COUNTRY"],
        "warned_names": [],
        "failed": failed,
        "warned": [],
        "valid_count": 1,
        "invalid_count": 5,
        "report_url": "https://airflow.example.com/cola/report?dag_id=orders",
        "dag_id": "orders",
        "task_id": "split_orders",
        "run_id": "scheduled__2024-01-03T00:00:00+00:00",
        "map_index": 2,
        "message": (
            "Cola FAIL: orders.split_orders[2] (run scheduled__2024-01-03T00:00:00+00:00)\n"
            "4 of 4 checks failed (not_null(order_id), unique(order_id), NEGATIVE_AMOUNT, BAD_COUNTRY)\n"
            "  [FAIL] not_null(order_id): 1 NULL value (order_id: 1)\n"
            "  [FAIL] unique(order_id): 1 duplicate row (6 rows, 5 distinct)\n"
            "  [FAIL] range(amount,0,): 1 value out of range (>= 0)\n"
            "  [FAIL] regex(country,^[A-Z]{2}$): 1 value does not match (NULL counts as not matching)\n"
            "Rows: 1 valid, 5 invalid\n"
            "Report: https://airflow.example.com/cola/report?dag_id=orders"
        ),
    }


def test_the_headline_names_what_broke_first(airflow_host):
    from airflow_provider_cola.alerts import headline

    def run(*severities: str) -> dict:
        results = [
            {"rule_type": "row_count", "severity": severity, "code": code, "message": "", "check_name": None}
            for severity, code in zip(severities, ["A", "B", "C"], strict=False)
        ]
        return {"results": results}

    assert headline(run("pass", "pass")) == "2 of 2 checks passed"
    assert headline(run("pass")) == "1 of 1 check passed"
    assert headline(run("warn", "pass")) == "1 of 2 checks warned (A)"
    assert headline(run("fail")) == "1 of 1 check failed (A)"
    assert headline(run("warn", "fail", "fail")) == "2 of 3 checks failed (B, C), 1 warned (A)"
    # A result without a code is named by its rule type, as in the asset events.
    assert headline({"results": [{"rule_type": "sql", "severity": "fail", "code": None}]}) == (
        "1 of 1 check failed (sql)"
    )


def test_the_docs_show_the_default_message_of_the_example(airflow_host):
    from airflow_provider_cola.alerts import alert_summary

    shown = [block for block in (REPO / "docs" / "airflow" / "alerts.md").read_text().split("```text\n")[1:]
             if block.startswith("Cola FAIL: ")]
    assert len(shown) == 1
    cola = alert_summary(
        ORDERS_FAIL_SUMMARY, dag_id="orders", task_id="check_orders", run_id="scheduled__2024-01-03T00:00:00+00:00",
        report_url="https://airflow.example.com/cola/report?dag_id=orders&run_id=scheduled__2024-01-03T00%3A00%3A00"
                   "%2B00%3A00&task_id=check_orders&map_index=-1",
    )
    assert shown[0].split("\n```", 1)[0] == cola["message"]


# --- real DAG runs ------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _body(message: Message) -> str:
    """The text of a mail's one HTML part, decoded."""
    (part,) = [part for part in message.walk() if part.get_content_type() == "text/html"]
    return part.get_payload(decode=True).decode(part.get_content_charset())


@pytest.mark.spark
def test_alerts_fire_on_real_runs_before_the_task_branches_or_fails(run_dag, monkeypatch, tmp_path):
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with smtp_server() as (smtp_port, mailbox), webhook_server() as (webhook, hooks):
        for name, port in (("COLA_SMTP", smtp_port), ("COLA_SMTP_DOWN", _free_port())):
            monkeypatch.setenv(f"AIRFLOW_CONN_{name}", json.dumps({
                "conn_type": "smtp", "host": "127.0.0.1", "port": port,
                "extra": {"disable_ssl": True, "disable_tls": True, "timeout": 10, "retry_limit": 0},
            }))
        outcome = run_dag("cola_test_alerts", "2024-01-03", {"webhook": webhook, "reports": str(tmp_path)})

    with create_session() as session:
        run_id = session.scalars(
            select(DagRun.run_id).where(DagRun.dag_id == "cola_test_alerts").order_by(DagRun.id.desc())
        ).first()
    assert outcome.states == {
        "check_orders": "success", "load": "skipped", "quarantine": "success", "check_in_process": "failed",
        "split_in_process": "success", "warned_quietly": "success", "warned_aloud": "success",
        "mail_server_down": "success",
    }
    # on_failure="fail" fails the task after alerting, once; a failed alert retries nothing.
    assert outcome.tries["check_in_process"] == 1
    assert outcome.tries["mail_server_down"] == 1
    link = f"/cola/report?dag_id=cola_test_alerts&run_id={quote(run_id, safe='')}&task_id=check_orders&map_index=-1"

    # SmtpNotifier, its subject and body rendered against the task context and the summary.
    (mail,) = mailbox.mails
    assert (mail.mail_from, mail.rcpt_to) == ("cola@example.com", ["data-owners@example.com"])
    message = email.message_from_string(mail.data)
    assert (message["From"], message["To"], message["Subject"]) == (
        "cola@example.com", "data-owners@example.com", "[FAIL] cola_test_alerts.check_orders on 2024-01-03",
    )
    assert _body(message) == (
        "<p>3 of 4 checks failed (not_null(order_id), unique(order_id), NEGATIVE_AMOUNT)</p>"
        "<p>Failed: order ids present, unique(order_id), NEGATIVE_AMOUNT (3 of 4)</p>"
        f"<p>Report: {link}</p>"
    )

    failed_lines = (
        "3 of 4 checks failed (not_null(order_id), unique(order_id), NEGATIVE_AMOUNT)\n"
        "  [FAIL] order ids present: not_null(order_id): 1 NULL value (order_id: 1)\n"
        "  [FAIL] unique(order_id): 1 duplicate row (6 rows, 5 distinct)\n"
        "  [FAIL] range(amount,0,): 1 value out of range (>= 0)"
    )
    failed = {"failed_codes": ["not_null(order_id)", "unique(order_id)", "NEGATIVE_AMOUNT"], "warned_codes": [],
              "counts": {"pass": 1, "warn": 0, "fail": 3}, "severity": "fail", "xcom_severity": "fail"}
    posts = dict(hooks.posts)
    assert len(posts) == len(hooks.posts) == 5
    assert posts == {
        # The callable: the default message, with the report's link.
        "/check_orders": {
            **failed,
            "message": f"Cola FAIL: cola_test_alerts.check_orders (run {run_id})\n{failed_lines}\nReport: {link}",
            "report_url": link,
        },
        # A BaseNotifier of the DAG's own, its templated text rendered.
        "/check_in_process": {
            "text": "fail: not_null(order_id), unique(order_id), NEGATIVE_AMOUNT in check_in_process on 2024-01-03",
        },
        "/split_in_process": {"text": "2 valid, 4 invalid rows of 2024-01-03"},
        # A warning alerts with on_quality_severity="warn" only (warned_quietly posted nothing).
        "/warned_aloud": {
            "message": f"Cola WARN: cola_test_alerts.warned_aloud (run {run_id})\n"
                       "1 of 2 checks warned (unique(order_id))\n"
                       "  [WARN] unique(order_id): 1 duplicate row (6 rows, 5 distinct)",
            "severity": "warn", "xcom_severity": "warn", "failed_codes": [], "warned_codes": ["unique(order_id)"],
            "counts": {"pass": 1, "warn": 1, "fail": 0}, "report_url": None,
        },
        # The mail server was down: the next alert still fired.
        "/mail_server_down": {
            **failed,
            "message": f"Cola FAIL: cola_test_alerts.mail_server_down (run {run_id})\n{failed_lines}",
            "report_url": None,
        },
    }
    # The split's report, without a history, names the DAG run and the data's date.
    page = (tmp_path / "split.html").read_text()
    facts = re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", page.split("</dl>", 1)[0])
    # And what the run cost Spark, as the task's XCom has it (the seconds are the page's).
    (cost,) = [value for name, value in facts if name == "Spark cost"]
    assert cost == priced(outcome.costs["split_in_process"], cost, prefix="")
    assert [(name, value) for name, value in facts if name not in ("validated at", "Spark cost")] == [
        # A DAG without a schedule: Airflow gives a manual run the interval of its logical date alone.
        ("data date", "2024-01-03 00:00:00+00:00"),
        ("data interval", "2024-01-03 00:00:00+00:00 to 2024-01-03 00:00:00+00:00"),
        ("DAG", "cola_test_alerts"), ("task", "split_in_process"),
        ("Airflow run", html.escape(run_id)),
    ]
    lines = outcome.log.splitlines()

    def at(text: str) -> int:
        (index,) = [number for number, line in enumerate(lines) if text in line]
        return index

    assert (
        "[warning  ] Cola: the on_quality alert SmtpNotifier failed, so it was not sent (the run's outcome stands): "
        "ConnectionRefusedError: [Errno 111] Connection refused [airflow.task.operators."
    ) in outcome.log
    # The alerts fire after the first line and before the task branches or fails: branching
    # and failing raise, so an alert after them would never have been received. The XCom
    # severity each callable read back shows that it was pushed before.
    assert at("Cola: FAIL: 3 of 4 checks failed (not_null(order_id), unique(order_id), NEGATIVE_AMOUNT); "
              "following quarantine") < at("Cola: on_quality alert SmtpNotifier sent (severity fail)")
    assert at("Cola: on_quality alert SmtpNotifier sent (severity fail)") < at("Branch into ['quarantine']")
    assert "airflow_provider_cola.errors.ColaChecksFailed: 3 of 4 Cola checks failed:\n" in outcome.log


# --- the rules' text is data (issue 44) ---------------------------------------------------------

# A rule name that, taken as text, adds a failed result line and a report link to the message,
# a header to the mail, and a live link to an HTML template that shows it in a <pre>.
HOSTILE_NAME = 'orders\n  [FAIL] forged: 9 rows\nReport: http://evil\r\x85\u2028\u2029</pre><a href="http://evil">x</a>'
HOSTILE_CODE = "BAD\nBcc: victim@example.com\n  [PASS] forged</pre><a href=http://evil>y</a>"
SHOWN_NAME = ('orders\\n  [FAIL] forged: 9 rows\\nReport: http://evil\\r\\x85\\u2028\\u2029</pre>'
              '<a href="http://evil">x</a>')
SHOWN_CODE = "BAD\\nBcc: victim@example.com\\n  [PASS] forged</pre><a href=http://evil>y</a>"


def _hostile_summary() -> dict:
    """A failed and a warned result with hostile text, as a results file or an XCom gives them
    back (``CheckResult.from_dict``), and a pass."""
    from cola_core.language.result import CheckResult
    from cola_core.report.results import summarise

    built = [
        CheckResult("not_null", False, "not_null(order_id): 1 NULL value", 1, check_name=HOSTILE_NAME,
                    code=HOSTILE_CODE, dimension=HOSTILE_NAME, rule_id=HOSTILE_CODE),
        # A custom check's message, holding text of the data.
        CheckResult("custom", True, "value 'a\nReport: http://evil'", 1, severity="warn", code="CUSTOM"),
        CheckResult("row_count", True, "row_count = 6", code="row_count"),
    ]
    return summarise([CheckResult.from_dict(json.loads(json.dumps(result.to_dict()))) for result in built])


def test_rule_text_cannot_forge_a_line_of_the_headline_or_the_message(airflow_host):
    from airflow_provider_cola.alerts import alert_summary

    cola = alert_summary(_hostile_summary(), dag_id="orders", task_id="check", run_id="manual__1",
                         report_url="https://airflow.example.com/cola/report?dag_id=orders")
    assert cola["headline"] == f"1 of 3 checks failed ({SHOWN_CODE}), 1 warned (CUSTOM)"
    assert cola["message"] == (
        "Cola FAIL: orders.check (run manual__1)\n"
        f"1 of 3 checks failed ({SHOWN_CODE}), 1 warned (CUSTOM)\n"
        f"  [FAIL] {SHOWN_NAME}: not_null(order_id): 1 NULL value\n"
        "  [WARN] value 'a\\nReport: http://evil'\n"
        "Report: https://airflow.example.com/cola/report?dag_id=orders"
    )
    # One line per result listed, and one report link, for every reader's idea of a line.
    lines = cola["message"].splitlines()
    assert len(lines) == 2 + 2 + 1
    assert [line for line in lines if line.startswith("Report:")] == [lines[-1]]
    assert [line for line in lines if line.lstrip().startswith("[")] == lines[2:4]
    assert (cola["failed_codes"], cola["failed_names"], cola["warned_codes"]) == (
        [SHOWN_CODE], [SHOWN_NAME], ["CUSTOM"],
    )
    # The results as in XCom, each text on one line; their other data as it was.
    (failed,) = cola["failed"]
    assert (failed["check_name"], failed["code"], failed["dimension"], failed["rule_id"], failed["failed_count"]) == (
        SHOWN_NAME, SHOWN_CODE, SHOWN_NAME, SHOWN_CODE, 1,
    )
    assert all(len(str(text).splitlines()) <= 1 for result in [*cola["failed"], *cola["warned"]]
               for text in result.values() if isinstance(text, str))


def test_the_task_logs_lines_and_failure_name_each_result_on_one_line(airflow_host):
    from airflow_provider_cola._outcome import describe_results
    from airflow_provider_cola.alerts import headline

    summary = _hostile_summary()
    assert describe_results(summary["results"], "fail") == f"  [FAIL] {SHOWN_NAME}: not_null(order_id): 1 NULL value"
    assert describe_results(summary["results"], "warn") == "  [WARN] value 'a\\nReport: http://evil'"
    assert len(headline(summary).splitlines()) == 1


class _Elements(HTMLParser):
    """The start tags of an HTML text, in order, with their attributes; and its text."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.elements: list[tuple[str, list]] = []
        self.text: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, attrs))

    def handle_data(self, data):
        self.text.append(data)


DOCS_TEMPLATES = re.findall(r'subject="([^"]*)",\n\s*html_content="([^"]*)"',
                            (REPO / "docs" / "airflow" / "alerts.md").read_text())


def test_the_docs_show_two_mail_templates():
    assert len(DOCS_TEMPLATES) == 2


@pytest.mark.parametrize(("subject", "html_content"), DOCS_TEMPLATES, ids=["at-a-glance", "example"])
def test_the_documented_mail_templates_show_rule_text_as_text(airflow_host, monkeypatch, subject, html_content):
    """Each mail template of the docs, sent by Airflow's SmtpNotifier (its fields rendered by the
    DAG's Jinja environment, as Airflow renders a callback's) through send_alerts, to an SMTP
    server on 127.0.0.1: the mail has the template's elements only, and its one Subject."""
    import logging
    import types

    from airflow.sdk import DAG

    from airflow_provider_cola.alerts import send_alerts

    def sent(summary: dict) -> Message:
        with smtp_server() as (port, mailbox):
            monkeypatch.setenv("AIRFLOW_CONN_COLA_SMTP", json.dumps({
                "conn_type": "smtp", "host": "127.0.0.1", "port": port,
                "extra": {"disable_ssl": True, "disable_tls": True, "timeout": 10, "retry_limit": 0},
            }))
            notifier = SmtpNotifier(to="data-owners@example.com", from_email="airflow@example.com",
                                    smtp_conn_id="cola_smtp", subject=subject, html_content=html_content)
            ti = types.SimpleNamespace(dag_id="orders", task_id="check_orders", run_id="manual__1", map_index=None)
            context = {"dag": DAG("orders", schedule=None), "ti": ti, "ds": "2024-01-03"}
            send_alerts(logging.getLogger("test_alerts"), context, summary, on_quality=[notifier],
                        on_quality_severity="warn", report_url="https://airflow.example.com/cola/report?a=1&b=2")
        (mail,) = mailbox.mails
        return email.message_from_string(mail.data)

    hostile = sent(_hostile_summary())
    plain = sent(ORDERS_FAIL_SUMMARY)
    # No element of the rule's text: the body has the elements of a mail of plain names.
    body = _Elements(_body(hostile))
    assert body.elements == _Elements(_body(plain)).elements
    assert not [tag for tag, _ in body.elements if tag in ("a", "script")]
    assert '<a href="http://evil' not in _body(hostile) and "<a href=http://evil" not in _body(hostile)
    text = "".join(body.text)
    assert SHOWN_CODE in text  # the headline's code, as text, whole
    if "cola.message" in html_content:
        assert f"  [FAIL] {SHOWN_NAME}: not_null(order_id): 1 NULL value" in text.splitlines()
    # The subject is one header; no header of the rule's text was added.
    assert sorted(hostile.keys()) == sorted(plain.keys())
    assert hostile.get_all("Bcc") is None and len(hostile.get_all("Subject")) == 1
