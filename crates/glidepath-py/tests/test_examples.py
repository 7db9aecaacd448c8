"""The examples a user copies (examples/python/): the numpy point-mass model's
traffic read into a pandas DataFrame in one process; the Rust target generator's
aircraft, in its own process over NATS, read into a DataFrame by their FOM types; and
the numpy model as an external block of an ATM TestBed run, measured by the Rust
performance monitor."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import glidepath

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "examples" / "python"))

import aircraft_model  # noqa: E402
import atm_external  # noqa: E402
import states_to_pandas  # noqa: E402


def test_the_numpy_models_traffic_reads_into_a_dataframe():
    rti = glidepath.Rti()
    rti.create_federation_execution("numpy", [aircraft_model.FOM])
    recorder = states_to_pandas.StateRecorder()
    reader = rti.join_federation_execution("numpy", recorder, name="reader")
    recorder.subscribe(reader)
    model = rti.join_federation_execution("numpy", glidepath.FederateAmbassador(), name="model")
    n, steps, dt = 20, 10, 2.0
    traffic = aircraft_model.run(model, n=n, steps=steps, dt=dt)
    deadline = time.monotonic() + 30
    while len(recorder.rows) < n * steps and time.monotonic() < deadline:
        reader.evoke(0.05)
    frame = recorder.dataframe()
    assert len(frame) == n * steps
    assert sorted(frame["callsign"].unique()) == sorted(traffic.callsign)
    # Each aircraft moved as its speed says between two updates: great-circle
    # distance of successive positions against ground speed × dt.
    for _, track in frame.groupby("callsign"):
        lat, lon = np.radians(track["latitudeDeg"].to_numpy()), np.radians(track["longitudeDeg"].to_numpy())
        a = (np.sin(np.diff(lat) / 2) ** 2
             + np.cos(lat[:-1]) * np.cos(lat[1:]) * np.sin(np.diff(lon) / 2) ** 2)
        moved_m = 2 * aircraft_model.EARTH_RADIUS_M * np.arcsin(np.sqrt(a))
        expected_m = track["groundSpeedKt"].to_numpy()[:-1] * aircraft_model.KT_TO_MS * dt
        assert np.allclose(moved_m, expected_m, rtol=1e-3), (moved_m, expected_m)
        assert (np.diff(track["trackTime"].to_numpy()) == int(dt * 1e6)).all()
    for fed in (reader, model):
        fed.resign_federation_execution()
    rti.destroy_federation_execution("numpy")


def glidepath_binary() -> str:
    path = os.environ.get("GLIDEPATH_BIN") or str(
        Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target")) / "debug" / "glidepath")
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"{path} not found: cargo build -p glidepath-cli (bash scripts/test.sh builds it), or set GLIDEPATH_BIN")
    return path


def test_the_rust_target_generators_aircraft_read_into_a_dataframe_over_nats(nats_url):
    tg = subprocess.Popen(
        [glidepath_binary(), "tg", "--transport", "nats", "--nats-url", nats_url,
         "--scenario", "demo", "--rate", "10", "--seconds", "20"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ, "GLIDEPATH_TRANSPORT": "nats"},
    )
    try:
        rti = glidepath.Rti(transport="nats", nats_url=nats_url)
        recorder = states_to_pandas.StateRecorder()
        deadline = time.monotonic() + 60
        while True:  # the target generator creates its federation when it starts
            try:
                reader = rti.join_federation_execution("glidepath-tg", recorder, name="pandas")
                break
            except (glidepath.FederationExecutionDoesNotExist, glidepath.RTIexception):
                assert tg.poll() is None, tg.stderr.read().decode()
                assert time.monotonic() < deadline, "the target generator's federation never appeared"
                time.sleep(0.2)
        recorder.subscribe(reader)
        frame = states_to_pandas.record(reader, recorder, 4.0)
        reader.resign_federation_execution()
    finally:
        tg.kill()
        tg.wait()
    assert len(frame) > 0, "no state arrived"
    # The demo scenario's eight aircraft, each named by its HLAunicodeString callsign
    # (sent with an instance's first state; joining late, the reader asked the nodes
    # for it with request_class_attribute_value_update) and at a plausible altitude.
    named = frame.dropna(subset=["callsign"])
    assert named["callsign"].nunique() == 8, named["callsign"].unique()
    assert named["callsign"].str.match(r"^[A-Z0-9]+$").all(), named["callsign"].unique()
    assert frame["altitudeFt"].between(-1_000, 60_000).all()
    assert frame["trackTime"].is_monotonic_increasing or frame.groupby("instance")["trackTime"].apply(
        lambda s: s.is_monotonic_increasing).all()


def test_the_numpy_model_as_an_external_block_is_measured_by_the_rust_monitor(nats_url, tmp_path):
    """`glidepath run layouts/python-model.toml` (the Rust simulation manager and
    performance monitor, in their own process) with examples/python/atm_external.py's
    ExternalBlock joined from here: every track the numpy model published reaches
    the monitor and is counted in its report."""
    report_dir = tmp_path / "report"
    run = subprocess.Popen(
        [glidepath_binary(), "run", str(REPO / "layouts" / "python-model.toml"),
         "--transport", "nats", "--nats-url", nats_url, "--federation", "atm-python",
         "--hours", "0.02", "--run-name", "py", "--report", str(report_dir)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    try:
        rti = glidepath.Rti(transport="nats", nats_url=nats_url)
        amb = atm_external.Lifecycle()
        fed = atm_external.join(rti, "atm-python", "numpy", amb, wait_s=60)
        n = 20
        block = atm_external.ExternalBlock(fed, amb, "numpy", atm_external.numpy_tracks(n), wait_s=120)
        published = block.run()
        out, err = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert run.returncode == 0, err.decode()
    assert block.frame["run"] == "py" and block.frame["codec"] == "json"
    seconds = block.frame["end_s"]
    assert seconds == 72, "0.02 h"
    assert published == n * seconds
    report = json.loads((report_dir / "report.json").read_text())
    (numpy,) = [s for s in report["sources"] if s["block"] == "numpy"]
    assert numpy["kind"] == "external" and numpy["published"] == published
    assert report["published"] == published
    assert report["received"] == published, "every numpy track reached the Rust monitor"
    assert report["lost"] == 0 and report["malformed"] == 0 and report["duplicated"] == 0
    assert report["peak_flights"] == n
