"""``on_quality`` alerts, one entry point and one kind of alert per task; run by test_alerts.py.

The test starts an SMTP server and a webhook server on 127.0.0.1 and passes the webhook's URL
as the ``webhook`` param; the ``cola_smtp`` connection (set by the test) points at the SMTP
server, ``cola_smtp_down`` at a port nothing listens on. Run on 2024-01-03, the failing day.
"""

from __future__ import annotations

import datetime as dt
import json
import urllib.request
from pathlib import Path

import pendulum
from airflow.providers.smtp.notifications.smtp import SmtpNotifier
from airflow.sdk import DAG, BaseNotifier, task

from airflow_provider_cola.decorators import cola_check
from airflow_provider_cola.operators import ColaCheckOperator

ORDERS = Path(__file__).resolve().parents[3] / "dags_examples" / "data" / "orders"
FAST = {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"}
# Straight to 127.0.0.1, whatever proxy the environment names.
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _post(url: str, body: dict) -> None:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with _DIRECT.open(request, timeout=10):
        pass


def post_to_webhook(context):
    """A plain callable: posts the default message, the codes and the link as JSON, and the
    severity of the task's XCom, which is pushed before the alerts fire."""
    cola, ti = context["cola"], context["ti"]
    body = {key: cola[key] for key in ("message", "severity", "failed_codes", "warned_codes", "counts", "report_url")}
    body["xcom_severity"] = ti.xcom_pull(task_ids=ti.task_id)["severity"]
    _post(f"{context['params']['webhook']}/{ti.task_id}", body)


class WebhookNotifier(BaseNotifier):
    """A notifier of its own: posts its rendered ``text`` as JSON to ``url``."""

    template_fields = ("url", "text")

    def __init__(self, url: str, text: str):
        super().__init__()
        self.url = url
        self.text = text

    def notify(self, context):
        _post(self.url, {"text": self.text})


MAIL = SmtpNotifier(
    smtp_conn_id="cola_smtp",
    from_email="cola@example.com",
    to="data-owners@example.com",
    subject="[{{ cola.severity | upper }}] {{ dag.dag_id }}.{{ ti.task_id }} on {{ ds }}",
    html_content=(
        "<p>{{ cola.headline }}</p>"
        "<p>Failed: {{ cola.failed_names | join(', ') }} ({{ cola.counts.fail }} of {{ cola.total }})</p>"
        "<p>Report: {{ cola.report_url }}</p>"
    ),
)
RULES = [
    {"type": "row_count", "min": 1},
    {"type": "not_null", "columns": ["order_id"], "name": "order ids present"},
    {"type": "unique", "columns": ["order_id"]},
    {"type": "range", "column": "amount", "min": 0, "code": "NEGATIVE_AMOUNT"},
]
# On 2024-01-03 these only warn.
WARN_RULES = [{"type": "unique", "columns": ["order_id"], "severity": "warn"}, {"type": "row_count", "min": 1}]

with DAG(
    dag_id="cola_test_alerts",
    schedule=None,
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    default_args={"retries": 0},
    params={"webhook": "http://127.0.0.1:9/set-by-the-test", "reports": "/nonexistent/set-by-the-test"},
):
    # spark-submit, branching, an HTML report: a mail (a real notifier class) and a webhook
    # (a callable), both before the task branches.
    check = ColaCheckOperator(
        task_id="check_orders",
        conn_id="spark_local",
        rules=RULES,
        source={"path": str(ORDERS / "{{ ds }}"), "format": "json"},
        branch={"pass": "load", "fail": "quarantine"},
        html_report="{{ params.reports }}/check_orders.html",
        on_quality=[MAIL, post_to_webhook],
        conf=FAST,
    )

    @task
    def load():
        print("loading")

    @task
    def quarantine():
        print("held back")

    check >> [load(), quarantine()]

    # In the task's process; on_failure="fail" still fails the task after alerting, once.
    @cola_check(
        rules=RULES,
        on_quality=WebhookNotifier(
            url="{{ params.webhook }}/{{ ti.task_id }}",
            text="{{ cola.severity }}: {{ cola.failed_codes | join(', ') }} in {{ ti.task_id }} on {{ ds }}",
        ),
        retries=1,
        retry_delay=dt.timedelta(seconds=1),
        conn_id="spark_local",
        conf=FAST,
    )
    def check_in_process(spark, ds=None):
        return spark.read.json(str(ORDERS / ds))

    # A split: the alert says how many rows went where. Its report names the DAG run and the
    # data's date without a history.
    @cola_check(
        rules=RULES[1:],
        valid_output="{{ params.reports }}/split/valid",
        invalid_output="{{ params.reports }}/split/quarantine",
        html_report="{{ params.reports }}/split.html",
        on_failure="warn",
        on_quality=WebhookNotifier(
            url="{{ params.webhook }}/{{ ti.task_id }}",
            text="{{ cola.valid_count }} valid, {{ cola.invalid_count }} invalid rows of {{ ds }}",
        ),
        conn_id="spark_local",
        conf=FAST,
    )
    def split_in_process(spark, ds=None):
        return spark.read.json(str(ORDERS / ds))

    # A warning alerts only when asked to: the first posts nothing, the second posts.
    @cola_check(rules=WARN_RULES, on_quality=post_to_webhook, conn_id="spark_local", conf=FAST)
    def warned_quietly(spark, ds=None):
        return spark.read.json(str(ORDERS / ds))

    @cola_check(
        rules=WARN_RULES, on_quality=post_to_webhook, on_quality_severity="warn", conn_id="spark_local", conf=FAST
    )
    def warned_aloud(spark, ds=None):
        return spark.read.json(str(ORDERS / ds))

    # The mail server is down: a warning in the log, and the run's outcome as without alerts.
    @cola_check(
        rules=RULES,
        on_failure="warn",
        on_quality=[
            SmtpNotifier(smtp_conn_id="cola_smtp_down", from_email="cola@example.com", to="ops@example.com",
                         subject="{{ cola.severity }}", html_content="{{ cola.message }}"),
            post_to_webhook,
        ],
        retries=1,
        retry_delay=dt.timedelta(seconds=1),
        conn_id="spark_local",
        conf=FAST,
    )
    def mail_server_down(spark, ds=None):
        return spark.read.json(str(ORDERS / ds))

    check_in_process()
    split_in_process()
    warned_quietly()
    warned_aloud()
    mail_server_down()
