#!/usr/bin/env python3
"""Derives data/recorded/switzerland-2018-08-01T1130Z.csv from a sample of the traffic library.

Usage: python3 scripts/derive-recorded-sample.py SWITZERLAND_JSON_GZ > data/recorded/switzerland-2018-08-01T1130Z.csv

SWITZERLAND_JSON_GZ is `src/traffic/data/samples/collections/switzerland.json.gz` of the
traffic library (github.com/xoolive/traffic, MIT licence; commit 8286f88e was used). It
holds ADS-B state vectors over Switzerland on 2018-08-01, from the OpenSky Network, one
every 10 s per aircraft, in traffic's units (altitude ft, groundspeed kt, track deg,
vertical_rate ft/min) with timestamps in Unix milliseconds.

This keeps the rows timed from 11:30:00Z (inclusive) to 11:40:00Z (exclusive), the
busiest ten minutes of the sample, in their order in the file, and writes them as CSV
with glidepath's column names. Values are written as the sample has them (Python's
shortest round-trip form of each number); nothing is rounded, filled or dropped.
"""
import gzip
import json
import sys

START_MS = 1533123000000  # 2018-08-01T11:30:00Z
END_MS = START_MS + 600_000  # ten minutes later
COLUMNS = ["timestamp", "icao24", "callsign", "latitude", "longitude",
           "altitude", "groundspeed", "track", "vertical_rate"]


def cell(value):
    if value is None:
        return ""
    return repr(value) if isinstance(value, float) else str(value)


def main(path):
    with gzip.open(path) as f:
        rows = json.load(f)
    out = sys.stdout
    out.write(",".join(COLUMNS) + "\n")
    for row in rows:
        if START_MS <= row["timestamp"] < END_MS:
            out.write(",".join(cell(row.get(c)) for c in COLUMNS) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
