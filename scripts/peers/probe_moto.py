"""Probe a moto server started by scripts/peers/moto.sh and print what it answers (status, headers, body).
Usage: <venv-moto>/bin/python scripts/peers/probe_moto.py PORT [KEY_JSON]
  without KEY_JSON: auth-off checks (default reply, queued replies, unsigned request)
  with KEY_JSON (moto.sh start PORT --auth): good key, wrong secret, unknown key, bogus signature.
Exits non-zero when an expectation fails."""
import json, sys

import boto3, botocore, requests
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

port = sys.argv[1]
URL = f"http://127.0.0.1:{port}"
REGION = "us-east-1"
failures = []


def expect(cond, what):
    print(("  ok: " if cond else "  FAIL: ") + what)
    if not cond:
        failures.append(what)


def signed_raw(ak, sk, endpoint="ep", body=b'{"inputs":"hi"}'):
    """SigV4-sign an InvokeEndpoint request with botocore and send it with requests: full raw response."""
    url = f"{URL}/endpoints/{endpoint}/invocations"
    req = AWSRequest(method="POST", url=url, data=body, headers={"Content-Type": "application/json"})
    SigV4Auth(Credentials(ak, sk), "sagemaker", REGION).add_auth(req)
    return requests.post(url, data=body, headers=dict(req.headers.items()), timeout=10)


def show(title, r):
    print(f"== {title}: HTTP {r.status_code}")
    print("   headers:", dict(r.headers))
    print("   body:", r.content[:400])


def client(ak, sk):
    return boto3.client("sagemaker-runtime", endpoint_url=URL, region_name=REGION,
                        aws_access_key_id=ak, aws_secret_access_key=sk)


if len(sys.argv) < 3:
    c = client("test", "test")
    r = c.invoke_endpoint(EndpointName="never-created", Body=b'{"inputs":"hi"}', ContentType="application/json")
    body = r["Body"].read()
    print("== boto3 InvokeEndpoint (auth off, nothing queued):", r["ResponseMetadata"]["HTTPStatusCode"], body,
          r.get("ContentType"), r.get("InvokedProductionVariant"))
    print("   headers:", r["ResponseMetadata"]["HTTPHeaders"])
    expect(r["ResponseMetadata"]["HTTPStatusCode"] == 200 and body == b"body", 'default reply is 200 "body"')
    show("raw signed request (any key, auth off)", signed_raw("whatever", "whatever"))
    # GOTCHA: moto decodes every request body as UTF-8 -> a binary body gets 500 (UnicodeDecodeError in its log).
    show("raw signed request, non-UTF-8 body", signed_raw("whatever", "whatever", body=bytes(range(256))))
    q = requests.post(URL + "/moto-api/static/sagemaker/endpoint-results", timeout=10, json={"results": [
        {"Body": json.dumps([{"label": "entailment", "score": 0.9}]), "ContentType": "application/json",
         "InvokedProductionVariant": "AllTraffic", "CustomAttributes": "c=1"}]})
    print("== queue one reply:", q.status_code, q.text[:200])
    r = c.invoke_endpoint(EndpointName="queued", Body=b'{"inputs":"q1"}', ContentType="application/json")
    body = r["Body"].read()
    print("   next InvokeEndpoint ->", body, r.get("ContentType"), r.get("InvokedProductionVariant"), r.get("CustomAttributes"))
    expect(b"entailment" in body, "queued reply is returned")
    r = c.invoke_endpoint(EndpointName="queued", Body=b'{"inputs":"q1"}', ContentType="application/json")
    print("   same request again ->", r["Body"].read(), "(moto caches the reply per endpoint+body)")
    r = c.invoke_endpoint(EndpointName="queued", Body=b'{"inputs":"q2"}', ContentType="application/json")
    print("   new request after queue drained ->", r["Body"].read())
    r = requests.post(f"{URL}/endpoints/ep/invocations", data=b"{}", headers={"Content-Type": "application/json"}, timeout=10)
    show("unsigned request (no Authorization header)", r)
else:
    key = json.load(open(sys.argv[2]))
    ak, sk = key["AccessKeyId"], key["SecretAccessKey"]
    r = client(ak, sk).invoke_endpoint(EndpointName="ep", Body=b'{"inputs":"hi"}', ContentType="application/json")
    body = r["Body"].read()
    print("== boto3 InvokeEndpoint, good key (auth on):", r["ResponseMetadata"]["HTTPStatusCode"], body)
    print("   headers:", r["ResponseMetadata"]["HTTPHeaders"])
    expect(r["ResponseMetadata"]["HTTPStatusCode"] == 200, "good key accepted")
    show("raw signed request, good key, non-UTF-8 body", signed_raw(ak, sk, body=bytes(range(256))))
    try:
        client(ak, "wrong-secret").invoke_endpoint(EndpointName="ep", Body=b"{}", ContentType="application/json")
        expect(False, "wrong secret refused")
    except botocore.exceptions.ClientError as e:
        print("== boto3, wrong secret: ClientError", e.response["ResponseMetadata"]["HTTPStatusCode"], e.response["Error"])
    r = signed_raw(ak, "wrong-secret")
    show("raw signed request, wrong secret", r)
    expect(r.status_code == 403 and b"<Code>SignatureDoesNotMatch</Code>" in r.content, "wrong secret -> 403 SignatureDoesNotMatch")
    r = signed_raw("AKIAUNKNOWNUNKNOWN12", "x")
    show("raw signed request, unknown access key", r)
    expect(r.status_code == 403, "unknown key refused")
    r = requests.post(f"{URL}/endpoints/ep/invocations", data=b"{}", timeout=10, headers={
        "Content-Type": "application/json",
        "Authorization": f"AWS4-HMAC-SHA256 Credential={ak}/20240101/{REGION}/sagemaker/aws4_request, "
                         "SignedHeaders=host, Signature=deadbeef"})
    show("bogus signature, no X-Amz-Date", r)
    expect(r.status_code >= 400, "bogus signature refused")

print("moto probe:", "FAILED " + "; ".join(failures) if failures else "all expectations met")
sys.exit(1 if failures else 0)
