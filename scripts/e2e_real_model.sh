#!/usr/bin/env bash
# End-to-end tests against a real local model: starts llama.cpp's server with Qwen2.5-Coder-1.5B
# (../shared/local-llm/serve.sh; its first run builds the server, ~6 min), waits for /health,
# runs `pytest tests/e2e` against it, stops the server and exits with pytest's exit code.
#
#   PORT=8091 CTX=8192       where the server listens and its context size (tokens)
#   LOCAL_LLM=DIR            the local-llm kit (default: ../shared/local-llm beside this repo)
#   RECORD=1                 also re-record every task into tests/recordings/ (for tests/test_replay.py)
#   extra arguments go to pytest, e.g. scripts/e2e_real_model.sh -k fix_bug
# The tasks run one at a time (-n 0): the server has one slot, and its prompt cache is measured.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
local_llm=${LOCAL_LLM:-$repo/../shared/local-llm}
port=${PORT:-8091}
record_port=${RECORD_PORT:-$((port + 2))}
python=${PYTHON:-$repo/.venv/bin/python}
log=$(mktemp -t nanohermes-llama.XXXXXX)

healthy() {
  "$python" - "$1" <<'EOF'
import sys, urllib.request
try:
    with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/health", timeout=2) as r:
        sys.exit(0 if b"ok" in r.read() else 1)
except Exception:
    sys.exit(1)
EOF
}

if healthy "$port"; then
  echo "e2e: something already serves 127.0.0.1:$port; stop it or pick another PORT=" >&2
  exit 2
fi

server="" proxy=""
cleanup() {
  [ -n "$proxy" ] && kill "$proxy" 2>/dev/null || true
  [ -n "$server" ] && kill -- "-$server" 2>/dev/null || true  # the whole group: setup.sh and the server
  wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

echo "e2e: starting the model server on 127.0.0.1:$port (CTX=${CTX:-8192}); log in $log" >&2
PORT=$port CTX=${CTX:-8192} setsid "$local_llm/serve.sh" >"$log" 2>&1 &
server=$!
waited=0
until healthy "$port"; do
  if ! kill -0 "$server" 2>/dev/null; then
    echo "e2e: the server exited before it was ready; last lines of $log:" >&2
    tail -20 "$log" >&2
    exit 1
  fi
  if [ "$waited" -ge 1800 ]; then  # a first run builds llama.cpp and assembles the model
    echo "e2e: the server was not ready after ${waited}s; see $log" >&2
    exit 1
  fi
  sleep 2
  waited=$((waited + 2))
done
echo "e2e: server ready after ${waited}s" >&2

export NANOHERMES_E2E_BASE_URL="http://127.0.0.1:$port/v1"
if [ "${RECORD:-0}" = 1 ]; then
  "$python" scripts/record_real_model.py --upstream "http://127.0.0.1:$port" --port "$record_port" >&2 &
  proxy=$!
  export NANOHERMES_E2E_RECORD_URL="http://127.0.0.1:$record_port"
  sleep 1
fi

status=0
"$python" -m pytest -n 0 tests/e2e -v -rxX "$@" || status=$?
exit "$status"
