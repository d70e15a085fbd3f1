#!/usr/bin/env bash
# One command for the load-generator benchmark (see BENCHMARKS.md):
#   bench/run.sh              the full matrix, about 40 minutes on 2 cores
#   bench/run.sh --quick      a one-minute smoke: short runs, one repetition, small counts
# Extra arguments go to bench/bench.py (e.g. --sections throughput --reps 5).
# Builds release binaries, installs oha from crates.io into target/bench/oha (once, about
# 10 minutes), and writes bench/out/results.{md,json}.
set -euo pipefail
cd "$(dirname "$0")/.."

OHA_VERSION=1.16.0
OHA_ROOT=target/bench/oha
OHA="$OHA_ROOT/bin/oha"

quick=()
if [[ "${1:-}" == "--quick" ]]; then
    shift
    quick=(--reps 1 --duration 2 --tui-duration 2 --concurrency 1 16 --rates 500 2000 --openloop-duration 2
        --memory-marks 10000 50000 --frames-duration 8 --frames-window 3 --triton-rates 100
        --triton-pretokenized-rates 500 --triton-duration 2)
fi

cargo build --release --locked --bin encbench-tui --example bench_server

oha_args=()
if [[ "${NO_OHA:-}" != 1 ]]; then
    if [[ ! -x "$OHA" ]] || ! "$OHA" --version | grep -q "$OHA_VERSION"; then
        cargo install oha --version "$OHA_VERSION" --locked --root "$OHA_ROOT"
    fi
    oha_args=(--oha "$OHA")
fi

exec python3 bench/bench.py \
    --encbench target/release/encbench-tui \
    --server target/release/examples/bench_server \
    "${oha_args[@]}" "${quick[@]}" "$@"
