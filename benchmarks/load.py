"""Load benchmark of ``turnscope serve`` on loopback, driven by ``wrk`` (a separate process).

For each deployment — SQLite with 1 worker, SQLite with 2 workers, Redis with 2 workers —
it measures requests/s and p50/p99 latency of a user turn (``POST /v1/sessions/{id}/turns``)
beside the same figures for ``POST /v1/_noop``: the same authentication, body reading and
JSON checks, then a constant answer and no turnscope work. The ratio is what turnscope
(rewrite + store) costs on top of the framework.

    .venv/bin/python benchmarks/load.py                       # 10 s per run, 16 connections
    .venv/bin/python benchmarks/load.py --duration 5 --output /tmp/load.json

Needs Debian's ``wrk`` and ``redis-server`` (``apt-get install -y wrk redis-server``).
Everything runs on 127.0.0.1: the servers, Redis and wrk. On a 2-core machine the load
generator shares the cores with the server, so absolute numbers are a floor.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
SEED = [
    ("user", "Which EU regions support customer-managed encryption keys?"),
    ("assistant", "Frankfurt and Dublin both support CMK for data at rest."),
    ("user", "What's the uptime SLA on the second one?"),
    ("assistant", "Dublin (eu-west-1) is covered by the 99.95% monthly uptime SLA."),
]
MESSAGES = [
    "And the RPO for Dublin?",
    "ok different question — is the billing export API paginated?",
    "what are its rate limits?",
    "is the reporting export API paginated too?",
    "which regions is it available in?",
    "and the first one?",
]

LUA = r"""
local sessions = {%(sessions)s}
local messages = {%(messages)s}
local path_kind = "%(kind)s"
local counter = 0
local tid = 0
local nthreads = %(threads)d
local threads = {}

function setup(thread)
  thread:set("tid", #threads)
  table.insert(threads, thread)
end

function init(args)
  counter = 0
end

function request()
  -- each wrk thread cycles through its own slice of the sessions, so two in-flight
  -- requests of one thread rarely touch the same session
  local mine = {}
  for i = tid + 1, #sessions, nthreads do mine[#mine + 1] = sessions[i] end
  local sid = mine[(counter %% #mine) + 1]
  local msg = messages[(math.floor(counter / #mine) %% #messages) + 1]
  counter = counter + 1
  local body = '{"role": "user", "content": "' .. msg .. '"}'
  local path = "/v1/_noop"
  if path_kind == "turn" then path = "/v1/sessions/" .. sid .. "/turns" end
  return wrk.format("POST", path, {["Content-Type"] = "application/json"}, body)
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRKJSON {"requests": %%d, "duration_us": %%d, "p50_us": %%d, "p99_us": %%d, "mean_us": %%f, ' ..
    '"non2xx": %%d, "connect": %%d, "read": %%d, "write": %%d, "timeout": %%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.mean,
    e.status, e.connect, e.read, e.write, e.timeout))
end
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Proc:
    def __init__(self, args: list[str], log: Path, cwd: Path) -> None:
        self.log = log
        with log.open("wb") as out:
            self.p = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, cwd=cwd,
                                      start_new_session=True)

    def stop(self) -> None:
        if self.p.poll() is None:
            os.killpg(self.p.pid, signal.SIGTERM)  # its own group: uvicorn's workers too
            try:
                self.p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.p.pid, signal.SIGKILL)
                self.p.wait(timeout=10)


def start_redis(tmp: Path) -> tuple[Proc, str]:
    port = free_port()
    exe = shutil.which("redis-server")
    if exe is None:
        sys.exit("redis-server not found: apt-get install -y redis-server")
    # appendonly with fsync every second: the setting a production Redis for sessions would use
    proc = Proc([exe, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(tmp), "--save", "",
                 "--appendonly", "yes", "--appendfsync", "everysec"], tmp / "redis.log", tmp)
    for _ in range(200):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return proc, f"redis://127.0.0.1:{port}/0"
        except OSError:
            time.sleep(0.05)
    sys.exit("redis-server did not start")


def start_server(store: str, workers: int, tmp: Path, name: str) -> tuple[Proc, str]:
    port = free_port()
    args = [sys.executable, "-c", "from turnscope.cli import main; main()", "serve", "--port", str(port),
            "--store", store, "--workers", str(workers), "--rate-limit", "0", "--max-turns", "100000",
            "--log-level", "warning"]
    proc = Proc(args, tmp / f"serve-{name}.log", tmp)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.p.poll() is not None:
            sys.exit(f"turnscope serve exited:\n{proc.log.read_text(errors='replace')}")
        try:
            if httpx.get(base + "/readyz", timeout=2).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    sys.exit("turnscope serve did not become ready")


def seed_sessions(base: str, n: int) -> list[str]:
    out = []
    with httpx.Client(base_url=base, timeout=60) as c:
        for _ in range(n):
            sid = c.post("/v1/sessions", json={"vocabulary": "cloud"}).json()["session_id"]
            for role, text in SEED:
                r = c.post(f"/v1/sessions/{sid}/turns", json={"role": role, "content": text})
                r.raise_for_status()
            out.append(sid)
    return out


def stored_turns(base: str, sessions: list[str]) -> int:
    with httpx.Client(base_url=base, timeout=60) as c:
        return sum(c.get(f"/v1/sessions/{sid}").json()["version"] for sid in sessions)


def run_wrk(base: str, kind: str, sessions: list[str], args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    script = tmp / f"wrk-{kind}.lua"
    script.write_text(LUA % {
        "sessions": ", ".join(f'"{s}"' for s in sessions),
        "messages": ", ".join(json.dumps(m, ensure_ascii=False) for m in MESSAGES),
        "kind": kind, "threads": args.threads,
    }, encoding="utf-8")
    cmd = ["wrk", "-t", str(args.threads), "-c", str(args.connections), "-d", f"{args.duration}s",
           "--timeout", "30s", "-s", str(script), base]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=args.duration + 120)
    line = next((ln for ln in res.stdout.splitlines() if ln.startswith("WRKJSON ")), None)
    if line is None:
        sys.exit(f"wrk gave no result:\n{res.stdout}\n{res.stderr}")
    d = json.loads(line[len("WRKJSON "):])
    secs = d["duration_us"] / 1e6
    return {"requests": d["requests"], "rps": d["requests"] / secs, "p50_ms": d["p50_us"] / 1000,
            "p99_ms": d["p99_us"] / 1000, "mean_ms": d["mean_us"] / 1000, "non2xx": d["non2xx"],
            "socket_errors": d["connect"] + d["read"] + d["write"] + d["timeout"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=int, default=10, help="seconds per wrk run")
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--sessions", type=int, default=64)
    ap.add_argument("--output", type=Path, default=ROOT / "benchmarks" / "load.json")
    args = ap.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk not found: apt-get install -y wrk")

    console = Console(width=150)  # a full table in logs and pipes too
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="turnscope-load-") as d:
        tmp = Path(d)
        redis, redis_url = start_redis(tmp)
        try:
            for name, store, workers in (("sqlite", "sqlite:" + str(tmp / "s1.db"), 1),
                                         ("sqlite", "sqlite:" + str(tmp / "s2.db"), 2),
                                         ("redis", redis_url, 2)):
                label = f"{name}, {workers} worker{'s' if workers > 1 else ''}"
                console.print(f"[bold]{label}[/bold]: starting")
                server, base = start_server(store, workers, tmp, f"{name}{workers}")
                try:
                    sessions = seed_sessions(base, args.sessions)
                    before = stored_turns(base, sessions)
                    noop = run_wrk(base, "noop", sessions, args, tmp)
                    turn = run_wrk(base, "turn", sessions, args, tmp)
                    stored = stored_turns(base, sessions) - before
                finally:
                    server.stop()
                answered = turn["requests"] - turn["non2xx"]
                row = {"deployment": label, "store": name, "workers": workers, "noop": noop, "turn": turn,
                       "rps_ratio": noop["rps"] / turn["rps"], "p50_ratio": turn["p50_ms"] / noop["p50_ms"],
                       "turns_answered": answered, "turns_stored": stored}
                results.append(row)
                console.print(f"  turn {turn['rps']:.0f} req/s, no-op {noop['rps']:.0f} req/s; "
                              f"{answered} turns answered, {stored} stored")
        finally:
            redis.stop()

    table = Table(title=f"turnscope serve on loopback (wrk: {args.threads} threads, {args.connections} "
                        f"connections, {args.duration} s per run, {args.sessions} sessions)")
    for col in ("deployment", "endpoint", "req/s", "p50 ms", "p99 ms", "non-2xx", "socket errors",
                "no-op/turn req/s", "turn/no-op p50"):
        table.add_column(col, justify="left" if col in ("deployment", "endpoint") else "right")
    for r in results:
        for ep in ("noop", "turn"):
            m = r[ep]
            table.add_row(r["deployment"] if ep == "noop" else "", "POST /v1/_noop" if ep == "noop"
                          else "POST /v1/sessions/{id}/turns (user)",
                          f"{m['rps']:.0f}", f"{m['p50_ms']:.1f}", f"{m['p99_ms']:.1f}", str(m["non2xx"]),
                          str(m["socket_errors"]),
                          f"{r['rps_ratio']:.2f}" if ep == "turn" else "",
                          f"{r['p50_ratio']:.2f}" if ep == "turn" else "")
    console.print(table)
    for r in results:
        # wrk stops counting with up to one request per connection still in flight; the
        # server finishes and stores those, so stored may exceed answered by that much
        extra = r["turns_stored"] - r["turns_answered"]
        ok = 0 <= extra <= args.connections
        r["consistent"] = ok
        console.print(f"{r['deployment']}: {r['turns_answered']} turns answered 2xx, {r['turns_stored']} stored "
                      f"({'consistent' if ok else 'MISMATCH'}: {extra} in flight when wrk stopped)")
    import platform

    payload = {"machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                           "python": platform.python_version()},
               "settings": vars(args) | {"output": str(args.output)}, "noop_endpoint": "POST /v1/_noop",
               "results": results}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(payload, indent=2), encoding="utf-8")
    console.print(f"results written to {args.output}")


if __name__ == "__main__":
    main()
