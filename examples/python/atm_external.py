"""The numpy aircraft model (aircraft_model.py) as an external block of an ATM TestBed
run: it joins the run's federation under its block's name, goes through the seven
states with the Rust blocks, publishes every aircraft's SNDEM track each simulated
second, and the Rust performance monitor measures its messages as it measures a
traffic block's: counts, lengths, latency, loss.

    glidepath run layouts/python-model.toml --transport nats --federation atm-python --hours 0.05 &
    GLIDEPATH_TRANSPORT=nats python3 examples/python/atm_external.py --federation atm-python

The protocol an external block follows is in layouts/README.md ("External blocks").
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))

import glidepath  # noqa: E402
from aircraft_model import Traffic  # noqa: E402

STATES = ("deployment", "startup", "initialization", "execution",
          "shutdown", "archival", "retirement")
PROTOCOL = 1


class Lifecycle(glidepath.FederateAmbassador):
    """Remembers what the run's manager and the RTI said: announced points (with
    their tags), synchronized points, and the time-management callbacks."""

    def __init__(self) -> None:
        self.announced: Dict[str, bytes] = {}
        self.synchronized: Dict[str, List[int]] = {}
        self.regulating = False
        self.constrained = False
        self.granted: Optional[float] = None

    def announce_synchronization_point(self, label: str, tag: bytes) -> None:
        self.announced[label] = tag

    def federation_synchronized(self, label: str, failed: List[int]) -> None:
        self.synchronized[label] = failed

    def time_regulation_enabled(self, time: float) -> None:
        self.regulating = True

    def time_constrained_enabled(self, time: float) -> None:
        self.constrained = True

    def time_advance_grant(self, time: float) -> None:
        self.granted = time


class ExternalBlock:
    """One external block: `tracks(t)` gives simulated second `t`'s tracks, each a
    dict of the SNDEM fields (vid, latDeg, lonDeg, altFt, gsKt, crsDeg, vsFpm)."""

    def __init__(self, fed: glidepath.Federate, amb: Lifecycle, name: str,
                 tracks: Callable[[int, dict], List[dict]], wait_s: float = 600.0) -> None:
        self.fed, self.amb, self.name, self.tracks = fed, amb, name, tracks
        self.wait_s = wait_s
        self.frame: dict = {}
        self.published = 0
        sndem = fed.get_interaction_class_handle("SndemMessage")
        report = fed.get_interaction_class_handle("BlockReport")
        self.sndem = (sndem, fed.get_parameter_handle(sndem, "vid"),
                      fed.get_parameter_handle(sndem, "message"))
        self.report = (report, fed.get_parameter_handle(report, "block"),
                       fed.get_parameter_handle(report, "published"))

    def until(self, what: str, done: Callable[[], bool]) -> None:
        """Evokes callbacks until `done()`; a run that never says it is an error."""
        deadline = time.monotonic() + self.wait_s
        while not done():
            if time.monotonic() > deadline:
                raise TimeoutError(f"block {self.name}: no {what} within {self.wait_s} s")
            self.fed.evoke(0.1)

    def run(self) -> int:
        """Goes through the seven states; returns how many messages it published."""
        for state in STATES:
            self.until(f"announcement of {state}", lambda: state in self.amb.announced)
            try:
                getattr(self, state)(self.amb.announced[state])
            except Exception:
                self.fed.synchronization_point_failed(state)
                raise
            self.fed.synchronization_point_achieved(state)
            self.until(f"synchronization of {state}", lambda: state in self.amb.synchronized)
            if self.amb.synchronized[state]:
                raise RuntimeError(f"{state} failed for federates {self.amb.synchronized[state]}")
        self.fed.resign_federation_execution()
        return self.published

    def deployment(self, tag: bytes) -> None:
        self.frame = json.loads(tag)
        if self.frame.get("protocol") != PROTOCOL:
            raise ValueError(f"external block protocol {self.frame.get('protocol')}, this block speaks {PROTOCOL}")
        if self.frame["codec"] != "json":
            raise ValueError(f"the run's codec is {self.frame['codec']}: this block writes SNDEM JSON only (--codec json)")

    def startup(self, _tag: bytes) -> None:
        self.fed.publish_interaction_class(self.sndem[0])
        self.fed.publish_interaction_class(self.report[0])

    def initialization(self, _tag: bytes) -> None:
        self.fed.enable_time_regulation(self.frame["lookahead_s"])
        self.until("time regulation", lambda: self.amb.regulating)
        self.fed.enable_time_constrained()
        self.until("time constrained", lambda: self.amb.constrained)

    def execution(self, _tag: bytes) -> None:
        cls, vid_h, msg_h = self.sndem
        day_ms = self.frame["day_start"] * 1000
        meta = {"src": self.name, "ver": "2.3", "run": self.frame["run"]}
        for t in range(self.frame["end_s"]):
            for track in self.tracks(t, self.frame):
                message = dict(track, time=day_ms + t * 1000,
                               meta=dict(meta, tpub=int(time.time() * 1000)))
                self.fed.send_interaction(cls, {
                    vid_h: track["vid"].encode(),
                    msg_h: json.dumps(message, separators=(",", ":")).encode(),
                })
                self.published += 1
            # Second t is sent: ask for t + 1 (the monitor's grant to t + 1 then
            # proves it has every message of second t).
            self.amb.granted = None
            self.fed.time_advance_request(t + 1)
            self.until(f"grant to {t + 1}", lambda: self.amb.granted is not None)

    def shutdown(self, _tag: bytes) -> None:
        self.fed.flush()
        cls, block_h, published_h = self.report
        self.fed.send_interaction(cls, {
            block_h: self.fed.encode_parameter(block_h, self.name),
            published_h: self.fed.encode_parameter(published_h, self.published),
        })
        self.fed.disable_time_regulation()

    def archival(self, _tag: bytes) -> None:
        pass

    def retirement(self, _tag: bytes) -> None:
        pass


def numpy_tracks(n: int, seed: int = 1) -> Callable[[int, dict], List[dict]]:
    """Second t's tracks of `n` aircraft flown by the vectorised model, one step a second."""
    traffic = Traffic(n, seed)

    def tracks(t: int, _frame: dict) -> List[dict]:
        if t > 0:
            traffic.step(1.0)
        return [
            {"vid": traffic.callsign[i], "latDeg": float(traffic.lat[i]),
             "lonDeg": float(traffic.lon[i]), "altFt": float(traffic.alt[i]),
             "gsKt": float(traffic.tas[i]), "crsDeg": float(traffic.hdg[i]),
             "vsFpm": float(traffic.vs[i])}
            for i in range(n)
        ]
    return tracks


def join(rti: glidepath.Rti, federation: str, name: str, amb: Lifecycle,
         wait_s: float = 120.0) -> glidepath.Federate:
    """Joins `federation` as `name`, waiting for the run's manager to start (it hosts
    the executive when none answers yet) and to create the federation."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return rti.join_federation_execution(federation, amb, name=name, federate_type="external")
        except (glidepath.FederationExecutionDoesNotExist, glidepath.RTIinternalError):
            # Not created yet, or no executive answers yet: the run is starting.
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--federation", required=True, help="the run's federation (glidepath run --federation)")
    p.add_argument("--block", default="numpy", help="the external block's name in the layout")
    p.add_argument("--aircraft", type=int, default=50)
    args = p.parse_args()
    rti = glidepath.Rti.from_env()
    amb = Lifecycle()
    fed = join(rti, args.federation, args.block, amb)
    published = ExternalBlock(fed, amb, args.block, numpy_tracks(args.aircraft)).run()
    print(f"block {args.block}: published {published} tracks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
