"""The examples a user copies (examples/python/): the numpy point-mass model's
traffic read into a pandas DataFrame in one process, and the Rust target generator's
aircraft, in its own process over NATS, read into a DataFrame by their FOM types."""

from __future__ import annotations

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
