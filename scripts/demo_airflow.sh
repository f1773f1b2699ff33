#!/usr/bin/env bash
# Run the example DAG cola_check_and_branch end to end with `airflow dags test`, on local Spark,
# in a throwaway Airflow (temporary AIRFLOW_HOME, sqlite), and show the XCom and the branch taken.
#
#   scripts/demo_airflow.sh [DAY]    DAY: 2024-01-01 (passes), 2024-01-02 (warns), 2024-01-03 (fails, default)
source "$(dirname "$0")/_env.sh"
cd "$ROOT"

day="${1:-2024-01-03}"
case "$day" in
  2024-01-01|2024-01-02|2024-01-03) ;;
  *) echo "error: DAY must be one of the sample days 2024-01-01, 2024-01-02, 2024-01-03 (got '$day')" >&2; exit 2 ;;
esac

home="$(mktemp -d "${TMPDIR:-/tmp}/cola-airflow-demo.XXXXXX")"
keep_home() { echo "the Airflow home (with the full log in $home/dags-test.log) is kept in $home" >&2; }
trap 'rm -rf "$home"' EXIT

export AIRFLOW_HOME="$home"
export AIRFLOW__CORE__DAGS_FOLDER="$ROOT/dags_examples"
export AIRFLOW__CORE__LOAD_EXAMPLES=False
export AIRFLOW__DATABASE__SQL_ALCHEMY_CONN="sqlite:///$home/airflow.db"
# Local mode. A connection URI would be mis-parsed (spark://local[2] falls back to yarn): use JSON.
export AIRFLOW_CONN_SPARK_LOCAL='{"conn_type": "spark", "host": "local[2]"}'

echo "==> setting up a temporary Airflow in $home (sqlite)" >&2
if ! "$VENV/bin/airflow" db migrate >"$home/migrate.log" 2>&1; then
  tail -n 30 "$home/migrate.log" >&2
  trap - EXIT; keep_home; exit 1
fi

echo "==> airflow dags test cola_check_and_branch $day   (spark-submit in local mode, about a minute)" >&2
if ! "$VENV/bin/airflow" dags test cola_check_and_branch "$day" >"$home/dags-test.log" 2>&1; then
  tail -n 40 "$home/dags-test.log" >&2
  trap - EXIT; keep_home; exit 1
fi

"$VENV/bin/python" - "$day" <<'PY'
import json
import sys

from airflow.models.dagrun import DagRun
from airflow.models.xcom import XComModel
from airflow.utils.session import create_session

DAG_ID, CHECK = "cola_check_and_branch", "check_orders"
with create_session() as session:
    run = session.query(DagRun).filter(DagRun.dag_id == DAG_ID).order_by(DagRun.id.desc()).first()
    states = {ti.task_id: getattr(ti.state, "value", ti.state) for ti in run.get_task_instances(session=session)}
    row = session.scalars(XComModel.get_many(run_id=run.run_id, dag_ids=DAG_ID, task_ids=CHECK, key="return_value")).first()
    summary = XComModel.deserialize_value(row)

counts = summary["counts"]
print(f"\nCola check of the orders of {sys.argv[1]}: {summary['severity'].upper()} "
      f"({counts['pass']} pass, {counts['warn']} warn, {counts['fail']} fail)")
for result in summary["results"]:
    print(f"  {result['severity'].upper():<5} {result['code']:<24} {result['message']}")
followed = [task for task in ("load", "notify", "quarantine") if states.get(task) == "success"]
skipped = [task for task in ("load", "notify", "quarantine") if states.get(task) == "skipped"]
print(f"\nBranch taken: {', '.join(followed) or 'none'}   (skipped: {', '.join(skipped) or 'none'})")
print("Task states:  " + "  ".join(f"{task}={state}" for task, state in sorted(states.items())))
print(f"Dag run:      {getattr(run.state, 'value', run.state)}")
print(f"\nXCom return_value of {CHECK}:")
print(json.dumps(summary, indent=2))
PY
