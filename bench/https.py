#!/usr/bin/env python3
"""bench/https.sh's two parts. `relay UPSTREAM PLAIN TLS DIR`: ports PLAIN and TLS forward to
UPSTREAM through the same asyncio relay, so TLS is the only difference between them.
`run BIN PLAIN TLS REPS`: the clients side by side (see bench/https.sh); with BEFORE set
to an older binary, its HTTPS too (reqwest's, before HTTPS moved into the pool). Standard
library only."""
import asyncio
import json
import os
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile


async def pipe(r, w):
    try:
        while data := await r.read(65536):
            w.write(data)
            await w.drain()
    except (ConnectionError, ssl.SSLError):
        pass
    finally:
        w.close()


def relay(upstream, plain, tls, d):
    async def handle(cr, cw):
        ur, uw = await asyncio.open_connection("127.0.0.1", upstream)
        for w in (cw, uw):
            w.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        await asyncio.gather(pipe(cr, uw), pipe(ur, cw))

    async def main():
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(f"{d}/cert.pem", f"{d}/key.pem")
        ctx.set_alpn_protocols(["http/1.1"])
        a = await asyncio.start_server(handle, "127.0.0.1", plain)
        b = await asyncio.start_server(handle, "127.0.0.1", tls, ssl=ctx)
        async with a, b:
            await asyncio.gather(a.serve_forever(), b.serve_forever())

    asyncio.run(main())


def one(binary, url, load):
    with tempfile.TemporaryDirectory() as t:
        path = os.path.join(t, "e.json")
        cmd = [binary, "--headless", "-o", path, "--engine", "triton", "--model",
               "encbench-reference", "--pad-to-max", "--max-len", "512", "--batch-size", "1",
               "--no-accuracy", "--warmup", "50", "--seed", "7", "--binary", "--pretokenize",
               "--url", url] + load
        done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode:
            sys.exit(f"{' '.join(cmd)} failed: {done.stderr}")
        with open(path) as f:
            ph = json.load(f)["phases"][0]
    c = ph["client_cpu_ms_per_request"]
    return {"user": c["user"], "system": c["system"], "cpu": c["user"] + c["system"],
            "p50": ph["latency_ms"]["p50"], "rps": ph["req_per_s"],
            "errors": sum(ph["errors"].values())}


def run(binary, plain, tls, reps):
    variants = {"HTTP (pool)": (binary, f"http://127.0.0.1:{plain}"),
                "HTTPS (pool)": (binary, f"https://127.0.0.1:{tls}")}
    if os.environ.get("BEFORE"):
        variants["HTTPS (reqwest, BEFORE)"] = (os.environ["BEFORE"], f"https://127.0.0.1:{tls}")
    names = list(variants)
    out = []
    for label, load in [("closed c=1", ["-c", "1", "-n", "2000"]),
                        ("closed c=16", ["-c", "16", "-n", "6000"])]:
        runs = {n: [] for n in names}
        for rep in range(reps):
            k = rep % len(names)
            for n in names[k:] + names[:k]:
                r = one(*variants[n], load)
                runs[n].append(r)
                print(f"  {label} {n} rep {rep + 1}: cpu {r['cpu']:.4f} ms/req", file=sys.stderr)
        out.append({"load": label, "runs": runs})
    lines = ["| load | client | client CPU ms/req (user + sys) | vs HTTP (pool) | paired ratio "
             "(median) | p50 ms | req/s | errors |", "|---|---|---|---|---|---|---|---|"]
    for o in out:
        runs = o["runs"]
        med = lambda n, k: statistics.median(r[k] for r in runs[n])
        base = med(names[0], "cpu")
        for n in names:
            paired = statistics.median(a["cpu"] / b["cpu"] for a, b in zip(runs[n], runs[names[0]]))
            lines.append(f"| {o['load']} | {n} | {med(n, 'cpu'):.3f} ({med(n, 'user'):.3f} + "
                         f"{med(n, 'system'):.3f}) | {med(n, 'cpu') / base:.2f}× | {paired:.2f}× | "
                         f"{med(n, 'p50'):.2f} | {med(n, 'rps'):.0f} | "
                         f"{sum(r['errors'] for r in runs[n])} |")
    os.makedirs("bench/out", exist_ok=True)
    with open("bench/out/https.json", "w") as f:
        json.dump(out, f, indent=1)
    with open("bench/out/https.md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    if sys.argv[1] == "relay":
        relay(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    else:
        run(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
