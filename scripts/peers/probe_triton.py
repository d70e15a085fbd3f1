"""Probe a triton peer started by scripts/peers/triton.sh and print what it answers (stdlib only, KServe v2 HTTP).
Usage: python3 scripts/peers/probe_triton.py PORT [SECTION ...]
Sections (default: all, in this order):
  meta     GET /v2, /v2/models/encoder (metadata), /v2/models/encoder/config
  json     POST /v2/models/encoder/infer, JSON tensors, input_ids/attention_mask [8,512] INT64
  binary   the same with the binary tensor extension (Inference-Header-Content-Length, raw little-endian data),
           binary output requested; plus binary inputs with a JSON output
  batching GET /v2/models/encoder/stats, 32 concurrent b=1 requests, stats again; shows the dynamic batcher merged
  ragged   16 concurrent b=1 requests with 4 different sequence lengths
  errors   a BYTES input, a missing input, batch > max_batch_size, mismatched shapes, an unknown model, bad JSON
Expects the default model (no TOKEN_TYPE_IDS). Exits non-zero when an expectation fails."""
import http.client, json, struct, sys, threading, time

port = int(sys.argv[1])
sections = sys.argv[2:] or ["meta", "json", "binary", "batching", "ragged", "errors"]
INFER = "/v2/models/encoder/infer"
failed = []


def check(cond, what):
    if not cond:
        failed.append(what)
        print("   !! FAILED:", what)


def request(method, path, body=None, headers=None, conn=None):
    c = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request(method, path, body=body, headers=headers or {})
    r = c.getresponse()
    data = r.read()
    if conn is None:
        c.close()
    return r.status, r.reason, r.getheaders(), data


def short(obj, n=6):
    """JSON with long lists cut to their first n items (and the count)."""
    if isinstance(obj, list):
        if len(obj) > n:
            return [short(x, n) for x in obj[:n]] + [f"... {len(obj)} items"]
        return [short(x, n) for x in obj]
    if isinstance(obj, dict):
        return {k: short(v, n) for k, v in obj.items()}
    return obj


def rows(batch, seq, base=1000):
    """Token ids and mask for `batch` rows of length `seq`: row i has ids base+i*10+j and seq-i real tokens."""
    ids, mask = [], []
    for i in range(batch):
        ids += [base + i * 10 + j for j in range(seq)]
        mask += [1 if j < seq - i else 0 for j in range(seq)]
    return ids, mask


def expected(ids, mask, batch, seq):
    out = []
    for i in range(batch):
        r_ids, r_mask = ids[i * seq:(i + 1) * seq], mask[i * seq:(i + 1) * seq]
        s = sum(r_mask)
        out.append((float(s), sum(a * m for a, m in zip(r_ids, r_mask)) / max(s, 1)))
    return out


def json_infer_body(ids, mask, batch, seq, extra=None):
    body = {"inputs": [{"name": "input_ids", "shape": [batch, seq], "datatype": "INT64", "data": ids},
                       {"name": "attention_mask", "shape": [batch, seq], "datatype": "INT64", "data": mask}]}
    body.update(extra or {})
    return json.dumps(body).encode()


def meta():
    for path in ("/v2", "/v2/health/ready", "/v2/models/encoder", "/v2/models/encoder/ready", "/v2/models/encoder/config"):
        st, reason, hdrs, data = request("GET", path)
        print(f"== GET {path}: HTTP {st} {reason}  headers {hdrs}")
        print("  ", data.decode() or "(empty body)")
        check(st == 200, f"GET {path} -> 200")
    cfg = json.loads(request("GET", "/v2/models/encoder/config")[3])
    print("   config digest:", {"inputs": [(i["name"], i["data_type"], i["dims"], i["optional"]) for i in cfg["input"]],
                                 "outputs": [(o["name"], o["data_type"], o["dims"]) for o in cfg["output"]],
                                 "max_batch_size": cfg["max_batch_size"], "dynamic_batching": cfg.get("dynamic_batching")})
    check([i["data_type"] for i in cfg["input"]] == ["TYPE_INT64", "TYPE_INT64"], "config input data_type TYPE_INT64")


def json_mode():
    b, s = 8, 512
    ids, mask = rows(b, s)
    body = json_infer_body(ids, mask, b, s)
    t = time.perf_counter()
    st, reason, hdrs, data = request("POST", INFER, body, {"Content-Type": "application/json"})
    ms = (time.perf_counter() - t) * 1000
    print(f"== JSON infer [8,512]: request {len(body)} bytes -> HTTP {st} {reason} in {ms:.1f} ms, headers {hdrs}")
    print("   body:", data.decode())
    check(st == 200, "JSON infer -> 200")
    resp = json.loads(data)
    out = resp["outputs"][0]
    check(out["name"] == "logits" and out["datatype"] == "FP32" and out["shape"] == [b, 3], "outputs[0] logits FP32 [8,3]")
    check(len(out["data"]) == b * 3, "data is a flat row-major list of 24 numbers")
    for i, (s_, mean) in enumerate(expected(ids, mask, b, s)):
        got = out["data"][i * 3:i * 3 + 3]
        check(abs(got[0] - s_) < 1e-3 and abs(got[1] - mean) < 1e-2 * max(1, mean) and got[2] >= b, f"row {i} values {got}")


def binary_mode():
    b, s = 8, 512
    ids, mask = rows(b, s)
    raw_ids, raw_mask = struct.pack(f"<{b * s}q", *ids), struct.pack(f"<{b * s}q", *mask)
    hdr = json.dumps({"inputs": [
        {"name": "input_ids", "shape": [b, s], "datatype": "INT64", "parameters": {"binary_data_size": len(raw_ids)}},
        {"name": "attention_mask", "shape": [b, s], "datatype": "INT64", "parameters": {"binary_data_size": len(raw_mask)}}],
        "outputs": [{"name": "logits", "parameters": {"binary_data": True}}]}).encode()
    body = hdr + raw_ids + raw_mask
    st, reason, hdrs, data = request("POST", INFER, body, {"Inference-Header-Content-Length": str(len(hdr)),
                                                            "Content-Type": "application/octet-stream"})
    print(f"== binary infer [8,512], binary output: request JSON header {len(hdr)} bytes + {len(raw_ids) + len(raw_mask)} "
          f"bytes raw -> HTTP {st} {reason}, {len(data)} bytes, headers {hdrs}")
    check(st == 200, "binary infer -> 200")
    hl = int(dict((k.lower(), v) for k, v in hdrs).get("inference-header-content-length", -1))
    check(hl > 0, "response has Inference-Header-Content-Length")
    print(f"   JSON part ({hl} bytes): {data[:hl].decode()}")
    tail = data[hl:]
    vals = struct.unpack(f"<{len(tail) // 4}f", tail)
    print(f"   binary part: {len(tail)} bytes = {len(vals)} little-endian FP32, rows: "
          f"{[list(vals[i:i + 3]) for i in range(0, len(vals), 3)]}")
    check(len(tail) == b * 3 * 4, "binary part is 8*3*4 = 96 bytes")
    j = json.loads(data[:hl])
    check(j["outputs"][0]["parameters"]["binary_data_size"] == len(tail), "outputs[0].parameters.binary_data_size")
    for i, (s_, mean) in enumerate(expected(ids, mask, b, s)):
        check(abs(vals[i * 3] - s_) < 1e-3 and abs(vals[i * 3 + 1] - mean) < 1e-2 * max(1, mean), f"binary row {i}")

    # binary inputs, no "outputs" asked for: the output comes back as JSON
    hdr2 = json.dumps({"inputs": json.loads(hdr)["inputs"]}).encode()
    st, reason, hdrs, data = request("POST", INFER, hdr2 + raw_ids + raw_mask,
                                     {"Inference-Header-Content-Length": str(len(hdr2))})
    print(f"== binary inputs, no outputs requested: HTTP {st} {reason}, headers {hdrs}")
    print("   body:", data.decode(errors="replace"))
    check(st == 200 and json.loads(data)["outputs"][0]["data"][:1] == [float(s)], "binary in, JSON out")

    # JSON inputs + top-level "binary_data_output": true
    body = json_infer_body(ids, mask, b, s, {"parameters": {"binary_data_output": True}})
    st, reason, hdrs, data = request("POST", INFER, body, {"Content-Type": "application/json"})
    hl = int(dict((k.lower(), v) for k, v in hdrs).get("inference-header-content-length", -1))
    print(f"== JSON inputs + parameters.binary_data_output=true: HTTP {st} {reason}, headers {hdrs}")
    print(f"   JSON part: {data[:hl].decode() if hl > 0 else data.decode()}, binary part {len(data) - max(hl, 0)} bytes")


def stats():
    st, _, _, data = request("GET", "/v2/models/encoder/stats")
    check(st == 200, "GET stats -> 200")
    return json.loads(data)


def digest(s):
    m = s["model_stats"][0]
    d = {k: m[k] for k in ("name", "version", "last_inference", "inference_count", "execution_count")}
    d["inference_stats"] = {k: (v["count"], v["ns"]) for k, v in m["inference_stats"].items()}
    d["batch_stats"] = [(x["batch_size"], x["compute_infer"]["count"]) for x in m["batch_stats"]]
    return d


def concurrent(n, make_body):
    res = [None] * n
    barrier = threading.Barrier(n)

    def one(i):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        c.connect()
        barrier.wait()
        res[i] = request("POST", INFER, make_body(i), {"Content-Type": "application/json"}, conn=c)
        c.close()

    th = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    [t.start() for t in th]
    [t.join() for t in th]
    return res


def batching():
    before = stats()
    print("== GET /v2/models/encoder/stats before:", json.dumps(before))
    print("   digest:", digest(before))
    res = concurrent(32, lambda i: json_infer_body([101, 1000 + i, 1000 + i, 102], [1, 1, 1, 1], 1, 4))
    check(all(r[0] == 200 for r in res), "32 concurrent b=1 -> 200")
    sizes = [json.loads(r[3])["outputs"][0]["data"][2] for r in res]
    print("== 32 concurrent b=1 requests: server-side batch size seen by each (logits[0][2]):", sorted(sizes))
    after = stats()
    print("== GET /v2/models/encoder/stats after:", json.dumps(after))
    a, b = digest(after), digest(before)
    print("   digest:", a)
    di = a["inference_count"] - b["inference_count"]
    de = a["execution_count"] - b["execution_count"]
    print(f"   delta: inference_count +{di}, execution_count +{de}")
    check(di == 32, "inference_count grew by 32")
    check(de < di and max(sizes) > 1, "dynamic batching merged requests (execution_count < inference_count)")


def ragged():
    lens = [16, 32, 64, 128]
    res = concurrent(16, lambda i: json_infer_body(*rows(1, lens[i % 4], 2000 + i), 1, lens[i % 4]))
    for i, r in enumerate(res):
        out = json.loads(r[3]) if r[0] == 200 else r[3].decode()
        print(f"   seq {lens[i % 4]}: HTTP {r[0]} {out['outputs'][0]['data'] if r[0] == 200 else out}")
    check(all(r[0] == 200 for r in res), "ragged concurrent requests -> 200")
    print("== 16 concurrent b=1 with seq 16/32/64/128: batch sizes", sorted(json.loads(r[3])["outputs"][0]["data"][2]
                                                                         for r in res if r[0] == 200))


def errors():
    cases = [
        ("BYTES input_ids", {"inputs": [{"name": "input_ids", "shape": [1, 1], "datatype": "BYTES", "data": ["hello world"]},
                                        {"name": "attention_mask", "shape": [1, 1], "datatype": "INT64", "data": [1]}]}),
        ("BYTES extra 'text' input", {"inputs": [{"name": "text", "shape": [1, 1], "datatype": "BYTES", "data": ["hello"]}]}),
        ("missing attention_mask", {"inputs": [{"name": "input_ids", "shape": [1, 2], "datatype": "INT64", "data": [1, 2]}]}),
        ("INT32 instead of INT64", {"inputs": [{"name": "input_ids", "shape": [1, 2], "datatype": "INT32", "data": [1, 2]},
                                               {"name": "attention_mask", "shape": [1, 2], "datatype": "INT32", "data": [1, 1]}]}),
        ("batch 65 > max_batch_size 64", json.loads(json_infer_body(*rows(65, 2), 65, 2))),
        ("shape [2,4] but 6 values", {"inputs": [{"name": "input_ids", "shape": [2, 4], "datatype": "INT64", "data": [1] * 6},
                                                 {"name": "attention_mask", "shape": [2, 4], "datatype": "INT64", "data": [1] * 6}]}),
        ("input_ids [1,4] vs attention_mask [1,3] (model raises)",
         {"inputs": [{"name": "input_ids", "shape": [1, 4], "datatype": "INT64", "data": [1] * 4},
                     {"name": "attention_mask", "shape": [1, 3], "datatype": "INT64", "data": [1] * 3}]}),
    ]
    for title, body in cases:
        st, reason, hdrs, data = request("POST", INFER, json.dumps(body).encode(), {"Content-Type": "application/json"})
        print(f"== {title}: HTTP {st} {reason}, headers {hdrs}\n   body: {data.decode(errors='replace')}")
        check(st >= 400, f"{title} -> error status")
    for title, path, body in [("unknown model", "/v2/models/nope/infer", json_infer_body([1], [1], 1, 1)),
                              ("bad JSON", INFER, b"{not json")]:
        st, reason, hdrs, data = request("POST", path, body, {"Content-Type": "application/json"})
        print(f"== {title}: HTTP {st} {reason}, headers {hdrs}\n   body: {data.decode(errors='replace')}")
        check(st >= 400, f"{title} -> error status")
    st, _, _, data = request("GET", "/v2/models/encoder/ready")
    check(st == 200, "model still ready after the errors")


for sec in sections:
    {"meta": meta, "json": json_mode, "binary": binary_mode, "batching": batching, "ragged": ragged,
     "errors": errors}[sec]()
print("FAILED:" if failed else "all checks passed", *failed, sep="\n  " if failed else "")
sys.exit(1 if failed else 0)
