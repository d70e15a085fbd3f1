#!/usr/bin/env python3
"""Load-generator benchmark: encbench-tui side by side with oha on one loopback server.

Run through `bench/run.sh`, which builds the binaries and installs oha first. Sections:

  throughput  closed loop at concurrency 1/16/64, both TUIs on (pseudo-terminal) and off:
              each tool's own req/s, the ratio, CPU-seconds per 1,000 requests served
  openloop    encbench at 500/2,000/5,000 req/s against a 1 ms server, concurrency 256:
              achieved-rate error and dispatch delay p50/p99
  memory      peak RSS after 100k, 1M and 2M requests of one headless run (oha beside it)
  frames      TUI frame draw time early and late in a long live run
  triton      `--engine triton` at batch 8 × 512 tokens, open loop, against the bench server's
              KServe v2 mode (2 ms): achieved-rate error and dispatch delay with the client
              tokenizing every request, and with `--pretokenize`; client CPU per request

Every figure is the median of --reps runs; oha and encbench alternate run by run, so load from
anything else on the machine falls on both alike. Results go to bench/out/results.{json,md}.
"""

import argparse
import datetime
import fcntl
import json
import os
import platform
import signal
import statistics
import struct
import subprocess
import sys
import termios
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "bench", "out")
ROWS, COLS = 48, 160


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


class Server:
    """The harness's loopback server (examples/bench_server.rs) in a child process."""

    def __init__(self, binary, delay_us=0, threads=2, save_body=None):
        cmd = [binary, "--delay-us", str(delay_us), "--threads", str(threads)]
        if save_body:
            cmd += ["--save-body", save_body]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        self.url = self.proc.stdout.readline().strip()
        if not self.url.startswith("http://"):
            raise RuntimeError(f"bench_server did not start: {self.url!r}")

    def count(self):
        with urllib.request.urlopen(self.url + "/_count", timeout=5) as r:
            return int(r.read())

    def cpu_s(self):
        """CPU seconds the server has used so far (user + system)."""
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def vm_hwm_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def run(cmd, tty=False, quit_after=None, env=None, watch=None):
    """Runs `cmd` to its end and returns its CPU seconds (user + sys), peak RSS and stdout.

    With `tty` the command gets a pseudo-terminal of ROWS×COLS as stdin/stdout/stderr (so
    TUIs draw as they would for a person) and the screen output is read and dropped. After
    `quit_after` seconds it is sent `q`. `watch(pid)` is called every 20 ms while it runs.
    """
    full_env = dict(os.environ, **(env or {}))
    out = b""
    if tty:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))

        def controlling_tty():
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        full_env.setdefault("TERM", "xterm-256color")
        proc = subprocess.Popen(
            cmd, stdin=slave, stdout=slave, stderr=slave, env=full_env,
            preexec_fn=controlling_tty,
        )
        os.close(slave)
        chunks = []

        def drain():
            while True:
                try:
                    data = os.read(master, 65536)
                except OSError:
                    return
                if not data:
                    return
                # Keep only the tail: the screen's escape codes are of no interest.
                chunks.append(data[-4096:])
                del chunks[:-4]

        reader = threading.Thread(target=drain, daemon=True)
        reader.start()
    else:
        proc = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, env=full_env,
        )
        captured = []
        reader = threading.Thread(target=lambda: captured.append(proc.stdout.read()), daemon=True)
        reader.start()
    started = time.monotonic()
    quit_sent = False
    while True:
        pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if watch:
            watch(proc.pid)
        if tty and quit_after is not None and not quit_sent and time.monotonic() - started >= quit_after:
            os.write(master, b"q")
            quit_sent = True
        if time.monotonic() - started > (quit_after or 0) + 600:
            proc.kill()
        time.sleep(0.02)
    proc.returncode = os.waitstatus_to_exitcode(status)
    reader.join(timeout=2)
    if tty:
        os.close(master)
        out = b"".join(chunks)
    else:
        out = captured[0] if captured else b""
    return {
        "cpu_s": ru.ru_utime + ru.ru_stime,
        "user_s": ru.ru_utime,
        "sys_s": ru.ru_stime,
        "maxrss_kb": ru.ru_maxrss,
        "wall_s": time.monotonic() - started,
        "rc": proc.returncode,
        "stdout": out,
    }


class Tools:
    def __init__(self, args):
        self.encbench = args.encbench
        self.oha = args.oha

    def encbench_cmd(self, url, conc, duration=None, n=None, rate=None, tui=False, export=None):
        cmd = [self.encbench, "--url", url, "--no-accuracy", "--concurrency", str(conc),
               "--warmup", "3"]
        if not tui:
            cmd.append("--headless")
            if duration is not None:
                cmd += ["--duration", str(duration)]
        if n is not None:
            cmd += ["-n", str(n)]
        if rate is not None:
            cmd += ["--request-rate", str(rate), "--seed", "1"]
        if export:
            cmd += ["--export", export]
        return cmd

    def oha_cmd(self, url, conc, body, duration=None, n=None, tui=False, output=None):
        cmd = [self.oha, "-c", str(conc), "-m", "POST", "-D", body,
               "-H", "content-type: application/json", "-H", "accept: application/json",
               "--output-format", "json"]
        if duration is not None:
            cmd += ["-z", f"{duration}s"]
        if n is not None:
            cmd += ["-n", str(n)]
        if not tui:
            cmd.append("--no-tui")
        if output:
            cmd += ["-o", output]
        cmd.append(url + "/invocations")
        return cmd


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def export_phase(path):
    with open(path) as f:
        d = json.load(f)
    return d["phases"][-1]


def throughput(args, tools, body, server):
    rows = []
    tmp = os.path.join(OUT, "tmp")
    for tui in [m == "on" for m in args.tui.split(",")]:
        # oha's TUI slows down as a run goes on (oha #806), so TUI runs may be made longer.
        duration = args.tui_duration if tui and args.tui_duration else args.duration
        for conc in args.concurrency:
            runs = {"encbench": [], "oha": []}
            load = loadavg()
            for rep in range(args.reps):
                order = ["oha", "encbench"] if rep % 2 == 0 else ["encbench", "oha"]
                for tool in order:
                    before = server.count()
                    server_cpu = server.cpu_s()
                    if tool == "encbench":
                        export = os.path.join(tmp, "encbench.json")
                        if os.path.exists(export):
                            os.remove(export)
                        cmd = tools.encbench_cmd(server.url, conc, duration=duration,
                                                 tui=tui, export=export)
                        r = run(cmd, tty=tui, quit_after=duration if tui else None)
                        rps = export_phase(export)["req_per_s"]
                    else:
                        output = os.path.join(tmp, "oha.json")
                        if os.path.exists(output):
                            os.remove(output)
                        cmd = tools.oha_cmd(server.url, conc, body, duration=duration,
                                            tui=tui, output=output)
                        # oha's TUI ends on its own when the duration is over.
                        r = run(cmd, tty=tui, quit_after=duration + 15 if tui else None)
                        with open(output) as f:
                            rps = json.load(f)["summary"]["requestsPerSec"]
                    served = server.count() - before
                    server_cpu = server.cpu_s() - server_cpu
                    r.update(tool=tool, rps=rps, served=served,
                             cpu_per_1k=r["cpu_s"] / served * 1000 if served else None,
                             user_us=r["user_s"] / served * 1e6 if served else None,
                             sys_us=r["sys_s"] / served * 1e6 if served else None,
                             server_cpu_per_1k=server_cpu / served * 1000 if served else None)
                    r.pop("stdout")
                    runs[tool].append(r)
                    log(f"  tui={'on' if tui else 'off'} c={conc} {tool:8} {rps:10.1f} req/s "
                        f"cpu {r['cpu_s']:.2f} s for {served} served")
            e = median([r["rps"] for r in runs["encbench"]])
            o = median([r["rps"] for r in runs["oha"]])
            rows.append({
                "tui": tui, "concurrency": conc, "duration_s": duration, "load_before": load, "load_after": loadavg(),
                "encbench_rps": e, "oha_rps": o, "ratio": e / o if o else None,
                "encbench_cpu_per_1k": median([r["cpu_per_1k"] for r in runs["encbench"]]),
                "oha_cpu_per_1k": median([r["cpu_per_1k"] for r in runs["oha"]]),
                **{f"{tool}_{part}_us": median([r[f"{part}_us"] for r in runs[tool]])
                   for tool in ("encbench", "oha") for part in ("user", "sys")},
                # The server's share shows whether a client made the server work harder.
                "server_cpu_per_1k_encbench": median([r["server_cpu_per_1k"] for r in runs["encbench"]]),
                "server_cpu_per_1k_oha": median([r["server_cpu_per_1k"] for r in runs["oha"]]),
                "runs": runs,
            })
    return rows


def os_wake_lateness(count=2000, sleep_s=0.0005):
    """How late a plain sleeping thread wakes on this machine right now, in ms (p50, p99).

    The dispatcher's schedule can be no tighter than the kernel's wake-ups: on a shared
    machine the bound is the CPU contention, not the load generator."""
    overs = []
    for _ in range(count):
        t = time.perf_counter()
        time.sleep(sleep_s)
        overs.append((time.perf_counter() - t - sleep_s) * 1000)
    overs.sort()
    return overs[len(overs) // 2], overs[int(len(overs) * 0.99)]


class WakeProbe:
    """A plain sleeping thread beside a run: how late the kernel woke it while the run (client
    and server) loaded the cores. That is the floor under a dispatcher's lateness at that
    moment, which a sample taken before the run, on quiet cores, is not."""

    def __init__(self, sleep_s=0.0005):
        self.sleep_s = sleep_s
        self.samples = []  # (wall-clock time woken, lateness ms)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self):
        while not self.stop.is_set():
            t = time.perf_counter()
            time.sleep(self.sleep_s)
            late = (time.perf_counter() - t - self.sleep_s) * 1000
            self.samples.append((time.time(), late))

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *_):
        self.stop.set()
        self.thread.join()

    def p99_between(self, start, end):
        """p99 of the wake-ups between two wall-clock times: the export's measured window,
        leaving out start-up (loading the tokenizer, tokenizing ahead) and exit."""
        overs = sorted(late for t, late in self.samples if start <= t <= end)
        return overs[int(len(overs) * 0.99)] if overs else None


def rfc3339_s(stamp):
    """Seconds since the epoch of an export's `started_at` / `ended_at` (Python 3.11 reads
    the `Z` and cuts the nanoseconds to microseconds)."""
    return datetime.datetime.fromisoformat(stamp).timestamp()


def open_loop_run(tools, server, rate, n, name, extra=()):
    """One open-loop run of encbench (Poisson, cap 256) after sampling the OS's own wake-up
    lateness, and with a probe of it during the run: the process's rusage, the export's last
    phase, and the figures every open-loop table shows."""
    export = os.path.join(OUT, "tmp", name)
    if os.path.exists(export):
        os.remove(export)
    wake_p50, wake_p99 = os_wake_lateness()
    with WakeProbe() as probe:
        r = run(tools.encbench_cmd(server.url, 256, n=n, rate=rate, export=export) + list(extra))
    with open(export) as f:
        e = json.load(f)
    during = probe.p99_between(rfc3339_s(e["started_at"]), rfc3339_s(e["ended_at"]))
    p = e["phases"][-1]
    return r, p, {
        "achieved": p["req_per_s"],
        "error_pct": (p["req_per_s"] - rate) / rate * 100,
        "dd_p50_ms": p["dispatch_delay_ms"]["p50"],
        "dd_p99_ms": p["dispatch_delay_ms"]["p99"],
        "latency_p50_ms": p["latency_ms"]["p50"],
        "n": p["n"],
        "os_wake_p50_ms": wake_p50,
        "os_wake_p99_ms": wake_p99,
        "os_wake_during_p99_ms": during,
    }


def openloop(args, tools, server):
    rows = []
    for rate in args.rates:
        runs = []
        load = loadavg()
        for _ in range(args.reps):
            _, p, row = open_loop_run(tools, server, rate, int(rate * args.openloop_duration),
                                      "openloop.json")
            runs.append(row)
            log(f"  rate {rate}: achieved {p['req_per_s']:.1f}, dispatch delay p50 "
                f"{p['dispatch_delay_ms']['p50']} p99 {p['dispatch_delay_ms']['p99']} ms; "
                f"OS wake-up lateness p99 {row['os_wake_p99_ms']:.3f} ms before, "
                f"{fmt(row['os_wake_during_p99_ms'], '.3f')} ms during")
        rows.append({
            "rate": rate, "load_before": load, "load_after": loadavg(), "n": runs[0]["n"],
            **{k: median([r[k] for r in runs])
               for k in ("achieved", "error_pct", "dd_p50_ms", "dd_p99_ms", "latency_p50_ms",
                         "os_wake_p50_ms", "os_wake_p99_ms", "os_wake_during_p99_ms")},
            "abs_error_pct": median([abs(r["error_pct"]) for r in runs]),
            "runs": runs,
        })
    return rows


def triton(args, tools, server):
    """The Triton engine tokenizes every request on the client, inside the timed path: at
    8 × 512 tokens that is milliseconds of CPU, on the cores that also keep the schedule."""
    rows = []
    engine = ["--engine", "triton", "--model", "bench", "--batch-size", "8", "--pad-to-max",
              "--max-len", "512"]
    for pretokenize in (False, True):
        rates = args.triton_pretokenized_rates if pretokenize else args.triton_rates
        for rate in rates:
            runs = []
            load = loadavg()
            for _ in range(args.reps):
                extra = engine + (["--pretokenize"] if pretokenize else [])
                r, p, row = open_loop_run(tools, server, rate, int(rate * args.triton_duration),
                                          "triton.json", extra)
                row.update({
                    "tokenize_p50_ms": (p.get("tokenize_ms") or {}).get("p50"),
                    "latency_p99_ms": p["latency_ms"]["p99"],
                    # The whole process, tokenizing before the phase included.
                    "cpu_ms_per_req": r["cpu_s"] / p["n"] * 1000 if p["n"] else None,
                    "errors": p["n"] - p["ok"],
                })
                runs.append(row)
                log(f"  triton pretokenize={pretokenize} rate {rate}: achieved {p['req_per_s']:.1f}, "
                    f"dispatch delay p99 {p['dispatch_delay_ms']['p99']} ms, "
                    f"OS wake-up p99 during {fmt(row['os_wake_during_p99_ms'], '.3f')} ms, "
                    f"tokenize p50 {row['tokenize_p50_ms']} ms, "
                    f"cpu {row['cpu_ms_per_req']:.2f} ms/req")
            rows.append({
                "pretokenize": pretokenize, "rate": rate, "load_before": load,
                "load_after": loadavg(), "n": runs[0]["n"],
                **{k: median([r[k] for r in runs])
                   for k in ("achieved", "error_pct", "dd_p50_ms", "dd_p99_ms", "tokenize_p50_ms",
                             "latency_p50_ms", "latency_p99_ms", "cpu_ms_per_req", "errors",
                             "os_wake_p99_ms", "os_wake_during_p99_ms")},
                "runs": runs,
            })
    return rows


def memory(args, tools, body, server):
    marks = args.memory_marks
    out = {"marks": marks, "load_before": loadavg()}
    for tool in (["encbench", "oha"] if tools.oha else ["encbench"]):
        runs = []
        for _ in range(args.reps):
            before = server.count()
            seen = {}

            last = {}

            def watch(pid):
                done = server.count() - before
                hwm = vm_hwm_kb(pid)
                if hwm:
                    last["hwm"] = hwm
                for m in marks[:-1]:
                    if m not in seen and done >= m:
                        seen[m] = hwm

            if tool == "encbench":
                cmd = tools.encbench_cmd(server.url, args.memory_concurrency, n=marks[-1])
            else:
                cmd = tools.oha_cmd(server.url, args.memory_concurrency, body, n=marks[-1])
            r = run(cmd, watch=watch)
            # The last mark is the end of the run: the peak sampled last (every 20 ms), not
            # getrusage's, which counts the harness's own memory that the child had between
            # fork and exec (about 24 MiB of Python: it hid the client's real peak).
            seen[marks[-1]] = max(last.get("hwm") or 0, seen.get(marks[-2]) or 0) or r["maxrss_kb"]
            runs.append(seen)
            log(f"  {tool} peak RSS KB by requests: {seen}")
        out[tool] = {
            "peak_rss_kb": {str(m): median([s.get(m) for s in runs]) for m in marks},
            "runs": [{str(k): v for k, v in s.items()} for s in runs],
        }
    out["load_after"] = loadavg()
    return out


def frames(args, tools, server):
    tmp = os.path.join(OUT, "tmp")
    runs = []
    load = loadavg()
    for _ in range(args.reps):
        path = os.path.join(tmp, "frames.json")
        if os.path.exists(path):
            os.remove(path)
        export = os.path.join(tmp, "frames-export.json")
        cmd = tools.encbench_cmd(server.url, 16, tui=True, export=export)
        run(cmd, tty=True, quit_after=args.frames_duration, env={"ENCBENCH_FRAME_LOG": path})
        with open(path) as f:
            secs = json.load(f)["seconds"]
        completed = export_phase(export)["n"]
        w = args.frames_window

        def mean_us(part):
            n = sum(s["frames"] for s in part)
            return sum(s["draw_cpu_us"] for s in part) / n if n else None

        # Skip the first seconds (start-up) and the last one (quitting).
        early = mean_us(secs[2:2 + w])
        late = mean_us(secs[-1 - w:-1])
        runs.append({"early_us": early, "late_us": late, "requests": completed,
                     "ratio": late / early if early else None})
        log(f"  frame early {early:.0f} µs, late {late:.0f} µs after {completed} requests")
    return {
        "load_before": load, "load_after": loadavg(), "window_s": args.frames_window,
        "duration_s": args.frames_duration,
        **{k: median([r[k] for r in runs]) for k in ("early_us", "late_us", "ratio", "requests")},
        "runs": runs,
    }


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def markdown(res):
    m = res["machine"]
    lines = [
        f"Measured {res['started']} — {m['cpus']} CPUs ({m['cpu']}), {m['mem_gib']} GiB, "
        f"{m['kernel']}; machine shared with other work. Server: examples/bench_server.rs "
        f"({res['server_threads']} threads) on the same cores. Medians of {res['reps']} runs.",
        "",
    ]
    if "throughput" in res:
        lines += [
            "### Closed loop, same POST body",
            "",
            "| TUI | concurrency | s per run | encbench req/s | oha req/s | ratio | encbench CPU-s/1k req | "
            "oha CPU-s/1k req | server CPU-s/1k req (encbench / oha) | load avg before → after |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in res["throughput"]:
            lines.append(
                f"| {'on' if r['tui'] else 'off'} | {r['concurrency']} | {r['duration_s']:g} "
                f"| {fmt(r['encbench_rps'], ',.0f')} "
                f"| {fmt(r['oha_rps'], ',.0f')} | **{fmt(r['ratio'], '.2f')}×** "
                f"| {fmt(r['encbench_cpu_per_1k'], '.3f')} | {fmt(r['oha_cpu_per_1k'], '.3f')} "
                f"| {fmt(r.get('server_cpu_per_1k_encbench'), '.3f')} / "
                f"{fmt(r.get('server_cpu_per_1k_oha'), '.3f')} "
                f"| {r['load_before']} → {r['load_after']} |")
        lines += [
            "",
            "### CPU per request served, user and system time (µs)",
            "",
            "| TUI | concurrency | encbench user | encbench system | oha user | oha system "
            "| encbench / oha (total) |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in res["throughput"]:
            e = (r.get("encbench_user_us") or 0) + (r.get("encbench_sys_us") or 0)
            o = (r.get("oha_user_us") or 0) + (r.get("oha_sys_us") or 0)
            lines.append(
                f"| {'on' if r['tui'] else 'off'} | {r['concurrency']} "
                f"| {fmt(r.get('encbench_user_us'), '.1f')} | {fmt(r.get('encbench_sys_us'), '.1f')} "
                f"| {fmt(r.get('oha_user_us'), '.1f')} | {fmt(r.get('oha_sys_us'), '.1f')} "
                f"| **{fmt(e / o if o else None, '.2f')}×** |")
        lines.append("")
    if "openloop" in res:
        lines += [
            "### Open loop, 1 ms server, concurrency cap 256, Poisson arrivals",
            "",
            "| target req/s | n | achieved req/s | error % | dispatch delay p50 ms | "
            "dispatch delay p99 ms | OS wake-up lateness p50 / p99 ms, before | "
            "OS wake-up p99 ms, during | latency p50 ms | load avg before → after |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in res["openloop"]:
            lines.append(
                f"| {r['rate']:,} | {r['n']:,} | {fmt(r['achieved'], ',.1f')} | {fmt(r['error_pct'], '+.2f')} "
                f"| {fmt(r['dd_p50_ms'], '.3f')} | {fmt(r['dd_p99_ms'], '.3f')} "
                f"| {fmt(r['os_wake_p50_ms'], '.3f')} / {fmt(r['os_wake_p99_ms'], '.3f')} "
                f"| {fmt(r.get('os_wake_during_p99_ms'), '.3f')} "
                f"| {fmt(r['latency_p50_ms'], '.3f')} | {r['load_before']} → {r['load_after']} |")
        lines.append("")
    if "triton" in res:
        lines += [
            f"### Triton engine, batch 8 × 512 tokens, open loop (cap 256), KServe v2 server "
            f"answering in {res['triton_delay_us'] / 1000:g} ms",
            "",
            "| tokenized | target req/s | n | achieved req/s | error % | dispatch delay p50 / p99 ms "
            "| OS wake-up p99 ms, before / during | tokenize p50 ms | latency p50 / p99 ms "
            "| client CPU ms/req | errors | load avg before → after |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in res["triton"]:
            lines.append(
                f"| {'before the phase (--pretokenize)' if r['pretokenize'] else 'per request'} "
                f"| {r['rate']:,} | {r['n']:,} | {fmt(r['achieved'], ',.1f')} "
                f"| {fmt(r['error_pct'], '+.2f')} "
                f"| {fmt(r['dd_p50_ms'], '.3f')} / {fmt(r['dd_p99_ms'], '.3f')} "
                f"| {fmt(r.get('os_wake_p99_ms'), '.3f')} / "
                f"{fmt(r.get('os_wake_during_p99_ms'), '.3f')} "
                f"| {fmt(r['tokenize_p50_ms'], '.2f')} "
                f"| {fmt(r['latency_p50_ms'], '.2f')} / {fmt(r['latency_p99_ms'], '.2f')} "
                f"| {fmt(r['cpu_ms_per_req'], '.3f')} | {fmt(r['errors'], '.0f')} "
                f"| {r['load_before']} → {r['load_after']} |")
        lines.append("")
    if "memory" in res:
        mem = res["memory"]
        marks = mem["marks"]
        lines += [
            f"### Peak RSS during one headless run (closed loop, concurrency "
            f"{res['memory_concurrency']})",
            "",
            "| tool | " + " | ".join(f"after {m:,} req" for m in marks) + f" | {marks[-1]:,} / {marks[0]:,} |",
            "|---|" + "---|" * (len(marks) + 1),
        ]
        for tool in ("encbench", "oha"):
            if tool not in mem:
                continue
            p = mem[tool]["peak_rss_kb"]
            first, last = p.get(str(marks[0])), p.get(str(marks[-1]))
            lines.append(
                f"| {tool} | " + " | ".join(fmt(p.get(str(k)) and p[str(k)] / 1024, '.1f') + " MiB" for k in marks)
                + f" | **{fmt(last / first if first and last else None, '.2f')}×** |")
        lines += ["", f"Load average {mem['load_before']} → {mem['load_after']}.", ""]
    if "frames" in res:
        f = res["frames"]
        lines += [
            f"### TUI frame cost (CPU time of the drawing thread) in a live run ({f['duration_s']} s, closed loop at "
            f"concurrency 16, {COLS}×{ROWS} pseudo-terminal)",
            "",
            f"| requests in the run | frame, seconds 2–{2 + f['window_s']} | frame, last "
            f"{f['window_s']} s | late / early |",
            "|---|---|---|---|",
            f"| {fmt(f['requests'], ',.0f')} | {fmt(f['early_us'], '.0f')} µs | {fmt(f['late_us'], '.0f')} µs "
            f"| **{fmt(f['ratio'], '.2f')}** |",
            "",
            f"Load average {f['load_before']} → {f['load_after']}.",
            "",
        ]
    return "\n".join(lines)


def machine():
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        mem_kb = int(f.readline().split()[1])
    return {"cpus": os.cpu_count(), "cpu": cpu, "mem_gib": round(mem_kb / 2**20),
            "kernel": platform.release()}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--encbench", required=True)
    ap.add_argument("--server", required=True, help="bench_server binary")
    ap.add_argument("--oha", help="oha binary (sections that compare need it)")
    ap.add_argument("--sections", default="throughput,openloop,memory,frames,triton")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--duration", type=float, default=10, help="seconds per throughput run")
    ap.add_argument("--tui-duration", type=float, default=60,
                    help="seconds per throughput run with the TUIs on: oha's TUI slows down "
                         "over a run (oha #806), which a 10 s run would hide")
    ap.add_argument("--tui", default="off,on", help="throughput runs with the TUIs off, on, or both")
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 16, 64])
    ap.add_argument("--rates", type=int, nargs="+", default=[500, 2000, 5000])
    ap.add_argument("--openloop-duration", type=float, default=6)
    ap.add_argument("--memory-marks", type=int, nargs="+", default=[100_000, 1_000_000, 2_000_000])
    ap.add_argument("--memory-concurrency", type=int, default=16)
    ap.add_argument("--frames-duration", type=float, default=60)
    ap.add_argument("--frames-window", type=int, default=10)
    ap.add_argument("--triton-rates", type=int, nargs="+", default=[200, 500])
    ap.add_argument("--triton-pretokenized-rates", type=int, nargs="+", default=[500, 2500])
    ap.add_argument("--triton-duration", type=float, default=10)
    ap.add_argument("--triton-delay-us", type=int, default=2000)
    ap.add_argument("--server-threads", type=int, default=2)
    ap.add_argument("--out", help="results folder (default bench/out)")
    args = ap.parse_args()
    sections = args.sections.split(",")
    global OUT
    OUT = args.out or OUT
    os.makedirs(os.path.join(OUT, "tmp"), exist_ok=True)
    tools = Tools(args)
    if not tools.oha and "throughput" in sections:
        sys.exit("the throughput section compares with oha: give --oha")

    res = {"started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": machine(),
           "reps": args.reps, "duration_s": args.duration, "server_threads": args.server_threads,
           "memory_concurrency": args.memory_concurrency, "triton_delay_us": args.triton_delay_us,
           "commands": " ".join(sys.argv)}
    body = os.path.join(OUT, "tmp", "body.json")
    if os.path.exists(body):
        os.remove(body)
    server = Server(args.server, threads=args.server_threads, save_body=body)
    try:
        # One short run records the exact body encbench sends, for oha to send too.
        run(tools.encbench_cmd(server.url, 1, n=5))
        if not os.path.exists(body):
            sys.exit("the server saw no request body")
        res["body"] = open(body).read()
        if "throughput" in sections:
            log("throughput")
            res["throughput"] = throughput(args, tools, body, server)
        if "memory" in sections:
            log("memory")
            res["memory"] = memory(args, tools, body, server)
        if "frames" in sections:
            log("frames")
            res["frames"] = frames(args, tools, server)
    finally:
        server.stop()
    if "openloop" in sections:
        log("open loop")
        slow = Server(args.server, delay_us=1000, threads=args.server_threads)
        try:
            res["openloop"] = openloop(args, tools, slow)
        finally:
            slow.stop()
    if "triton" in sections:
        log("triton")
        kserve = Server(args.server, delay_us=args.triton_delay_us, threads=args.server_threads)
        try:
            res["triton"] = triton(args, tools, kserve)
        finally:
            kserve.stop()
    res["finished"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    with open(os.path.join(OUT, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
    md = markdown(res)
    with open(os.path.join(OUT, "results.md"), "w") as f:
        f.write(md + "\n")
    print(md)


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    main()
