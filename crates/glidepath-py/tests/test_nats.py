"""Python and Rust federates in separate processes over a real NATS server."""

from __future__ import annotations

import struct
import subprocess
import sys
import threading
from pathlib import Path

import glidepath
import lockstep

STEPS = 50
HERE = Path(__file__).parent


def _peer(rust_peer, nats_url, *args):
    return subprocess.Popen(
        [rust_peer, *args, "--transport", "nats", "--nats-url", nats_url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_lockstep_with_rust_process_over_nats(fom, nats_url, rust_peer):
    rti = glidepath.Rti(transport="nats", nats_url=nats_url)
    assert rti.transport == "nats"
    executive = rti.ensure_executive()
    assert executive is not None  # nobody else hosts one on this fresh server
    rti.create_federation_execution("lockstep", [fom])
    amb = lockstep.Lockstep()
    fed = rti.join_federation_execution("lockstep", amb, name="python")
    peer = _peer(rust_peer, nats_url, "lockstep", "lockstep", str(STEPS))
    try:
        lockstep.run(fed, amb, STEPS)
        out, err = peer.communicate(timeout=60)
    finally:
        peer.kill()
    assert peer.returncode == 0, err
    assert out.strip() == f"grants={STEPS} matched={STEPS} last_grant={STEPS}"
    assert amb.matched == STEPS
    fed.resign_federation_execution()
    rti.destroy_federation_execution("lockstep")
    executive.close()


class Tail(glidepath.FederateAmbassador):
    """Counts updates on the RTI thread (immediate model); `done` at the last one."""

    def __init__(self):
        self.last = None
        self.count = 0
        self.done = threading.Event()

    def reflect_attribute_values(self, instance, object_class, values, tag, info):
        (self.last,) = struct.unpack(">Q", next(iter(values.values())))
        self.count += 1
        if self.last == 2**64 - 1:
            self.done.set()


def test_killed_python_federate_does_not_hang_the_others(fom, nats_url, rust_peer):
    # More than the dead receiver can take in without evoking (its callback backlog
    # of 131,072, its inbox and the reliable window of 16,384), so the sender must wait
    # on it and then give it up.
    updates = 400_000
    rti = glidepath.Rti(transport="nats", nats_url=nats_url)
    executive = rti.ensure_executive()
    rti.create_federation_execution("kill", [fom])
    tail = Tail()
    watcher = rti.join_federation_execution(
        "kill", tail, name="watcher", process_model=glidepath.ProcessModel.IMMEDIATE
    )
    cls = watcher.get_object_class_handle("BenchObject")
    watcher.subscribe_object_class_attributes(cls, [watcher.get_attribute_handle(cls, "payload")])

    doomed = subprocess.Popen(
        [sys.executable, str(HERE / "killed_subscriber.py"), nats_url, "kill"],
        stdout=subprocess.PIPE,
        text=True,
    )
    peer = _peer(rust_peer, nats_url, "flood", "kill", str(updates))
    try:
        assert doomed.stdout.readline().strip() == "ready"
        doomed.kill()
        doomed.wait(timeout=30)
        # The Rust federate finishes its flood although a receiver died mid-run.
        out, err = peer.communicate(timeout=120)
        assert peer.returncode == 0, err
        sent, given_up = (int(kv.split("=")[1]) for kv in out.split())
        assert sent == updates + 1
        # Its transport stopped waiting for the dead receiver (instead of hanging).
        assert given_up >= 1
        # And the surviving Python federate receives everything up to the last update.
        assert tail.done.wait(timeout=60)
        assert tail.count == updates + 1
    finally:
        doomed.kill()
        peer.kill()
    watcher.resign_federation_execution()
    executive.close()
