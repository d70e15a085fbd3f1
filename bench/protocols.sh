#!/usr/bin/env bash
# HTTP/JSON, HTTP/binary and gRPC against one server, side by side (BENCHMARKS.md, "HTTP or
# gRPC"): the reference endpoint (one process answering KServe v2 over HTTP and gRPC on one
# port, 1 ms a request) and real Triton (the peer's stand-in model, HTTP and gRPC ports of one
# tritonserver), batches of 1 and 8 padded to 512 tokens, closed loop at concurrency 1 and 16,
# open loop at a fixed rate, medians of 3. The reference endpoint alone took 5 minutes on 2
# cores (2026-12-05); Triton's cells are as many again and more (not timed).
#   bench/protocols.sh                  both servers
#   SERVERS=reference bench/protocols.sh    the reference endpoint alone
# Extra arguments go to bench/protocols.py (e.g. --reps 5, --pretokenize, --protocols gRPC
# HTTP/binary). tonic's gRPC client beside the hand-made one: commit 59a186b (BENCHMARKS.md,
# "gRPC: tonic against the hand-made client").
# Writes bench/out/protocols.{md,json}.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${BIN:-target/release/encbench-tui}
[[ -x "$BIN" ]] || cargo build --release --locked --bin encbench-tui
SERVERS=${SERVERS:-reference triton}
REF_PORT=${REF_PORT:-18700}
TRITON_PORT=${TRITON_PORT:-18710}

ref_pid=
stop() {
    [[ -n "$ref_pid" ]] && kill "$ref_pid" 2>/dev/null || true
    if [[ " $SERVERS " == *" triton "* ]]; then
        scripts/peers/triton.sh stop "$TRITON_PORT" >/dev/null 2>&1 || true
    fi
}
trap stop EXIT

servers=()
if [[ " $SERVERS " == *" reference "* ]]; then
    # Never the bottleneck: 64 workers of 1 ms each.
    "$BIN" serve --port "$REF_PORT" --base-ms 1 --per-token-ms 0 --workers 64 >/dev/null &
    ref_pid=$!
    for _ in $(seq 1 50); do
        curl -sf "http://127.0.0.1:$REF_PORT/ping" >/dev/null && break
        sleep 0.1
    done
    servers+=(--server "reference,http://127.0.0.1:$REF_PORT,grpc://127.0.0.1:$REF_PORT,encbench-reference")
fi
if [[ " $SERVERS " == *" triton "* ]]; then
    bash scripts/peers/install.sh triton
    # The stand-in model: what the server spends is its protocol and its batcher, not a model.
    MAX_BATCH=64 scripts/peers/triton.sh start "$TRITON_PORT"
    servers+=(--server "triton,http://127.0.0.1:$TRITON_PORT,grpc://127.0.0.1:$((TRITON_PORT + 1)),encoder")
fi

python3 bench/protocols.py --encbench "$BIN" "${servers[@]}" "$@"
