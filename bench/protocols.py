#!/usr/bin/env python3
"""HTTP/JSON, HTTP/binary and gRPC side by side against one server (BENCHMARKS.md, "HTTP or
gRPC"): the same KServe v2 requests, batches of 1 and 8 padded to 512 tokens, closed loop at
concurrency 1 and 16 and open loop at a fixed rate; per cell the client's CPU per request
(user and system, from each phase's client_cpu_ms_per_request), p50, p99 and req/s, the
median of --reps runs. The protocols take turns within each repetition, and the order turns
too, so drift on a shared machine falls on all of them alike.

`--protocols` runs some of them, the ratio column then against the first protocol named
unless HTTP/binary is among them. (Commit 59a186b also had "gRPC/tonic", tonic's client in the
same binary: BENCHMARKS.md, "gRPC: tonic against the hand-made client".)

Standard library only. bench/protocols.sh builds the binary and starts the servers.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

PROTOCOLS = ["HTTP/JSON", "HTTP/binary", "gRPC"]


def protocol_args(name, http, grpc):
    return {
        "HTTP/JSON": ["--url", http],
        "HTTP/binary": ["--url", http, "--binary"],
        "gRPC": ["--url", grpc],
    }[name]


def one_run(a, server, protocol, batch, load):
    """One phase; the figures of its export."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "e.json")
        cmd = [a.encbench, "--headless", "-o", path, "--engine", "triton",
               "--model", server["model"], "--pad-to-max", "--max-len", str(a.max_len),
               "--batch-size", str(batch), "--no-accuracy", "--warmup", str(a.warmup),
               "--seed", "7"]
        cmd += protocol_args(protocol, server["http"], server["grpc"]) + load
        if a.pretokenize:
            cmd.append("--pretokenize")
        done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr}")
        with open(path) as f:
            p = json.load(f)["phases"][0]
    cpu = p["client_cpu_ms_per_request"]
    errors = sum(p["errors"].values())
    return {
        "user": cpu["user"], "system": cpu["system"], "cpu": cpu["user"] + cpu["system"],
        "p50": p["latency_ms"]["p50"], "p99": p["latency_ms"]["p99"],
        "rps": p["req_per_s"], "errors": errors, "n": p["n"],
    }


def loads(a, batch):
    rate = a.rates[0] if batch == 1 else a.rates[1]
    return [
        ("closed c=1", ["-c", "1", "-n", str(a.n_c1)]),
        ("closed c=16", ["-c", "16", "-n", str(a.n_c16)]),
        (f"open {rate}/s", ["--request-rate", str(rate), "-c", "64", "--duration", str(a.open_s)]),
    ]


def cell(a, server, batch, label, load):
    protocols = a.protocols
    runs = {p: [] for p in protocols}
    for rep in range(a.reps):
        k = rep % len(protocols)
        order = protocols[k:] + protocols[:k]
        for protocol in order:
            r = one_run(a, server, protocol, batch, load)
            runs[protocol].append(r)
            print(f"  {server['name']} b={batch} {label} {protocol} rep {rep + 1}: "
                  f"cpu {r['cpu']:.4f} ms/req p50 {r['p50']} p99 {r['p99']} {r['rps']:.1f} req/s",
                  file=sys.stderr)
    med = lambda k, p: statistics.median(r[k] for r in runs[p])
    return {p: {k: med(k, p) for k in ("user", "system", "cpu", "p50", "p99", "rps", "errors")}
            | {"runs": runs[p]} for p in protocols}


def table(results, protocols, base_name):
    lines = [f"| server | batch | load | protocol | client CPU ms/req (user + sys) | vs {base_name} "
             "| p50 ms | p99 ms | req/s |", "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        base = r["cells"][base_name]["cpu"]
        for p in protocols:
            c = r["cells"][p]
            ratio = f"{c['cpu'] / base:.2f}×" if base > 0 else "-"
            lines.append(
                f"| {r['server']} | {r['batch']} × {r['max_len']} | {r['load']} | {p} | "
                f"{c['cpu']:.3f} ({c['user']:.3f} + {c['system']:.3f}) | {ratio} | "
                f"{c['p50']:.2f} | {c['p99']:.2f} | {c['rps']:.0f} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--encbench", required=True)
    ap.add_argument("--server", action="append", required=True,
                    help="NAME,HTTP_URL,GRPC_URL,MODEL (repeatable)")
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 8])
    ap.add_argument("--max-len", type=int, default=512)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--n-c1", type=int, default=2000)
    ap.add_argument("--n-c16", type=int, default=6000)
    ap.add_argument("--open-s", type=float, default=10)
    ap.add_argument("--rates", type=float, nargs=2, default=[300, 100],
                    help="open-loop req/s at batch 1 and at the larger batch")
    ap.add_argument("--pretokenize", action="store_true")
    ap.add_argument("--protocols", nargs="+", choices=PROTOCOLS, default=PROTOCOLS,
                    help="which to run; the ratio is against HTTP/binary if run, else the first")
    ap.add_argument("--out", default="bench/out/protocols")
    a = ap.parse_args()
    servers = []
    for s in a.server:
        name, http, grpc, model = s.split(",")
        servers.append({"name": name, "http": http, "grpc": grpc, "model": model})
    results = []
    for server in servers:
        for batch in a.batches:
            for label, load in loads(a, batch):
                results.append({"server": server["name"], "batch": batch, "max_len": a.max_len,
                                "load": label, "cells": cell(a, server, batch, label, load)})
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    with open(a.out + ".json", "w") as f:
        json.dump({"args": vars(a), "results": results}, f, indent=1)
    base = "HTTP/binary" if "HTTP/binary" in a.protocols else a.protocols[0]
    md = table(results, a.protocols, base)
    with open(a.out + ".md", "w") as f:
        f.write(md + "\n")
    print(md)


if __name__ == "__main__":
    main()
