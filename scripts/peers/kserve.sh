#!/usr/bin/env bash
# Run KServe's own Python ModelServer (PyPI kserve 0.21.0) serving the real all-MiniLM-L6-v2 (int8 ONNX on
# onnxruntime) through scripts/peers/kserve_minilm.py, a kserve.Model that declares no tensors: KServe v2 REST on
# 127.0.0.1:PORT (`/v2/models/MODEL_NAME/{ready,infer}`, metadata with empty inputs/outputs, no Triton /config), the
# output named "sentence_embedding" [batch, 384] FP32, mean-pooled and L2-normalised; the v2 gRPC service on
# 127.0.0.1:PORT+1 (as Triton's peer).
# Usage: scripts/peers/kserve.sh start PORT    prints one line "kserve ready on http://127.0.0.1:PORT ..." once
#                                              GET /v2/models/MODEL_NAME/ready answers 200 and PORT+1 accepts
#        scripts/peers/kserve.sh stop PORT
# Env (start): MODEL_NAME (minilm), ORT_THREADS (1), STARTUP_TIMEOUT_S (60)
# Files: $ENCBENCH_PEERS_HOME/kserve-PORT.pid (the python process, leader of its own process group), kserve-PORT.log
set -euo pipefail
. "$(dirname "$0")/_common.sh"

usage() { echo "usage: $0 start PORT | stop PORT" >&2; exit 2; }
[ $# -eq 2 ] || usage
cmd=$1 port=$2
check_port "$port"
[ "$port" -le 65534 ] || die "PORT must be <= 65534 (gRPC uses PORT+1)"
grpc_port=$((port + 1))
pidf="$ENCBENCH_PEERS_HOME/kserve-$port.pid"
logf="$ENCBENCH_PEERS_HOME/kserve-$port.log"
URL="http://127.0.0.1:$port"

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

stop() {
  if ! pid_alive "$pidf"; then
    rm -f "$pidf"; log "kserve on port $port is not running"; return 0
  fi
  local pid t0; pid=$(cat "$pidf") t0=$(now_ms)
  # TERM: uvicorn's graceful stop; the whole group (setsid at start) in case KServe left a child behind.
  kill -TERM -- "-$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    log "kserve pid $pid still alive 10 s after TERM: KILL its process group"
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  for _ in $(seq 1 50); do port_in_use "$port" || break; sleep 0.1; done
  rm -f "$pidf"
  log "kserve on port $port stopped (pid $pid, $(( $(now_ms) - t0 )) ms)"
}

start() {
  local py; py=$(venv_python kserve)
  if pid_alive "$pidf"; then die "kserve already running on port $port (pid $(cat "$pidf")); run: $0 stop $port"; fi
  port_in_use "$port" && die "127.0.0.1:$port is already in use by another process"
  port_in_use "$grpc_port" && die "127.0.0.1:$grpc_port (gRPC) is already in use by another process"
  local model=${MODEL_NAME:-minilm} timeout_s=${STARTUP_TIMEOUT_S:-60}
  # GOTCHA (as for the other peers): install.sh does not byte-compile; without this no start would write .pyc files.
  unset PYTHONDONTWRITEBYTECODE
  export MODEL_NAME="$model" ORT_THREADS="${ORT_THREADS:-1}" PYTHONUNBUFFERED=1
  setsid nohup "$py" "$PEERS_SCRIPTS/kserve_minilm.py" --http_port "$port" --grpc_port "$grpc_port" >"$logf" 2>&1 </dev/null &
  local pid=$! t0 code
  echo "$pid" >"$pidf"
  t0=$(now_ms)
  while :; do
    kill -0 "$pid" 2>/dev/null || { tail -30 "$logf" >&2; rm -f "$pidf"; die "kserve_minilm.py exited during startup (log: $logf)"; }
    if [ $(( $(now_ms) - t0 )) -ge $((timeout_s * 1000)) ]; then
      tail -30 "$logf" >&2; stop; die "kserve model '$model' not ready within ${timeout_s}s (log: $logf)"
    fi
    code=$(curl -s -o /dev/null -m 2 -w '%{http_code}' "$URL/v2/models/$model/ready" || true)
    [ "$code" = 200 ] && port_in_use "$grpc_port" && break
    sleep 0.2
  done
  echo "kserve ready on $URL (grpc 127.0.0.1:$grpc_port, model $model, pid $pid, ORT_THREADS=$ORT_THREADS; ready after $(( $(now_ms) - t0 )) ms; log: $logf)"
}

case $cmd in
  start) start;;
  stop) stop;;
  *) usage;;
esac
