# Shared settings for scripts/peers/*.sh (sourced, not run).
# ENCBENCH_PEERS_HOME: cache folder holding the venvs, logs, pid files and per-instance state.
# Default: <repo>/target/peers (target/ is git-ignored and survives between runs on the same machine).
PEERS_SCRIPTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ENCBENCH_PEERS_HOME=${ENCBENCH_PEERS_HOME:-$PEERS_SCRIPTS/../../target/peers}
mkdir -p "$ENCBENCH_PEERS_HOME"
ENCBENCH_PEERS_HOME=$(cd "$ENCBENCH_PEERS_HOME" && pwd)
export ENCBENCH_PEERS_HOME

log() { echo "[peers] $*" >&2; }
die() { echo "[peers] ERROR: $*" >&2; exit 1; }

# venv_python NAME -> path of that peer's venv python, or fail with a hint.
venv_python() {
  local py="$ENCBENCH_PEERS_HOME/venv-$1/bin/python"
  [ -x "$py" ] || die "peer '$1' is not installed in $ENCBENCH_PEERS_HOME (run scripts/peers/install.sh $1)"
  echo "$py"
}

check_port() {
  case "$1" in ''|*[!0-9]*) die "PORT must be a number, got '$1'";; esac
  if [ "$1" -lt 1 ] || [ "$1" -gt 65535 ]; then die "PORT out of range: $1"; fi
}

# pid_alive FILE -> true when FILE holds the pid of a running process
pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# port_in_use PORT -> true when something accepts TCP connections on 127.0.0.1:PORT
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
