#!/usr/bin/env bash
# Soak: a long headless run at moderate load against the reference endpoint with faults all
# along (model errors, resets mid-response, garbage bodies, throttles) and the server killed
# and restarted on the same port every few minutes. Checks afterwards: exit code 0, no panic
# in any log, the export whole and valid with ok + errors = sent in every phase, and the load
# generator's RSS flat (sampled every 10 s) past a warm-up minute: the end within 25 % of the
# RSS at 60 s. The first minute fills pools and histograms (14 -> 19 MiB with nothing lost),
# so the RSS check needs a run of at least 180 s and is skipped, saying so, on a shorter one.
#
#   scripts/soak.sh [SECONDS]          default 1800 (30 minutes)
#
# Environment: ENCBENCH_BIN (default: build and use target/release/encbench-tui), SOAK_RATE
# (req/s, default 100), SOAK_RESTART_EVERY (seconds between server kills, default 300),
# SOAK_DIR (where logs, rss.csv and soak.json go; default target/soak).
set -euo pipefail
cd "$(dirname "$0")/.."

secs=${1:-1800}
rate=${SOAK_RATE:-100}
every=${SOAK_RESTART_EVERY:-300}
dir=${SOAK_DIR:-target/soak}
if [[ -z "${ENCBENCH_BIN:-}" ]]; then
    cargo build --release --locked --bin encbench-tui
    ENCBENCH_BIN=target/release/encbench-tui
fi
bin=$ENCBENCH_BIN
mkdir -p "$dir"
rm -f "$dir"/serve-*.log "$dir"/load.log "$dir"/rss.csv "$dir"/soak.json

serve_pid=
start_serve() { # $1: port (0 picks one), $2: log index
    "$bin" serve --port "$1" --workers 8 --base-ms 5 --per-token-ms 0 \
        --error-rate 0.01 --reset-rate 0.005 --garbage-rate 0.005 --throttle-above 12 \
        --seed "$2" >"$dir/serve-$2.log" 2>&1 &
    serve_pid=$!
    for _ in $(seq 100); do
        grep -q listening "$dir/serve-$2.log" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "soak: the reference endpoint did not start" >&2
    exit 1
}
cleanup() { [[ -n "$serve_pid" ]] && kill "$serve_pid" 2>/dev/null || true; }
trap cleanup EXIT

start_serve 0 0
port=$(grep -o '127.0.0.1:[0-9]*' "$dir/serve-0.log" | cut -d: -f2)

"$bin" --headless --url "http://127.0.0.1:$port" --duration "$secs" --request-rate "$rate" \
    --concurrency 16 --timeout 2 --warmup 20 --seed 1 --export "$dir/soak.json" \
    >"$dir/load.out" 2>"$dir/load.log" &
load_pid=$!

echo "t_s,rss_kib" >"$dir/rss.csv"
start=$(date +%s)
restarts=0
next_kill=$((start + every))
while kill -0 "$load_pid" 2>/dev/null; do
    now=$(date +%s)
    rss=$(awk '/^VmRSS/ {print $2}' "/proc/$load_pid/status" 2>/dev/null || true)
    [[ -n "$rss" ]] && echo "$((now - start)),$rss" >>"$dir/rss.csv"
    if ((now >= next_kill && now - start < secs - 30)); then
        # The container dies: in-flight requests are cut, new ones refused, then it is back.
        kill -9 "$serve_pid"
        wait "$serve_pid" 2>/dev/null || true
        sleep 3
        restarts=$((restarts + 1))
        start_serve "$port" "$restarts"
        next_kill=$((now + every))
    fi
    sleep 10
done
set +e
wait "$load_pid"
code=$?
set -e

fail=0
echo "soak: ${secs}s at ${rate} req/s, ${restarts} server restarts, exit code ${code}"
((code == 0)) || fail=1
if grep -l panicked "$dir"/*.log; then
    echo "soak: PANIC in the logs above"
    fail=1
fi
python3 - "$dir/soak.json" "$dir/rss.csv" "$secs" <<'EOF' || fail=1
import csv, json, sys
e = json.load(open(sys.argv[1]))
for p in e["phases"]:
    errors = sum(p["errors"].values())
    print(f"phase {p['kind']}: sent {p['sent']} n {p['n']} ok {p['ok']} errors {p['errors']}")
    assert p["ok"] + errors == p["n"] == p["sent"], "requests lost"
rows = [(int(t), int(r)) for t, r in list(csv.reader(open(sys.argv[2])))[1:]]
secs, warm_up, shortest = int(sys.argv[3]), 60, 180
warm = [r for t, r in rows if t >= warm_up]
if secs < shortest:
    print(f"RSS check skipped: a {secs} s run is too short (it needs {shortest} s: "
          f"the first {warm_up} s are warm-up, then two minutes to compare)")
    sys.exit(0)
assert len(warm) >= 2, "RSS was not sampled past the warm-up minute"
first, last, peak = warm[0], warm[-1], max(warm)
print(f"RSS after 1 min {first / 1024:.1f} MiB, at the end {last / 1024:.1f} MiB, "
      f"peak {peak / 1024:.1f} MiB, growth {100 * (last - first) / first:+.1f} %")
assert last <= first * 1.25, "RSS grew"
EOF
((fail == 0)) && echo "soak: PASS" || echo "soak: FAIL"
exit "$fail"
