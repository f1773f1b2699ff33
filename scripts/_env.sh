# Shared by scripts/test and scripts/demo: make sure Java and the project's virtualenv exist.
# Sourced, not run. The venv is rebuilt whenever constraints.txt or pyproject.toml change.
# COLA_SPARK_LINE=3.5 selects the PySpark 3.5 environment (.venv-spark35): constraints.txt with
# pyspark at the newest 3.5 release and no pyspark-client, derived here so that the two cannot
# drift apart. It holds the engine alone, since the Airflow provider needs pyspark-client 4.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SPARK_LINE="${COLA_SPARK_LINE:-4}"
case "$SPARK_LINE" in
  4) PYSPARK_PIN=""; EXTRAS="airflow,openlineage,test,docs,contracts"; default_venv="$ROOT/.venv" ;;
  3.5) PYSPARK_PIN="pyspark==3.5.9"; EXTRAS="test,docs,contracts"; default_venv="$ROOT/.venv-spark35" ;;
  *) echo "error: COLA_SPARK_LINE is '$SPARK_LINE'; give 4 (the default) or 3.5." >&2; exit 1 ;;
esac
VENV="${COLA_VENV:-$default_venv}"
PYTHON="${PYTHON:-python3}"

java_major() {
  java -version 2>&1 | sed -n 's/.*version "\([0-9]*\)[."].*/\1/p' | head -n 1
}

if ! command -v java >/dev/null 2>&1; then
  echo "error: Java is not installed. PySpark 4 needs Java 17 or 21 (e.g. apt-get install openjdk-17-jre-headless)." >&2
  exit 1
fi
major="$(java_major)"
if [ -z "$major" ] || [ "$major" -lt 17 ]; then
  echo "error: found Java ${major:-unknown}; PySpark 4 needs Java 17 or 21." >&2
  exit 1
fi

if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
  echo "error: $PYTHON is missing or older than Python 3.10." >&2
  exit 1
fi

# Spark picks the first non-loopback interface otherwise, and warns about it on every start.
export SPARK_LOCAL_IP="${SPARK_LOCAL_IP:-127.0.0.1}"

constraints_text() {
  if [ -z "$PYSPARK_PIN" ]; then
    cat "$ROOT/constraints.txt"
  else
    sed -e "s/^pyspark==.*/$PYSPARK_PIN/" -e '/^pyspark-client==/d' "$ROOT/constraints.txt"
  fi
}
stamp="$( { constraints_text; cat "$ROOT/pyproject.toml"; } | sha256sum | cut -c1-16)"
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$VENV/.cola-stamp" 2>/dev/null)" != "$stamp" ]; then
  echo "==> creating the virtualenv in $VENV (a few minutes the first time)" >&2
  "$PYTHON" -m venv "$VENV"
  log="$VENV/install.log"
  constraints="$VENV/constraints.txt"
  constraints_text > "$constraints"
  # constraints.txt pins pyspark and pyspark-client to the same version: both write the
  # same pyspark/ folder, and a mismatch leaves Python files and jars of different releases.
  if ! { "$VENV/bin/python" -m pip install --upgrade pip \
         && "$VENV/bin/python" -m pip install -c "$constraints" -e "$ROOT[$EXTRAS]"; } >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "error: installing the environment failed; the whole log is in $log" >&2
    exit 1
  fi
  echo "$stamp" > "$VENV/.cola-stamp"
fi
