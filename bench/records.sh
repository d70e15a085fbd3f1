#!/usr/bin/env bash
# What --records costs (BENCHMARKS.md, "Per-request records"): N requests (default one
# million), closed loop at concurrency 16, against `encbench-tui serve` with zero service
# time, without and with --records, RUNS times each (default 2), taking turns. One line per
# run: peak RSS (/usr/bin/time -v), client CPU (user + sys) per request, wall time, req/s,
# the records' lines and size.
#   bench/records.sh [N] [RUNS] [BINARY]      (BINARY: target/release/encbench-tui)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000000}
runs=${2:-2}
bin=${3:-target/release/encbench-tui}
out=$(mktemp -d)
trap 'kill "$(cat "$out/serve.pid" 2>/dev/null)" 2>/dev/null || true; rm -rf "$out"' EXIT

"$bin" serve --port 0 --base-ms 0 --per-token-ms 0 --workers 16 >"$out/serve.txt" 2>&1 &
echo $! >"$out/serve.pid"
for _ in $(seq 100); do
    port=$(grep -o '127.0.0.1:[0-9]*' "$out/serve.txt" | head -1 || true)
    [[ -n "$port" ]] && break
    sleep 0.1
done
url="http://$port"

one() { # label, extra args...
    local label=$1
    shift
    /usr/bin/time -v "$bin" --headless --url "$url" -n "$n" --concurrency 16 --no-accuracy \
        --export "$out/export.json" "$@" >/dev/null 2>"$out/time.txt"
    python3 - "$label" "$n" "$out" <<'PY'
import json, os, re, sys
label, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
t = open(os.path.join(out, "time.txt")).read()
def field(name):
    return float(re.search(re.escape(name) + r":\s*([0-9.:]+)", t).group(1).split(":")[-1])
rss_mb = field("Maximum resident set size (kbytes)") / 1024
cpu_s = field("User time (seconds)") + field("System time (seconds)")
p = json.load(open(os.path.join(out, "export.json")))["phases"][0]
rec = os.path.join(out, "records.jsonl")
lines = sum(1 for _ in open(rec)) if os.path.exists(rec) else 0
size = os.path.getsize(rec) / 1e6 if os.path.exists(rec) else 0
print(f"{label:8} rss {rss_mb:6.1f} MB  cpu {cpu_s / n * 1e6:5.1f} us/req  "
      f"req/s {p['req_per_s']:8.0f}  p50 {p['latency_ms']['p50']:.3f} ms  "
      f"p99 {p['latency_ms']['p99']:.3f} ms  lines {lines}  {size:.0f} MB")
PY
    rm -f "$out/records.jsonl"
}

for _ in $(seq "$runs"); do
    one without
    one records --records "$out/records.jsonl"
done
