#!/usr/bin/env bash
# Run moto_server (moto 5.2.5: a mock of AWS incl. the SageMaker runtime InvokeEndpoint API) on 127.0.0.1:PORT.
# Usage: scripts/peers/moto.sh start PORT [--auth]
#        scripts/peers/moto.sh stop PORT
# start: launches it in the background (pid: $ENCBENCH_PEERS_HOME/moto-PORT.pid, log: moto-PORT.log), waits until
#        it answers, prints one line "moto ready ..." on stdout.
#   --auth: turns on moto's IAM auth mode, in which SigV4 signatures ARE verified (without it moto accepts any
#        Authorization header and only reads the region/service from its credential scope). Creates an IAM user
#        with an allow-all policy and writes its key to $ENCBENCH_PEERS_HOME/moto-PORT-key.json as
#        {"AccessKeyId": ..., "SecretAccessKey": ...}.
#        Env MOTO_POLICY_ACTIONS (with --auth): the IAM actions the user is allowed, comma-separated (default "*"),
#        e.g. sagemaker:InvokeEndpoint for an identity that may invoke but not read CloudWatch.
# Behaviour to expect (moto 5.2.5): InvokeEndpoint answers 200 with body "body" for any endpoint name (no need to
# create it) unless replies were queued with POST /moto-api/static/sagemaker/endpoint-results; a request without
# a SigV4 Authorization header gets 500 (moto routes by the credential scope); no keep-alive.
set -euo pipefail
. "$(dirname "$0")/_common.sh"

usage() { echo "usage: $0 start PORT [--auth] | stop PORT" >&2; exit 2; }
[ $# -ge 2 ] || usage
cmd=$1 port=$2 auth=0
shift 2
for a in "$@"; do
  case $a in --auth) auth=1;; *) usage;; esac
done
check_port "$port"
pidf="$ENCBENCH_PEERS_HOME/moto-$port.pid"
logf="$ENCBENCH_PEERS_HOME/moto-$port.log"
keyf="$ENCBENCH_PEERS_HOME/moto-$port-key.json"

stop() {
  rm -f "$keyf"
  if ! pid_alive "$pidf"; then
    rm -f "$pidf"; log "moto on port $port is not running"; return 0
  fi
  local pid; pid=$(cat "$pidf")
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then log "moto pid $pid ignored TERM, sending KILL"; kill -KILL "$pid" 2>/dev/null || true; fi
  rm -f "$pidf"
  log "moto on port $port stopped (pid $pid)"
}

start() {
  local py; py=$(venv_python moto)
  local bin; bin="$(dirname "$py")/moto_server"
  if pid_alive "$pidf"; then die "moto already running on port $port (pid $(cat "$pidf")); run: $0 stop $port"; fi
  port_in_use "$port" && die "127.0.0.1:$port is already in use by another process"
  rm -f "$keyf"
  nohup "$bin" -H 127.0.0.1 -p "$port" >"$logf" 2>&1 </dev/null &
  echo $! >"$pidf"
  local pid; pid=$(cat "$pidf") ok=0
  for _ in $(seq 1 300); do   # up to ~30 s (it normally answers in ~1 s)
    if curl -s -o /dev/null -m 1 "http://127.0.0.1:$port/moto-api/"; then ok=1; break; fi
    kill -0 "$pid" 2>/dev/null || { tail -30 "$logf" >&2; rm -f "$pidf"; die "moto_server exited during startup (log: $logf)"; }
    sleep 0.1
  done
  [ $ok = 1 ] || { tail -30 "$logf" >&2; stop; die "moto_server did not answer on 127.0.0.1:$port within 30 s"; }
  if [ $auth = 1 ]; then
    if ! "$py" - "$port" "$keyf" <<'PY' >&2; then stop; die "enabling moto IAM auth mode failed"; fi
import json, os, sys
import boto3, botocore, requests
port, keyf = sys.argv[1], sys.argv[2]
url = f"http://127.0.0.1:{port}"
# GOTCHA: in auth mode moto also checks the IAM calls that create the key, so first allow exactly the 3 calls below
# without auth (reset-auth N = the next N AWS requests skip the check; after that every request is verified).
r = requests.post(url + "/moto-api/reset-auth", data=b"3", timeout=10)
r.raise_for_status()
iam = boto3.client("iam", endpoint_url=url, region_name="us-east-1",
                   aws_access_key_id="bootstrap", aws_secret_access_key="bootstrap")
iam.create_user(UserName="encbench")
k = iam.create_access_key(UserName="encbench")["AccessKey"]
actions = (os.environ.get("MOTO_POLICY_ACTIONS") or "*").split(",")
iam.put_user_policy(UserName="encbench", PolicyName="encbench", PolicyDocument=json.dumps(
    {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": actions, "Resource": "*"}]}))
key = {"AccessKeyId": k["AccessKeyId"], "SecretAccessKey": k["SecretAccessKey"]}
# Self-check: the new key must pass, a wrong secret must be refused (auth really on).
def invoke(secret):
    c = boto3.client("sagemaker-runtime", endpoint_url=url, region_name="us-east-1",
                     aws_access_key_id=key["AccessKeyId"], aws_secret_access_key=secret)
    return c.invoke_endpoint(EndpointName="encbench-moto-selfcheck", Body=b"{}", ContentType="application/json")
invoke(key["SecretAccessKey"])["Body"].read()
try:
    invoke("wrong-secret")
    sys.exit("auth self-check: a wrong secret was accepted, IAM auth mode is not on")
except botocore.exceptions.ClientError as e:
    # GOTCHA: moto answers 403 with an XML (query-protocol) <ErrorResponse> body, which the rest-json
    # sagemaker-runtime parser cannot read: boto3 reports Code "403" and the raw XML as Message.
    err = e.response["Error"]
    assert e.response["ResponseMetadata"]["HTTPStatusCode"] == 403 and "SignatureDoesNotMatch" in str(err), err
tmp = keyf + ".tmp"
with open(tmp, "w") as f:
    json.dump(key, f)
os.replace(tmp, keyf)
PY
  fi
  if [ $auth = 1 ]; then
    echo "moto ready on http://127.0.0.1:$port (pid $pid, IAM auth ON, key: $keyf, log: $logf)"
  else
    echo "moto ready on http://127.0.0.1:$port (pid $pid, auth off, log: $logf)"
  fi
}

case $cmd in
  start) start;;
  stop) stop;;
  *) usage;;
esac
