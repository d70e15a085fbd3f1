#!/usr/bin/env bash
# The capacity search side by side (BENCHMARKS.md, "Capacity search: interpolation against
# bisection"): the known-answer endpoints of tests/it/capacity.rs and the demo, each searched
# by every binary given, RUNS times, alternating. Prints one line per search: probes, wall
# seconds, the answer, theory's, the interval.
#   bench/capacity.sh RUNS BINARY...
# e.g. bench/capacity.sh 3 target/bisection-1746b66/encbench-tui target/debug/encbench-tui
# SETUPS="mm4 demo" runs only those (default: mm1 mm4 demo); each export is kept in
# bench/out/capacity/. The last binary plays the reference endpoint.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=$1
shift
serve_bin=${!#}
out=$(mktemp -d)
keep=bench/out/capacity
mkdir -p "$keep"
trap 'kill "$(cat "$out/serve.pid" 2>/dev/null)" 2>/dev/null || true; rm -rf "$out"' EXIT

# theory's answers (tests/it/capacity.rs): M/M/1 64 × (100 − ln 100 / 0.1), M/M/4 12 × 350.09
mm1=(--slo p99=100ms --concurrency 256 --warmup 400 --min-probe-requests 30000
    --max-probe-secs 10 --capacity-precision 3%)
mm4=(--slo p99=100ms --concurrency 512 --warmup 600 --min-probe-requests 30000
    --max-probe-secs 13333ms --capacity-precision 3%)
demo=(--slo p99=250ms --concurrency 8 --pad-to-max --instance-type ml.g6.12xlarge)

serve() { # args → the URL of a fresh reference endpoint
    "$serve_bin" serve --port 0 --base-ms 10 --per-token-ms 0 --service-dist exp "$@" \
        >"$out/serve.txt" 2>&1 &
    echo $! >"$out/serve.pid"
    for _ in $(seq 100); do
        port=$(grep -o '127.0.0.1:[0-9]*' "$out/serve.txt" | head -1 || true)
        [[ -n "$port" ]] && break
        sleep 0.1
    done
    echo "http://$port"
}

search() { # name theory binary args...
    local name=$1 theory=$2 bin=$3
    shift 3
    local t0 t1
    t0=$(date +%s.%N)
    "$bin" --headless --no-accuracy --find-capacity -o "$out/e.json" "$@" >/dev/null 2>"$out/err.txt"
    t1=$(date +%s.%N)
    cp "$out/e.json" "$keep/$name-$(basename "$bin")-$t0.json"
    python3 - "$name" "$theory" "$bin" "$t0" "$t1" "$out/e.json" <<'EOF'
import json, sys
name, theory, binary, t0, t1, path = sys.argv[1:]
c = json.load(open(path))["capacity"][0]
got, theory = c["max_rate_per_s"], float(theory)
ci = c.get("max_rate_ci95_per_s")
err = f"{(got / theory - 1) * 100:+.1f} %" if theory > 0 else "-"
print(f"{name:<6} {binary:<40} probes {len(c['probes'])} wall {float(t1) - float(t0):5.1f} s "
      f"answer {got:.1f} theory {theory:.1f} ({err}) interval {ci}")
EOF
}

for setup in ${SETUPS:-mm1 mm4 demo}; do
    case $setup in
    mm1)
        url=$(serve --workers 1 --queue per-worker --replicas 64)
        for _ in $(seq "$runs"); do
            for bin in "$@"; do search mm1 3452.7 "$bin" --url "$url" "${mm1[@]}"; done
        done
        kill "$(cat "$out/serve.pid")"
        ;;
    mm4)
        url=$(serve --workers 4 --queue shared --replicas 12)
        for _ in $(seq "$runs"); do
            for bin in "$@"; do search mm4 4201.1 "$bin" --url "$url" "${mm4[@]}"; done
        done
        kill "$(cat "$out/serve.pid")"
        ;;
    demo)
        for _ in $(seq "$runs"); do
            for bin in "$@"; do search demo 0 "$bin" --demo "${demo[@]}"; done
        done
        ;;
    esac
done
