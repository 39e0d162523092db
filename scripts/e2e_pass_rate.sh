#!/usr/bin/env bash
# Pass rates of the e2e tasks against a real model server that is already running (e.g.
# ../shared/local-llm/serve.sh on PORT): every task once per temperature in TEMPS, each round
# through the recording proxy; after each round the JUnit results and the recordings are kept in
# OUT/round-N-tT/, and scripts/e2e_pass_table.py prints the table from them. Serial (-n 0): the
# model server has one slot, and two tasks at once would also double every wall time.
#   PORT=8091 TEMPS="0 0.3 0.3" OUT=/tmp/e2e-pass-rate   extra arguments go to pytest (-k …)
set -euo pipefail
cd "$(dirname "$0")/.."
port=${PORT:-8091}
record_port=${RECORD_PORT:-$((port + 2))}
python=${PYTHON:-.venv/bin/python}
out=${OUT:-/tmp/e2e-pass-rate}
mkdir -p "$out"
"$python" scripts/record_real_model.py --upstream "http://127.0.0.1:$port" --port "$record_port" >"$out/proxy.log" 2>&1 &
proxy=$!
trap 'kill "$proxy" 2>/dev/null || true' EXIT INT TERM
sleep 1
export NANOHERMES_E2E_BASE_URL="http://127.0.0.1:$port/v1" NANOHERMES_E2E_RECORD_URL="http://127.0.0.1:$record_port"
n=0
for t in ${TEMPS:-0 0.3 0.3}; do
  n=$((n + 1))
  dir="$out/round-$n-t$t"
  mkdir -p "$dir"
  NANOHERMES_E2E_TEMPERATURE=$t NANOHERMES_E2E_REPORT="$dir/report.txt" "$python" -m pytest -p no:cacheprovider -n 0 \
    tests/e2e/test_real_model.py -k test_real_model_completes_task -v -rxX --junitxml="$dir/junit.xml" "$@" \
    >"$dir/pytest.log" 2>&1 || true
  cp tests/recordings/*.json "$dir/"
  echo "round $n (temperature $t) done: $(grep -c ' PASSED\| XFAIL' "$dir/pytest.log" || true) passed" >&2
done
