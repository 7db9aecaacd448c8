"""The Python side of the lock-step runs: the same protocol as the Rust peer
(crates/glidepath-py/src/rust_peer.rs) with BenchObject.payloadTso."""

from __future__ import annotations

import struct
import threading
import time
from typing import Callable

import glidepath

WAIT_S = 30.0


class Lockstep(glidepath.FederateAmbassador):
    """Records what the lock-step protocol needs; wakes waiters on every callback."""

    def __init__(self) -> None:
        self.changed = threading.Condition()
        self.regulating = False
        self.constrained = False
        self.discovered: list[int] = []
        self.granted: float | int | None = None
        self.step = 0
        self.matched = 0
        self.payload_tso = -1

    def _notify(self) -> None:
        with self.changed:
            self.changed.notify_all()

    def time_regulation_enabled(self, time):
        self.regulating = True
        self._notify()

    def time_constrained_enabled(self, time):
        self.constrained = True
        self._notify()

    def discover_object_instance(self, instance, object_class, name, producer):
        self.discovered.append(instance)
        self._notify()

    def reflect_attribute_values(self, instance, object_class, values, tag, info):
        (value,) = struct.unpack(">d", values[self.payload_tso])
        if value == self.step and info.time == self.step and info.received_order == "timestamp":
            self.matched += 1
        self._notify()

    def time_advance_grant(self, time):
        self.granted = time
        self._notify()


def wait_until(fed: glidepath.Federate, amb: Lockstep, done: Callable[[], bool], what: str) -> None:
    """Waits for `done` (evoking in the evoked model), failing after WAIT_S."""
    deadline = time.monotonic() + WAIT_S
    while not done():
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"no {what} within {WAIT_S} s")
        if fed.process_model == glidepath.ProcessModel.EVOKED:
            fed.evoke(min(left, 0.5))
        else:
            with amb.changed:
                amb.changed.wait_for(done, timeout=min(left, 0.5))


def run(fed: glidepath.Federate, amb: Lockstep, steps: int) -> None:
    """Regulating (lookahead 1) and constrained; at step k updates payloadTso = k at
    time k, requests k and waits for the grant."""
    cls = fed.get_object_class_handle("BenchObject")
    amb.payload_tso = fed.get_attribute_handle(cls, "payloadTso")
    fed.publish_object_class_attributes(cls, [amb.payload_tso])
    fed.subscribe_object_class_attributes(cls, [amb.payload_tso])
    fed.enable_time_regulation(1.0)
    wait_until(fed, amb, lambda: amb.regulating, "time_regulation_enabled")
    fed.enable_time_constrained()
    wait_until(fed, amb, lambda: amb.constrained, "time_constrained_enabled")
    instance = fed.register_object_instance(cls)
    wait_until(fed, amb, lambda: bool(amb.discovered), "discovery of the peer's object")
    for k in range(1, steps + 1):
        amb.step = k
        fed.update_attribute_values(instance, {amb.payload_tso: struct.pack(">d", k)}, time=float(k))
        fed.time_advance_request(float(k))
        wait_until(fed, amb, lambda: amb.granted == k, f"grant at {k}")
        assert fed.query_logical_time() == k
