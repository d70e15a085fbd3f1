#!/usr/bin/env python3
"""Check the real all-MiniLM-L6-v2 peers: `MODEL=minilm triton.sh start TPORT` and/or `MODEL=minilm smhf.sh start HPORT`.
Run with the venv-smhf python (it needs `tokenizers` to build the Triton request; the rest is stdlib):
  target/peers/venv-smhf/bin/python scripts/peers/probe_minilm.py [--triton TPORT] [--smhf HPORT] [--token TOKEN]
For each peer given: embeds three sentences, checks shape [3, 384], unit norm, and that cosine(1st, 2nd) > cosine(1st,
3rd); Triton: also its /config, and that /stats answers 200 (or, with --token = the server's TRITON_ACCESS_TOKEN, 403
without the header and 200 with it). With both: checks that the two peers' vectors of each sentence (natural length,
batch 1) agree with cosine >= 0.999. Prints timings of b=1 and b=8 requests (curl-like, wall clock). Exit 1 on a failure.
Tokenizer: env MINILM_TOKENIZER, default <repo>/assets/tokenizer.json (its built-in 128 truncation/padding is turned off).
"""
import argparse
import json
import math
import os
import sys
import time
import urllib.error
import urllib.request

SENTENCES = ["A man is playing a guitar.", "Someone plays an instrument.", "The stock market fell today."]
FAILED = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        FAILED.append(what)


def http(method, url, body=None, headers=None):
    req = urllib.request.Request(url, data=None if body is None else json.dumps(body).encode(), method=method,
                                 headers={"Content-Type": "application/json", **(headers or {})})
    t0 = time.perf_counter()
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            data = r.read()
            code = r.status
    except urllib.error.HTTPError as e:
        data, code = e.read(), e.code
    return code, data, (time.perf_counter() - t0) * 1000


def cos(a, b):
    return sum(x * y for x, y in zip(a, b)) / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def tokenizer():
    from tokenizers import Tokenizer
    path = os.environ.get("MINILM_TOKENIZER") or os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                              "..", "..", "assets", "tokenizer.json")
    tok = Tokenizer.from_file(path)
    tok.no_truncation()
    tok.no_padding()
    return tok


def v2_body(encs, pad_to=None):
    n = pad_to or max(len(e.ids) for e in encs)
    def rows(attr):
        out = []
        for e in encs:
            v = list(getattr(e, attr))
            out += v + [0] * (n - len(v))
        return out
    return {"inputs": [{"name": name, "datatype": "INT64", "shape": [len(encs), n], "data": rows(attr)}
                       for name, attr in (("input_ids", "ids"), ("attention_mask", "attention_mask"),
                                          ("token_type_ids", "type_ids"))]}


def triton(port, token, tok):
    base = f"http://127.0.0.1:{port}/v2/models/minilm"
    code, data, _ = http("GET", base + "/config")
    cfg = json.loads(data)
    print(f"config: max_batch_size={cfg.get('max_batch_size')} input="
          f"{[(i['name'], i['data_type'], i['dims']) for i in cfg.get('input', [])]} output="
          f"{[(o['name'], o['data_type'], o['dims']) for o in cfg.get('output', [])]} dynamic_batching="
          f"{cfg.get('dynamic_batching', {}).get('max_queue_delay_microseconds')} us")
    check(code == 200, "triton GET /config 200")
    out_name = cfg["output"][0]["name"]
    vecs = []
    for s in SENTENCES:                       # batch 1, natural length
        code, data, ms = http("POST", base + "/infer", v2_body([tok.encode(s)]))
        check(code == 200, f"triton infer b=1 ({ms:.1f} ms)")
        o = json.loads(data)["outputs"][0]
        if out_name == "last_hidden_state":
            n, d = o["shape"][1], o["shape"][2]
            rows = [o["data"][i * d:(i + 1) * d] for i in range(n)]
            v = [sum(r[j] for r in rows) / n for j in range(d)]
            nrm = math.sqrt(sum(x * x for x in v)); v = [x / nrm for x in v]
            print(f"     last_hidden_state shape {o['shape']} (mean-pooled here)")
        else:
            check(o["name"] == "embedding" and o["shape"] == [1, 384] and o["datatype"] == "FP32",
                  f"triton output {o['name']} {o['datatype']} {o['shape']}")
            v = o["data"]
        vecs.append(v)
    if out_name == "embedding":
        check(all(abs(math.sqrt(sum(x * x for x in v)) - 1) < 1e-4 for v in vecs), "triton vectors have norm 1")
    encs = [tok.encode(SENTENCES[i % 3]) for i in range(8)]
    for _ in range(2):
        code, data, ms = http("POST", base + "/infer", v2_body(encs[:1], 128))
    print(f"     b=1 seq=128: {ms:.1f} ms")
    code, data, ms = http("POST", base + "/infer", v2_body(encs, 128))
    check(code == 200, f"triton infer b=8 seq=128 ({ms:.1f} ms)")
    code, data, ms = http("POST", base + "/infer", v2_body(encs))
    check(code == 200, f"triton infer b=8 natural length ({ms:.1f} ms)")
    if token:
        code, data, _ = http("GET", base + "/stats")
        check(code == 403, f"triton /stats without header -> {code} {data[:90]!r}")
        code, data, _ = http("GET", base + "/stats", headers={"triton-access-token": token})
        check(code == 200, f"triton /stats with header -> {code}")
    else:
        code, data, _ = http("GET", base + "/stats")
        check(code == 200, f"triton /stats -> {code}")
    if code == 200:
        st = json.loads(data)["model_stats"][0]
        print(f"     stats: inference_count={st['inference_count']} execution_count={st['execution_count']}")
    return vecs


def pool(reply):
    """[[384], ...] as is; the HF_REPLY=tokens form [[[384] per token] per input] mean-pooled and L2-normalised."""
    out = []
    for t in reply:
        if t and isinstance(t[0], list):
            t = [sum(r[j] for r in t) / len(t) for j in range(len(t[0]))]
            nrm = math.sqrt(sum(x * x for x in t))
            t = [x / nrm for x in t]
        out.append(t)
    return out


def smhf(port):
    url = f"http://127.0.0.1:{port}/invocations"
    code, data, ms = http("POST", url, {"inputs": SENTENCES, "parameters": {"batch_size": 3}})
    check(code == 200, f"smhf 3 inputs batch_size=3 ({ms:.1f} ms)")
    out = json.loads(data)
    if out and isinstance(out[0][0], list):
        print(f"     HF_REPLY=tokens: {[len(t) for t in out]} tokens x {len(out[0][0])} (mean-pooled here)")
    out = pool(out)
    check(len(out) == 3 and all(len(v) == 384 for v in out), "smhf reply is 3 x 384")
    check(all(abs(math.sqrt(sum(x * x for x in v)) - 1) < 1e-4 for v in out), "smhf vectors have norm 1")
    singles = []
    for s in SENTENCES:
        code, data, ms = http("POST", url, {"inputs": [s], "parameters": {"batch_size": 1}})
        singles.append(pool(json.loads(data))[0])
    print(f"     b=1: {ms:.1f} ms")
    check(min(cos(a, b) for a, b in zip(out, singles)) > 0.9999, "smhf batched == one at a time")
    eight = [SENTENCES[i % 3] for i in range(8)]
    code, data, ms = http("POST", url, {"inputs": eight, "parameters": {"batch_size": 8}})
    check(code == 200, f"smhf b=8 natural ({ms:.1f} ms)")
    code, data, ms = http("POST", url, {"inputs": eight, "parameters": {"batch_size": 8, "padding": "max_length",
                                                                          "max_length": 128, "truncation": True}})
    check(code == 200, f"smhf b=8 padded to 128 ({ms:.1f} ms)")
    code, data, ms = http("POST", url, {"inputs": [{"text": SENTENCES[0], "text_pair": SENTENCES[1]}]})
    check(code == 200, f"smhf text/text_pair ({ms:.1f} ms)")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--triton", type=int)
    ap.add_argument("--smhf", type=int)
    ap.add_argument("--token", help="the triton server's TRITON_ACCESS_TOKEN")
    a = ap.parse_args()
    if not (a.triton or a.smhf):
        ap.error("give --triton PORT and/or --smhf PORT")
    res = {}
    if a.triton:
        res["triton"] = triton(a.triton, a.token, tokenizer())
    if a.smhf:
        res["smhf"] = smhf(a.smhf)
    for name, v in res.items():
        c12, c13 = cos(v[0], v[1]), cos(v[0], v[2])
        check(c12 > c13, f"{name}: cos(guitar, instrument) {c12:.4f} > cos(guitar, stock market) {c13:.4f}")
    if len(res) == 2:
        cs = [cos(x, y) for x, y in zip(res["triton"], res["smhf"])]
        check(min(cs) >= 0.999, "triton vs smhf, same sentence: cos " + " ".join(f"{c:.6f}" for c in cs))
    print("FAILED: " + "; ".join(FAILED) if FAILED else "all checks passed")
    sys.exit(1 if FAILED else 0)


if __name__ == "__main__":
    main()
