#!/usr/bin/env bash
# What a rerank run costs before its first request (BENCHMARKS.md, "Rerank preparation"):
# for each D, the time from starting the client to the first request's arrival at the
# reference endpoint (its --request-log, polled every millisecond) and the client's peak
# RSS (/usr/bin/time), of one or two binaries side by side, taking turns, RUNS times each.
#   bench/rerank_prep.sh "100 1000 2000 10000" RUNS BINARY [BINARY2]
set -euo pipefail
cd "$(dirname "$0")/.."
docs=${1:-"100 1000 2000 10000"}
runs=${2:-1}
shift 2 || true
bins=("${@:-target/release/encbench-tui}")
out=$(mktemp -d)
trap 'kill "$(cat "$out/serve.pid" 2>/dev/null)" 2>/dev/null || true; rm -rf "$out"' EXIT

# No service time: what is measured is the client's.
"${bins[0]}" serve --port 0 --base-ms 0 --per-token-ms 0 --request-log "$out/arrivals.jsonl" \
    >"$out/serve.txt" 2>&1 &
echo $! >"$out/serve.pid"
for _ in $(seq 100); do
    port=$(grep -o '127.0.0.1:[0-9]*' "$out/serve.txt" | head -1 || true)
    [[ -n "$port" ]] && break
    sleep 0.1
done

for _ in $(seq "$runs"); do
    for d in $docs; do
        for bin in "${bins[@]}"; do
            python3 - "$bin" "$d" "http://$port" "$out" <<'PY'
import os, subprocess, sys, time
bin, d, url, out = sys.argv[1:5]
log = os.path.join(out, "arrivals.jsonl")
open(log, "w").close()
t0 = time.monotonic()
p = subprocess.Popen(
    ["/usr/bin/time", "-f", "%M", bin, "--headless", "--url", url, "--task", "rerank",
     "--docs-per-query", d, "-n", "1", "--warmup", "0", "--no-accuracy"],
    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
first = None
while p.poll() is None:
    if first is None and os.path.getsize(log) > 0:
        first = time.monotonic() - t0
    time.sleep(0.001)
err = p.stderr.read()
if first is None and os.path.getsize(log) > 0:
    first = time.monotonic() - t0
rss_mb = int(err.strip().splitlines()[-1]) / 1024
name = os.path.basename(os.path.dirname(os.path.abspath(bin))) + "/" + os.path.basename(bin)
print(f"D {int(d):6d}  {name:32}  first request {first:8.3f} s  peak RSS {rss_mb:7.1f} MB"
      f"  exit {p.returncode}", flush=True)
PY
        done
    done
done
