#!/usr/bin/env python3
"""ANSI-coloured terminal text (tmux capture-pane -e -p) to one HTML page, monospace on a dark
background: how docs/live-screen.png was made. Not used by the tool or the tests.

    tmux -L shot new-session -d -s shot -x 120 -y 40 \
        "target/debug/encbench-tui --demo --pad-to-max --request-rate 20 --instance-type ml.g6.12xlarge -n 30"
    # press b, wait for the batch sweep, press s, wait for the concurrency sweep, then:
    tmux -L shot capture-pane -t shot -e -p > screen.ansi
    scripts/ansi2html.py < screen.ansi > screen.html
    chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1120,750 \
        --user-data-dir="$(mktemp -d)" --screenshot=docs/live-screen.png "file://$PWD/screen.html"
"""
import html
import re
import sys

BASE = ["#1e1e1e", "#cd3131", "#0dbc79", "#e5e510", "#2472c8", "#bc3fbc", "#11a8cd", "#e5e5e5"]
BRIGHT = ["#666666", "#f14c4c", "#23d18b", "#f5f543", "#3b8eea", "#d670d6", "#29b8db", "#ffffff"]
FG, BG = "#d4d4d4", "#1e1e1e"


def c256(n):
    if n < 8:
        return BASE[n]
    if n < 16:
        return BRIGHT[n - 8]
    if n < 232:
        n -= 16
        v = [0, 95, 135, 175, 215, 255]
        return "#%02x%02x%02x" % (v[n // 36], v[(n // 6) % 6], v[n % 6])
    g = 8 + (n - 232) * 10
    return "#%02x%02x%02x" % (g, g, g)


def apply(state, params):
    ps = [int(p) if p else 0 for p in params.split(";")] if params else [0]
    i = 0
    while i < len(ps):
        p = ps[i]
        if p == 0:
            state.clear()
        elif p == 1:
            state["b"] = True
        elif p == 2:
            state["dim"] = True
        elif p == 3:
            state["i"] = True
        elif p == 4:
            state["u"] = True
        elif p == 7:
            state["rev"] = True
        elif p == 22:
            state.pop("b", None)
            state.pop("dim", None)
        elif p == 23:
            state.pop("i", None)
        elif p == 24:
            state.pop("u", None)
        elif p == 27:
            state.pop("rev", None)
        elif 30 <= p <= 37:
            state["fg"] = BASE[p - 30]
        elif 90 <= p <= 97:
            state["fg"] = BRIGHT[p - 90]
        elif 40 <= p <= 47:
            state["bg"] = BASE[p - 40]
        elif 100 <= p <= 107:
            state["bg"] = BRIGHT[p - 100]
        elif p == 39:
            state.pop("fg", None)
        elif p == 49:
            state.pop("bg", None)
        elif p in (38, 48) and i + 1 < len(ps):
            key = "fg" if p == 38 else "bg"
            if ps[i + 1] == 5 and i + 2 < len(ps):
                state[key] = c256(ps[i + 2])
                i += 2
            elif ps[i + 1] == 2 and i + 4 < len(ps):
                state[key] = "#%02x%02x%02x" % tuple(ps[i + 2:i + 5])
                i += 4
        i += 1


def style(state):
    fg, bg = state.get("fg", FG), state.get("bg", BG)
    if state.get("rev"):
        fg, bg = bg, fg
    s = f"color:{fg};background:{bg};"
    if state.get("b"):
        s += "font-weight:bold;"
    if state.get("dim"):
        s += "opacity:0.7;"
    if state.get("i"):
        s += "font-style:italic;"
    if state.get("u"):
        s += "text-decoration:underline;"
    return s


def main():
    out, state = [], {}
    for line in sys.stdin.read().rstrip("\n").split("\n"):
        for m in re.finditer(r"\x1b\[([0-9;]*)m|([^\x1b]+)|\x1b", line):
            if m.group(1) is not None:
                apply(state, m.group(1))
            elif m.group(2):
                out.append(f'<span style="{style(state)}">{html.escape(m.group(2))}</span>')
        out.append("\n")
    print(
        "<!doctype html><meta charset=utf-8><style>"
        f"body{{margin:0;background:{BG}}}"
        "pre{margin:0;padding:12px;font:15px/1.2 'DejaVu Sans Mono',monospace;"
        f"color:{FG};background:{BG}}}span{{white-space:pre}}</style><pre>"
        + "".join(out)
        + "</pre>"
    )


main()
