"""The group-communication bus from Python: typed messages in the paper's XML,
subjects and patterns, service levels, membership, in one process and over a real
NATS server (with JetStream) across processes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import glidepath

HERE = Path(__file__).parent


def _events(sub, n, timeout=10.0):
    out = []
    for _ in range(n):
        e = sub.recv(timeout=timeout)
        assert e is not None, f"only {len(out)} of {n} events arrived"
        out.append(e)
    return out


def test_message_types_and_the_papers_xml():
    m = glidepath.BusMessage()
    m.set("key4", 12, type="I").set("key2", 1234.5, type="F")
    assert m.to_xml() == (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        "<msg>\n"
        '  <e key="key4" typ="I" val="12" />\n'
        '  <e key="key2" typ="F" val="1234.5" />\n'
        "</msg>"
    )
    # Types inferred from Python values, and kept when a key is set again.
    m = glidepath.BusMessage({"on": True, "n": 3, "x": 0.25, "name": "sat-1", "raw": b"\x00\xff"})
    assert [(k, t) for k, t, _ in m.entries()] == [
        ("on", "B"), ("n", "L"), ("x", "D"), ("name", "S"), ("raw", "X")
    ]
    m["n"] = 4
    assert m.type_of("n") == "L" and m["n"] == 4
    assert m.to_dict() == {"on": True, "n": 4, "x": 0.25, "name": "sat-1", "raw": b"\x00\xff"}
    # Both encodings round-trip, and equality is by value.
    assert glidepath.BusMessage.from_xml(m.to_xml()) == m
    assert glidepath.BusMessage.from_binary(m.to_binary()) == m
    assert len(m) == 5 and "raw" in m and "nope" not in m
    del m["raw"]
    assert len(m) == 4


def test_bad_messages_subjects_and_levels_raise_clear_errors():
    with pytest.raises(ValueError, match=r"line \d+"):
        glidepath.BusMessage.from_xml('<msg>\n  <e key="a" typ="I" val="1" />\n</msg>')
    with pytest.raises(ValueError, match="typ"):
        glidepath.BusMessage.from_xml(
            '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
            '<msg>\n  <e typ="I" key="a" val="1" />\n</msg>'
        )
    with pytest.raises(ValueError):
        glidepath.BusMessage.from_binary(b"\x01\x02\x03")
    with pytest.raises(OverflowError):
        glidepath.BusMessage().set("i", 2**40, type="I")
    with pytest.raises(ValueError, match="unknown value type"):
        glidepath.BusMessage().set("i", 1, type="Q")
    with pytest.raises(TypeError):
        glidepath.BusMessage({"l": [1, 2]})
    with pytest.raises(ValueError, match="empty"):
        glidepath.BusMessage().set("", 1)
    bus = glidepath.Bus(group="ERRS")
    with pytest.raises(ValueError, match="lower"):
        bus.publish("GOOD.lower", {"a": 1})
    with pytest.raises(ValueError, match="unknown service level"):
        bus.publish("GOOD.X", {"a": 1}, level="sometimes")
    with pytest.raises(TypeError):
        bus.publish("GOOD.X", [1, 2])
    with pytest.raises(ValueError):
        glidepath.Bus(transport="carrier-pigeon")
    bus.close()


def test_in_process_patterns_fifo_order_and_membership():
    a = glidepath.Bus(name="a", group="PYFIFO")
    b = glidepath.Bus(name="b", group="PYFIFO")
    members = a.join("PYFIFO")
    joined = members.recv(timeout=5)
    assert isinstance(joined, glidepath.BusMembership)
    assert (joined.kind, joined.member, joined.name) == ("joined", a.member, "a")
    one = a.subscribe("SAT.*.POS")
    deep = a.subscribe("SAT.>")
    b_members = b.join("PYFIFO")
    seen = members.recv(timeout=5)
    assert (seen.kind, seen.member, seen.name) == ("joined", b.member, "b")

    for i in range(1000):
        b.publish("SAT.S1.POS", glidepath.BusMessage().set("i", i, type="I"), level="fifo")
    b.publish("SAT.S1.POS.EXTRA", {"i": -1})
    got = _events(one, 1000)
    assert [d.message["i"] for d in got] == list(range(1000))
    d = got[0]
    assert isinstance(d, glidepath.BusDelivery)
    assert (d.group, d.subject, d.level, d.sender) == ("PYFIFO", "SAT.S1.POS", "fifo", b.member)
    assert d.encoded_bytes > 0 and d.publish_time_ns > 0 and d.group_seq is None
    assert one.try_recv() is None  # the longer subject does not match `*`
    assert [e.message["i"] for e in _events(deep, 1001)][-1] == -1
    # The group member sees everything sent to the group.
    assert len([e for e in _events(members, 1001) if isinstance(e, glidepath.BusDelivery)]) == 1001

    b_members.close()
    b.close()
    left = members.recv(timeout=5)
    assert (left.kind, left.member) == ("left", b.member)
    with pytest.raises(glidepath.BusError, match="closed"):
        b_members.recv(timeout=0)
    # A timeout that is no duration is the caller's mistake: ValueError, before waiting.
    for bad in (-1.0, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="timeout must be a finite number of seconds >= 0"):
            one.recv(timeout=bad)
    assert a.stats() == {"malformed": 0, "lost": 0, "order_violations": 0, "repaired": 0}
    a.close()


def test_agreed_over_nats_one_order_at_every_member_across_processes(nats_js_url):
    group = "PYAGREED"
    a = glidepath.Bus(transport="nats", nats_url=nats_js_url, name="a", group=group)
    b = glidepath.Bus(transport="nats", nats_url=nats_js_url, name="b", group=group)
    assert a.transport == "nats"
    sub_a = a.subscribe("P.>")
    sub_b = b.subscribe("P.>")
    count = 500
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "bus_publisher.py"), nats_js_url, group, "agreed", str(count)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # Meanwhile this process publishes too: two senders interleave in one total order.
    for i in range(count):
        a.publish("P.Y", glidepath.BusMessage().set("i", i, type="I"), level="agreed")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    publisher = int(out.strip())

    got_a = _events(sub_a, 2 * count, timeout=20)
    got_b = _events(sub_b, 2 * count, timeout=20)
    order_a = [(d.sender, d.message["i"], d.group_seq) for d in got_a]
    order_b = [(d.sender, d.message["i"], d.group_seq) for d in got_b]
    assert order_a == order_b  # the same total order at both members
    seqs = [s for _, _, s in order_a]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    for sender in (a.member, publisher):
        assert [i for s, i, _ in order_a if s == sender] == list(range(count))
    assert {d.message["who"] for d in got_a if d.sender == publisher} == {"python-process"}
    for bus in (a, b):
        assert bus.stats() == {"malformed": 0, "lost": 0, "order_violations": 0, "repaired": 0}
        bus.close()


def test_nats_without_a_server_says_so():
    with pytest.raises(glidepath.BusError, match="nats"):
        glidepath.Bus(transport="nats", nats_url="nats://127.0.0.1:9")


def test_the_bus_module_and_every_service_level_in_process():
    from glidepath import bus

    assert bus.Message is glidepath.BusMessage and bus.Bus is glidepath.Bus
    sender = bus.Bus(name="s", group="PYLEVELS")
    receiver = bus.Bus(name="r", group="PYLEVELS")
    sub = receiver.subscribe("L.>")
    for n, level in enumerate(bus.SERVICE_LEVELS):
        sender.publish(f"L.{level.upper()}", {"n": n, "level": level}, level=level)
    got = _events(sub, len(bus.SERVICE_LEVELS))
    # One sender, in one process: every level arrives, in the order sent.
    assert [(d.level, d.subject, d.message.to_dict()) for d in got] == [
        (level, f"L.{level.upper()}", {"n": n, "level": level})
        for n, level in enumerate(bus.SERVICE_LEVELS)
    ]
    ordered = [d.group_seq for d in got if d.level in ("agreed", "safe")]
    assert all(s is not None for s in ordered) and ordered == sorted(ordered)
    # Every type letter holds its Python type.
    m = bus.Message()
    samples = {"I": 7, "F": 0.5, "D": 0.1, "L": 2**40, "B": False, "S": "x", "X": b"\x01"}
    for letter, value in samples.items():
        m.set(letter, value, type=letter)
    for letter, kind in bus.VALUE_TYPES.items():
        assert m.type_of(letter) == letter and type(m[letter]) is kind
    assert bus.Message.from_xml(m.to_xml()) == m
    sender.close()
    receiver.close()
