"""The first turns of a fresh process against a warm turn: library cold, library after
``turnscope.warm_up()``, and the HTTP service (``turnscope serve``, which warms each worker
before ``/readyz`` says ready).

Each case runs in a new process (a new server for the service) and times the user turns of
one conversation (a question, an answer, an ordinal follow-up, a pronoun follow-up). The
warm reference is the same conversation in another new process (server) that first ran
three other conversations of the same shape with different words: the same texts, so the
same work, with everything loaded (and no cache holding these texts). The table gives each
user turn as a ratio to its warm reference (the goal: the first turn at most twice a warm
one). Single timings on two shared cores are noisy; run it twice before reading much into
a ratio near 2.

    python benchmarks/first_turn.py [--skip-service]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

#: (first conversation, then the three that give the warm times); roles alternate u, a, u, u
CONVERSATIONS: list[list[tuple[str, str]]] = [
    [("user", "Which EU regions support customer-managed encryption keys?"),
     ("assistant", "Frankfurt and Dublin both support CMK for data at rest."),
     ("user", "What's the uptime SLA on the second one?"),
     ("user", "And how much does it cost there?")],
    [("user", "What storage tiers does the object store offer?"),
     ("assistant", "Standard and Archive; Archive is cheaper for cold data."),
     ("user", "How fast can I restore from the second one?"),
     ("user", "Is there a minimum storage duration for it?")],
    [("user", "Which plans include phone support?"),
     ("assistant", "Business and Enterprise include 24/7 phone support."),
     ("user", "How much is the first one per month?"),
     ("user", "Can I pay for it yearly?")],
    [("user", "What GPU instance families are available?"),
     ("assistant", "There are the G4 family for inference and the P5 family for training."),
     ("user", "What's the hourly price of the second one?"),
     ("user", "Is it available in Tokyo?")],
]
USER_POSITIONS = [i for i, (role, _) in enumerate(CONVERSATIONS[0]) if role == "user"]

_LIBRARY = """
import json, sys, time
t0 = time.perf_counter()
from turnscope import Session, warm_up
out = {"import": time.perf_counter() - t0}
if sys.argv[1] == "warm":
    t = time.perf_counter(); warm_up(); out["warm_up"] = time.perf_counter() - t
convs = json.loads(sys.argv[2])
times = []
for conv in convs:
    s, row = Session(), []
    for role, text in conv:
        t = time.perf_counter()
        s.add(role, text)
        row.append(time.perf_counter() - t)
    times.append(row)
out["times"] = times
print(json.dumps(out))
"""


#: the cases' order (the measured conversation alone) and the warm reference's (it last)
FIRST, REFERENCE = [0], [1, 2, 3, 0]


def library(mode: str, order: list[int]) -> dict[str, Any]:
    convs = [CONVERSATIONS[k] for k in order]
    done = subprocess.run([sys.executable, "-c", _LIBRARY, mode, json.dumps(convs)],
                          capture_output=True, text=True, timeout=600, check=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def service(order: list[int]) -> dict[str, Any]:
    """Start ``turnscope serve`` on a free loopback port, time the turns over HTTP, stop it."""
    import httpx

    port = _free_port()
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-c", "from turnscope.cli import main; main()", "serve", "--port", str(port),
               "--store", f"sqlite:{Path(tmp) / 's.db'}", "--log-level", "warning"]
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        base = f"http://127.0.0.1:{port}"
        try:
            with httpx.Client(base_url=base, timeout=120) as c:
                deadline = time.monotonic() + 180
                while True:  # bounded: the server is up within the deadline or the run fails
                    if proc.poll() is not None:
                        raise SystemExit(f"serve exited: {proc.stderr.read().decode()[-500:] if proc.stderr else ''}")
                    try:
                        if c.get("/readyz").status_code == 200:
                            break
                    except httpx.TransportError:
                        pass
                    if time.monotonic() > deadline:
                        raise SystemExit("serve was not ready within 180 s")
                    time.sleep(0.1)
                ready = time.perf_counter() - start
                times = []
                for conv in (CONVERSATIONS[k] for k in order):
                    sid = c.post("/v1/sessions").json()["session_id"]
                    row = []
                    for role, text in conv:
                        t = time.perf_counter()
                        r = c.post(f"/v1/sessions/{sid}/turns", json={"role": role, "content": text})
                        row.append(time.perf_counter() - t)
                        r.raise_for_status()
                    times.append(row)
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    return {"ready": ready, "times": times}


def ratios(first: list[float], warm: list[float]) -> list[tuple[float, float, float]]:
    """(first-process seconds, warm seconds, ratio) per user turn of the conversation."""
    return [(first[p], warm[p], first[p] / warm[p] if warm[p] > 0 else float("inf")) for p in USER_POSITIONS]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip-service", action="store_true", help="library cases only")
    args = ap.parse_args()
    console = Console()
    cases: list[tuple[str, list[float], list[float], str]] = []
    lib_ref = library("cold", REFERENCE)["times"][-1]
    cold = library("cold", FIRST)
    cases.append(("library, no warm-up", cold["times"][0], lib_ref, f"import {cold['import']:.2f} s"))
    warm = library("warm", FIRST)
    cases.append(("library, warm_up() first", warm["times"][0], lib_ref,
                  f"import {warm['import']:.2f} s, warm_up {warm['warm_up']:.2f} s"))
    if not args.skip_service:
        srv_ref = service(REFERENCE)["times"][-1]
        srv = service(FIRST)
        cases.append(("service (HTTP)", srv["times"][0], srv_ref, f"start to /readyz ready {srv['ready']:.2f} s"))
    table = Table(title="user turns of a fresh process against the same turns warm")
    numeric = ("fresh process (s)", "warm (s)", "× warm", "extra (ms)")
    for col in ("case", "set-up", "turn", *numeric):
        table.add_column(col, justify="right" if col in numeric else "left")
    for name, first_times, warm_times, setup in cases:
        for n, (first, warm_s, ratio) in enumerate(ratios(first_times, warm_times), start=1):
            # a ratio over a warm turn of a millisecond or two (the first message, which needs
            # no context) says little: red only where the extra time is one a user could notice
            style = "red" if ratio > 2 and first - warm_s > 0.02 else "green"
            table.add_row(name if n == 1 else "", setup if n == 1 else "", f"user turn {n}",
                          f"{first:.3f}", f"{warm_s:.3f}", f"[{style}]{ratio:.1f}[/{style}]",
                          f"{(first - warm_s) * 1000:.0f}")
        table.add_section()
    console.print(table)
    console.print("goal: the first turn at most 2× a warm one (red: over 2× and over 20 ms more)",
                  highlight=False)


if __name__ == "__main__":
    main()
