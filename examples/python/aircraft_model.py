"""A vectorised point-mass aircraft model in numpy (BlueSky's style: one array per
state variable, every aircraft stepped at once) that publishes its traffic as the
air-traffic FOM's Aircraft objects, each attribute in its FOM data type.

    python3 examples/python/aircraft_model.py            # 100 aircraft, 60 steps, in-process
    GLIDEPATH_TRANSPORT=nats python3 examples/python/aircraft_model.py  # to a NATS federation

Any federate subscribed to Aircraft sees these aircraft: a Rust one with
`Fom::decode_value`, a Python one with `Federate.decode_attribute` (see
states_to_pandas.py).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

import glidepath

REPO = Path(__file__).resolve().parents[2]
FOM = str(REPO / "foms" / "air-traffic.xml")
EARTH_RADIUS_M = 6_371_000.0
KT_TO_MS = 0.514444
FT_TO_M = 0.3048


class Traffic:
    """The state of every aircraft, one array per variable."""

    def __init__(self, n: int, seed: int = 1) -> None:
        rng = np.random.default_rng(seed)
        self.callsign = [f"PY{i:04d}" for i in range(n)]
        self.lat = rng.uniform(45.5, 47.5, n)  # degrees
        self.lon = rng.uniform(6.0, 10.0, n)
        self.alt = rng.uniform(10_000.0, 38_000.0, n)  # ft
        self.tas = rng.uniform(250.0, 480.0, n)  # kt
        self.hdg = rng.uniform(0.0, 360.0, n)  # degrees true
        self.vs = rng.choice([-1500.0, 0.0, 1500.0], n)  # ft/min
        self.turn = rng.uniform(-1.5, 1.5, n)  # degrees per second

    def step(self, dt: float) -> None:
        """Point-mass kinematics on a sphere, every aircraft at once."""
        self.hdg = (self.hdg + self.turn * dt) % 360.0
        distance = self.tas * KT_TO_MS * dt
        hdg = np.radians(self.hdg)
        self.lat = self.lat + np.degrees(distance * np.cos(hdg) / EARTH_RADIUS_M)
        self.lon = self.lon + np.degrees(
            distance * np.sin(hdg) / (EARTH_RADIUS_M * np.cos(np.radians(self.lat)))
        )
        self.alt = np.clip(self.alt + self.vs * dt / 60.0, 1_000.0, 41_000.0)


class Publisher:
    """Registers one Aircraft instance per aircraft and publishes its state."""

    ATTRIBUTES = ("callsign", "latitudeDeg", "longitudeDeg", "altitudeFt",
                  "groundSpeedKt", "courseDeg", "verticalSpeedFpm", "trackTime")

    def __init__(self, fed: glidepath.Federate, traffic: Traffic) -> None:
        self.fed = fed
        self.traffic = traffic
        aircraft = fed.get_object_class_handle("Aircraft")
        self.h = {name: fed.get_attribute_handle(aircraft, name) for name in self.ATTRIBUTES}
        fed.publish_object_class_attributes(aircraft, list(self.h.values()))
        self.instances = [fed.register_object_instance(aircraft) for _ in traffic.callsign]
        self.time_us = 0

    def publish(self) -> None:
        t, h, enc = self.traffic, self.h, self.fed.encode_attribute
        for i, instance in enumerate(self.instances):
            self.fed.update_attribute_values(instance, {
                h["callsign"]: enc(h["callsign"], t.callsign[i]),
                h["latitudeDeg"]: enc(h["latitudeDeg"], t.lat[i]),
                h["longitudeDeg"]: enc(h["longitudeDeg"], t.lon[i]),
                h["altitudeFt"]: enc(h["altitudeFt"], t.alt[i]),
                h["groundSpeedKt"]: enc(h["groundSpeedKt"], t.tas[i]),
                h["courseDeg"]: enc(h["courseDeg"], t.hdg[i]),
                h["verticalSpeedFpm"]: enc(h["verticalSpeedFpm"], t.vs[i]),
                h["trackTime"]: enc(h["trackTime"], self.time_us),
            })


def run(fed: glidepath.Federate, n: int = 100, steps: int = 60, dt: float = 1.0) -> Traffic:
    """Flies `n` aircraft for `steps` steps of `dt` seconds, publishing each step."""
    traffic = Traffic(n)
    publisher = Publisher(fed, traffic)
    for _ in range(steps):
        publisher.publish()
        traffic.step(dt)
        publisher.time_us += int(dt * 1e6)
    return traffic


def main() -> int:
    rti = glidepath.Rti.from_env()
    rti.ensure_executive()
    federation = os.environ.get("GLIDEPATH_FEDERATION", "python-traffic")
    try:
        rti.create_federation_execution(federation, [FOM])
    except glidepath.FederationExecutionAlreadyExists:
        pass
    fed = rti.join_federation_execution(federation, glidepath.FederateAmbassador(), name="numpy-model")
    traffic = run(fed)
    print(f"published {len(traffic.callsign)} aircraft; mean altitude {traffic.alt.mean():.0f} ft")
    fed.resign_federation_execution()
    return 0


if __name__ == "__main__":
    sys.exit(main())
