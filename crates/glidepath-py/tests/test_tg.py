"""glidepath.tg: a Python station of the Rust target generator (glidepath tg) over
NATS — its aircraft read, a pilot command acknowledged, a refusal with its reason,
the run paused, resumed and stopped from Python — and the command and
acknowledgement encodings on their own."""

from __future__ import annotations

import os
import struct
import subprocess
import time

import pytest

import glidepath
from glidepath.tg import TargetGenerator, decode_ack, encode_command
from test_examples import glidepath_binary


def test_a_command_encodes_as_the_target_generator_reads_it():
    data = encode_command(7, "UAL101", "heading", 270)
    assert data == struct.pack(">Q", 7) + struct.pack(">Q", 6) + b"UAL101" + b"\x01" \
        + struct.pack(">d", 270.0)
    direct = encode_command(8, "N1", "direct", "KSEA")
    assert direct.endswith(b"\x04" + struct.pack(">Q", 4) + b"KSEA")
    assert encode_command(9, "N1", "resume").endswith(b"\x05")
    for bad in [("N1", "warp", 1), ("", "heading", 1), ("N1", "heading", "fast"),
                ("N1", "heading", True), ("N1", "direct", 3), ("N1", "resume", 2)]:
        with pytest.raises(ValueError):
            encode_command(1, *bad)


def test_an_acknowledgement_decodes_and_garbage_raises():
    applied = struct.pack(">Q", 3) + struct.pack(">Q", 2) + b"N1" + struct.pack(">Q", 42) + b"\x00"
    assert decode_ack(applied) == {"id": 3, "callsign": "N1", "frame": 42,
                                   "outcome": "applied", "reason": None}
    refused = applied[:-1] + b"\x01" + struct.pack(">Q", 2) + b"N1"
    assert decode_ack(refused)["outcome"] == "unknown_aircraft"
    for garbage in [applied[:-1], applied + b"\x00", applied[:-1] + b"\x09", b""]:
        with pytest.raises(ValueError):
            decode_ack(garbage)


def join_station(rti, tg) -> TargetGenerator:
    """Joins once the target generator has created its federation (bounded)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            return TargetGenerator(rti, federation="glidepath-tg", name="py-station")
        except (glidepath.FederationExecutionDoesNotExist, glidepath.RTIexception):
            assert tg.poll() is None, tg.stderr.read().decode()
            assert time.monotonic() < deadline, "the target generator's federation never appeared"
            time.sleep(0.2)


def wait_for(station: TargetGenerator, what: str, check, seconds: float = 20.0):
    deadline = time.monotonic() + seconds
    while True:
        station.poll(0.1)
        got = check()
        if got:
            return got
        assert time.monotonic() < deadline, f"{what} within {seconds} s"


def test_a_python_station_reads_commands_and_controls_the_rust_target_generator(nats_url):
    tg = subprocess.Popen(
        [glidepath_binary(), "tg", "--transport", "nats", "--nats-url", nats_url,
         "--scenario", "demo", "--rate", "20", "--seconds", "120"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env={**os.environ, "GLIDEPATH_TRANSPORT": "nats"},
    )
    try:
        station = join_station(glidepath.Rti(transport="nats", nats_url=nats_url), tg)
        planes = wait_for(station, "the demo's 8 aircraft",
                          lambda: a if len(a := station.aircraft()) == 8 else None)
        assert "UAL101" in planes
        ual = planes["UAL101"]
        assert -1_000 < ual["altitudeFt"] < 60_000 and 0 <= ual["headingDeg"] < 360

        # A command applied at a frame, a refusal with its reason.
        ack = station.wait_ack(station.command("UAL101", "heading", 90))
        assert ack is not None and ack["outcome"] == "applied" and ack["frame"] > 0, ack
        refused = station.wait_ack(station.command("NOPE1", "altitude", 10_000))
        assert refused["outcome"] == "unknown_aircraft", refused

        # Paused: the states stop moving; resumed: they move again.
        station.pause()
        time_of = lambda: station.aircraft()["UAL101"]["trackTime"]  # noqa: E731
        station.poll(1.0)
        frozen = time_of()
        station.poll(1.0)
        assert time_of() == frozen, "no new state while paused"
        station.resume()
        wait_for(station, "states again after resume", lambda: time_of() > frozen)
        # Another scenario cannot be loaded over NATS: the run says so and goes on.
        station.load("us-400")
        moving = time_of()
        wait_for(station, "the run going on after a refused load", lambda: time_of() > moving)
        assert len(station.aircraft()) == 8
        with pytest.raises(ValueError):
            station.rate(-1)
        with pytest.raises(ValueError):
            station.load("two words")
        assert station.malformed == 0

        station.stop()
        station.close()
        assert tg.wait(timeout=30) == 0, tg.stderr.read().decode()
    finally:
        if tg.poll() is None:
            tg.kill()
        tg.wait()
