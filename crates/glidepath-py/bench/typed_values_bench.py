"""Typed values from Python: the cost of Federate.encode/decode against the pure-Python
peer (struct, and a hand-written encoder of the same record), in the same run.

    maturin develop --release   # in crates/glidepath-py
    python crates/glidepath-py/bench/typed_values_bench.py [--repeat 200000]
"""

from __future__ import annotations

import argparse
import struct
import timeit
from pathlib import Path

import glidepath

REPO = Path(__file__).resolve().parents[3]
META = {"src": "tg", "ver": 3, "run": "run-7", "tpub": 1_700_000_000_000_000}


def pure_python_track_metadata(m: dict) -> bytes:
    """TrackMetadata by hand: two HLAunicodeStrings, an int32, an int64 padded to 8."""
    out = bytearray()

    def unicode(s: str) -> None:
        units = s.encode("utf-16-be")
        out.extend(struct.pack(">i", len(units) // 2))
        out.extend(units)

    def pad(boundary: int) -> None:
        out.extend(b"\0" * (-len(out) % boundary))

    unicode(m["src"])
    pad(4)
    out.extend(struct.pack(">i", m["ver"]))
    unicode(m["run"])
    pad(8)
    out.extend(struct.pack(">q", m["tpub"]))
    return bytes(out)


def best(stmt, repeat: int) -> float:
    """Nanoseconds per call, the best of five runs."""
    return min(timeit.repeat(stmt, number=repeat, repeat=5)) / repeat * 1e9


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=200_000)
    args = parser.parse_args()
    rti = glidepath.Rti()
    rti.create_federation_execution("bench", [str(REPO / "foms" / "air-traffic.xml")])
    fed = rti.join_federation_execution("bench", glidepath.FederateAmbassador(), name="bench")
    aircraft = fed.get_object_class_handle("Aircraft")
    altitude = fed.get_attribute_handle(aircraft, "altitudeFt")
    assert fed.encode("TrackMetadata", META) == pure_python_track_metadata(META)
    meta_bytes = pure_python_track_metadata(META)
    rows = [
        ("HLAfloat64BE encode", lambda: fed.encode("HLAfloat64BE", 1.5), lambda: struct.pack(">d", 1.5)),
        ("HLAfloat64BE encode_attribute", lambda: fed.encode_attribute(altitude, 1.5), lambda: struct.pack(">d", 1.5)),
        ("HLAfloat64BE decode", lambda: fed.decode("HLAfloat64BE", b"\x3f\xf8\0\0\0\0\0\0"),
         lambda: struct.unpack(">d", b"\x3f\xf8\0\0\0\0\0\0")[0]),
        ("TrackMetadata encode", lambda: fed.encode("TrackMetadata", META), lambda: pure_python_track_metadata(META)),
        ("TrackMetadata decode", lambda: fed.decode("TrackMetadata", meta_bytes), None),
    ]
    print(f"{'':34} {'glidepath':>12} {'pure Python':>12} {'ratio':>7}")
    for name, ours, peer in rows:
        a = best(ours, args.repeat)
        if peer is None:
            print(f"{name:34} {a:10.0f} ns {'–':>12} {'–':>7}")
            continue
        b = best(peer, args.repeat)
        print(f"{name:34} {a:10.0f} ns {b:9.0f} ns {a / b:7.2f}")
    fed.resign_federation_execution()
    rti.destroy_federation_execution("bench")


if __name__ == "__main__":
    main()
