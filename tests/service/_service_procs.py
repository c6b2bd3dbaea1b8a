"""Helpers of the service tests: real processes: ``turnscope serve`` (uvicorn) and ``redis-server``,
each on a free loopback port, each stopped by its own process id at the end."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

REDIS_SERVER = shutil.which("redis-server")

SPEC_CONVERSATION = [
    ("user", "Which EU regions support customer-managed encryption keys?"),
    ("assistant", "Frankfurt and Dublin both support CMK for data at rest."),
    ("user", "What's the uptime SLA on the second one?"),
    ("assistant", "Dublin (eu-west-1) is covered by the 99.95% monthly uptime SLA."),
    ("user", "And the RPO for Dublin?"),
    ("assistant", "The documented RPO for Dublin is 15 minutes."),
    ("user", "ok different question — is the billing export API paginated?"),
]

KEYS = {"key-alpha-0123456789": "alpha", "key-beta-0123456789": "beta", "key-gamma-0123456789": "gamma"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _kill_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)  # the process started its own group: uvicorn workers included
    except ProcessLookupError:
        pass


class RedisProcess:
    """A redis-server of our own; ``appendonly`` (fsync on every write) for restart tests."""

    def __init__(self, workdir: Path, *, appendonly: bool = False) -> None:
        assert REDIS_SERVER, "redis-server is not installed (.ci/run installs Debian's package)"
        self.dir = workdir
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.appendonly = appendonly
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        assert REDIS_SERVER
        args = [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.dir),
                "--save", "", "--daemonize", "no", "--protected-mode", "yes"]
        args += (["--appendonly", "yes", "--appendfsync", "always"] if self.appendonly
                 else ["--appendonly", "no"])
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     start_new_session=True)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(64).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self, *, kill: bool = False) -> None:
        if self.proc is not None and self.proc.poll() is None:
            _kill_group(self.proc, signal.SIGKILL if kill else signal.SIGTERM)
            self.proc.wait(timeout=20)
        self.proc = None


class ServiceProcess:
    """``turnscope serve`` in its own process group."""

    def __init__(self, store: str, workdir: Path, *, workers: int = 1, keys: dict[str, str] | None = None,
                 extra: list[str] | None = None) -> None:
        self.store = store
        self.dir = workdir
        self.dir.mkdir(parents=True, exist_ok=True)
        self.workers = workers
        self.keys_file: Path | None = None
        if keys:
            self.keys_file = self.dir / "keys.txt"
            self.keys_file.write_text("".join(f"{k} {t}\n" for k, t in keys.items()), encoding="utf-8")
        self.extra = extra or []
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.starts += 1
        self.log = self.dir / f"serve-{self.port}-{self.starts}.log"
        args = [sys.executable, "-c", "from turnscope.cli import main; main()", "serve",
                "--port", str(self.port), "--store", self.store, "--workers", str(self.workers),
                "--log-level", "warning", *self.extra]
        if self.keys_file is not None:
            args += ["--keys", str(self.keys_file)]
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, cwd=self.dir,
                                         start_new_session=True)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"turnscope serve exited: {self.log.read_text(errors='replace')}")
            try:
                if httpx.get(self.base_url + "/readyz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"turnscope serve not ready: {self.log.read_text(errors='replace')}")

    def stop(self, *, kill: bool = False) -> None:
        if self.proc is not None and self.proc.poll() is None:
            _kill_group(self.proc, signal.SIGKILL if kill else signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                _kill_group(self.proc, signal.SIGKILL)
                self.proc.wait(timeout=10)
        if kill and self.proc is not None:
            # SIGKILL leaves the workers' group members to die too; wait until the port is free
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                with socket.socket() as s:
                    if s.connect_ex(("127.0.0.1", self.port)) != 0:
                        break
                time.sleep(0.05)
        self.proc = None

    def restart(self, *, kill: bool = False) -> None:
        self.stop(kill=kill)
        self.start()

    def client(self, key: str | None = None, **kwargs: Any) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.base_url, headers=headers, timeout=60, **kwargs)

    def server_errors(self) -> str:
        """Tracebacks the server logged (a handled library fault logs one, too)."""
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return text if "Traceback" in text else ""


def run_conversation(client: httpx.Client, sid: str, turns: list[tuple[str, str]]) -> list[dict[str, Any]]:
    out = []
    for role, text in turns:
        r = client.post(f"/v1/sessions/{sid}/turns", json={"role": role, "content": text})
        assert r.status_code == 200, r.text
        out.append(r.json())
    return out


def reference_outputs(turns: list[tuple[str, str]], *, vocabulary: str = "cloud",
                      policy: str = "default") -> list[dict[str, Any]]:
    """What the library itself answers for the same turns, in one process, live."""
    import json

    import turnscope
    from turnscope.entities import bundled_vocabularies

    vocab = bundled_vocabularies() if vocabulary == "bundled" else turnscope.bundled_vocabulary(vocabulary)
    s = turnscope.Session(policy=policy, vocabulary=vocab)
    out: list[dict[str, Any]] = []
    for i, (role, text) in enumerate(turns, start=1):
        r = s.add(role, text)
        # through JSON, as the service's answers are
        out.append(json.loads(json.dumps({**r.to_output(), "turn": r.turn})) if r else {"turn": i})
    return out
