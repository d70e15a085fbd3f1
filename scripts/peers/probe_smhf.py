"""Probe an smhf peer started by scripts/peers/smhf.sh and print what it answers (stdlib only).
Usage: python3 scripts/peers/probe_smhf.py PORT                  one hf pair payload (batch_size 4, 4 inputs), errors
       python3 scripts/peers/probe_smhf.py PORT overload N [R]   N concurrent clients, R requests each (default 1)
       python3 scripts/peers/probe_smhf.py PORT watch-ping S     poll /ping every 50 ms for S seconds, print changes
Exits non-zero when an expectation fails."""
import collections, http.client, json, socket, sys, threading, time
from concurrent.futures import ThreadPoolExecutor

port = int(sys.argv[1])
mode = sys.argv[2] if len(sys.argv) > 2 else "basic"
PAIRS = [("A man is playing a guitar.", "A person plays music."),
         ("A man is playing a guitar.", "A man is playing a guitar."),
         ("The cat sleeps on the sofa.", "The cat is running outside."),
         ("It is raining heavily.", "The ground is wet.")]
BODY = json.dumps({"inputs": [{"text": t, "text_pair": p} for t, p in PAIRS],
                   "parameters": {"batch_size": 4, "truncation": True}}).encode()


def request(conn, method, path, body=None):
    conn.request(method, path, body=body, headers={"Content-Type": "application/json"} if body else {})
    r = conn.getresponse()
    return r.status, r.reason, r.getheaders(), r.read()


def raw_exchange(body, sock=None):
    """One POST /invocations over a raw socket (keep-alive requested). Returns (status line, headers, body, fate)
    where fate tells whether the server closed the TCP connection after answering."""
    s = sock or socket.create_connection(("127.0.0.1", port), timeout=120)
    s.sendall(b"POST /invocations HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n"
              b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            s.close()
            return None, [], buf, "connection closed before a response"
        buf += chunk
    head, rest = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    headers = [tuple(x.strip() for x in l.split(":", 1)) for l in lines[1:]]
    n = int(dict((k.lower(), v) for k, v in headers).get("content-length", "0"))
    while len(rest) < n:
        chunk = s.recv(65536)
        if not chunk:
            break
        rest += chunk
    s.settimeout(1.0)
    try:
        fate = "closed by server (EOF)" if s.recv(1) == b"" else "server sent extra bytes"
    except socket.timeout:
        fate = "kept open (no EOF within 1 s)"
    except ConnectionResetError:
        fate = "reset by server"
    s.close()
    return lines[0], headers, rest, fate


def show(title, st, reason, headers, body):
    print(f"== {title}: HTTP {st} {reason!r}")
    print("   headers:", headers)
    print("   body:", body[:400])


if mode == "basic":
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    st, reason, h, b = request(c, "POST", "/invocations", BODY)
    show("hf pair payload, batch_size 4, 4 inputs", st, reason, h, b)
    out = json.loads(b)
    ok = st == 200 and len(out) == 4 and all(set(o) == {"label", "score"} for o in out) \
        and all(o["label"] in ("entailment", "neutral", "contradiction") for o in out)
    print("  ok" if ok else "  FAIL", "- one {label, score} per input")
    st2, _, _, b2 = request(c, "POST", "/invocations", BODY)
    print("== same request again on the same keep-alive connection:", st2, "identical" if b2 == b else "DIFFERENT")
    ok = ok and st2 == 200 and b2 == b
    for title, body in [("success (raw socket)", BODY),
                        ("model error (input '__raise__')", b'{"inputs":[{"text":"__raise__","text_pair":"x"}]}'),
                        ("invalid JSON", b"not json")]:
        line, h, b, fate = raw_exchange(body)
        print(f"== {title}: {line}")
        print("   headers:", h)
        print("   body:", b[:400])
        print("   TCP connection after the response:", fate)
    sys.exit(0 if ok else 1)

elif mode == "overload":
    n = int(sys.argv[3]); per = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    results, lock, examples = collections.Counter(), threading.Lock(), {}
    start = threading.Barrier(n)

    def client(i):
        start.wait()
        for _ in range(per):   # a fresh connection per request (the fate check waits 1 s on each)
            t0 = time.monotonic()
            try:
                line, h, b, fate = raw_exchange(BODY)
            except OSError as e:
                with lock:
                    results[f"exception {type(e).__name__}"] += 1
                continue
            dt = time.monotonic() - t0 - (1.0 if fate.startswith("kept open") else 0.0)
            st = line.split(" ", 2)[1] if line else "no response"
            with lock:
                results[st] += 1
                ex = examples.setdefault(st, {"line": line, "headers": h, "body": b[:400], "fates": collections.Counter(),
                                              "lat": []})
                ex["fates"][fate] += 1
                ex["lat"].append(dt)

    t0 = time.monotonic()
    with ThreadPoolExecutor(n) as pool:
        list(pool.map(client, range(n)))
    wall = time.monotonic() - t0
    print(f"== {n} concurrent clients x {per} requests in {wall:.2f} s: {dict(results)}")
    for st, ex in sorted(examples.items(), key=lambda kv: str(kv[0])):
        lat = sorted(ex.pop("lat"))
        print(f"-- {ex['line']!r}: latency min {lat[0]*1000:.0f} ms, median {lat[len(lat)//2]*1000:.0f} ms, "
              f"max {lat[-1]*1000:.0f} ms")
        print("   headers:", ex["headers"])
        print("   body:", ex["body"])
        print("   TCP connection after the response:", dict(ex["fates"]))

elif mode == "watch-ping":
    until = time.monotonic() + float(sys.argv[3]); t0 = time.monotonic(); last = None
    while time.monotonic() < until:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            st, _, _, b = request(c, "GET", "/ping")
            state = f"HTTP {st} {b.decode().split()!r}"
        except OSError as e:
            state = f"no answer ({type(e).__name__})"
        if state != last:
            print(f"{time.monotonic() - t0:7.2f} s  /ping -> {state}", flush=True)
            last = state
        time.sleep(0.05)
