"""A federate ambassador that keeps every callback, for the tests of services whose
callbacks are many (ownership, save and restore): `named(NAME)` lists the arguments of
each call of one, and `evoke_until` evokes until one arrives."""

from __future__ import annotations

import threading
import time

import glidepath


class Recorder(glidepath.FederateAmbassador):
    """Keeps every callback as (name, args); `event` is set at each."""

    def __init__(self) -> None:
        self.calls: list = []
        self.event = threading.Event()

    def __getattribute__(self, name):
        attr = object.__getattribute__(self, name)
        if name.startswith("_") or not hasattr(glidepath.FederateAmbassador, name):
            return attr
        calls = object.__getattribute__(self, "calls")
        event = object.__getattribute__(self, "event")

        def record(*args):
            calls.append((name, args))
            event.set()

        return record

    def named(self, name: str) -> list:
        return [args for n, args in self.calls if n == name]


def evoke_until(fed, amb: Recorder, name: str, count: int = 1) -> tuple:
    """Evokes until the `count`th `name` callback; returns its arguments."""
    deadline = time.monotonic() + 20
    while len(amb.named(name)) < count:
        assert time.monotonic() < deadline, f"no {name} in {[n for n, _ in amb.calls]}"
        fed.evoke(0.05)
    return amb.named(name)[count - 1]
