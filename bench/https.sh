#!/usr/bin/env bash
# HTTPS against HTTP, both through the h1 pool, against one reference endpoint (BENCHMARKS.md,
# "HTTPS through the pool"): a Python relay (bench/https.py relay) fronts the endpoint twice,
# plain and TLS (a throwaway CA made here with openssl, trusted through SSL_CERT_FILE; ALPN
# http/1.1 only), so TLS is the only difference. With BEFORE=path/to/older/encbench-tui, that
# binary's https:// too (reqwest's, before HTTPS moved into the pool). KServe v2 binary,
# batch 1 padded to 512, --pretokenize; closed loop c=1 (2,000 requests) and c=16 (6,000);
# variants rotating, medians of REPS (3). About 2 minutes. Writes bench/out/https.{md,json}.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/release/encbench-tui}
[[ -x "$BIN" ]] || cargo build --release --locked --bin encbench-tui
PORT=${PORT:-18720}
REPS=${REPS:-3}
dir=$(mktemp -d)
pids=()
stop() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$dir"; }
trap stop EXIT

openssl req -x509 -newkey rsa:2048 -nodes -keyout "$dir/ca.key" -out "$dir/ca.pem" -days 1 \
    -subj "/CN=encbench bench CA" -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout "$dir/key.pem" -out "$dir/leaf.csr" \
    -subj "/CN=localhost" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >"$dir/ext"
openssl x509 -req -in "$dir/leaf.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial \
    -out "$dir/cert.pem" -days 1 -extfile "$dir/ext" 2>/dev/null

"$BIN" serve --port "$PORT" --base-ms 1 --per-token-ms 0 --workers 64 >/dev/null &
pids+=($!)
python3 bench/https.py relay "$PORT" $((PORT + 1)) $((PORT + 2)) "$dir" &
pids+=($!)
for _ in $(seq 1 50); do
    curl -sf --cacert "$dir/ca.pem" "https://127.0.0.1:$((PORT + 2))/ping" >/dev/null && break
    sleep 0.1
done
SSL_CERT_FILE="$dir/ca.pem" python3 bench/https.py run "$BIN" $((PORT + 1)) $((PORT + 2)) "$REPS"
