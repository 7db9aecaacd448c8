"""Reads the Aircraft states of a running federation into a pandas DataFrame, one
row per update, each attribute decoded by its FOM data type: a notebook's first cell.

    GLIDEPATH_TRANSPORT=nats GLIDEPATH_FEDERATION=glidepath-tg \\
        python3 examples/python/states_to_pandas.py 10   # seconds to record

It reads the target generator's aircraft (`glidepath tg --transport nats`), the numpy
model's (aircraft_model.py) or any other federate's.
"""

from __future__ import annotations

import os
import sys
import time

import pandas as pd

import glidepath

COLUMNS = ("callsign", "latitudeDeg", "longitudeDeg", "altitudeFt", "groundSpeedKt",
           "courseDeg", "trackTime")


class StateRecorder(glidepath.FederateAmbassador):
    """Collects every reflected Aircraft state as a row."""

    def __init__(self) -> None:
        self.fed: glidepath.Federate | None = None
        self.names: dict[int, str] = {}  # attribute handle -> attribute name
        self.callsigns: dict[int, str] = {}  # instance -> callsign
        self.rows: list[dict] = []

    def subscribe(self, fed: glidepath.Federate) -> None:
        self.fed = fed
        aircraft = fed.get_object_class_handle("Aircraft")
        self.names = {fed.get_attribute_handle(aircraft, n): n for n in COLUMNS}
        fed.subscribe_object_class_attributes(aircraft, list(self.names))
        # Joined late? Ask the owners for what we missed (the callsign comes with an
        # instance's first update only).
        fed.request_class_attribute_value_update(aircraft, list(self.names))

    def reflect_attribute_values(self, instance, object_class, values, tag, info):
        row = {self.names[h]: self.fed.decode_attribute(h, v)
               for h, v in values.items() if h in self.names}
        if "callsign" in row:
            self.callsigns[instance] = row["callsign"]
        row["callsign"] = self.callsigns.get(instance)
        row["instance"] = instance
        self.rows.append(row)

    def dataframe(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows, columns=["instance", *COLUMNS])


def record(fed: glidepath.Federate, recorder: StateRecorder, seconds: float) -> pd.DataFrame:
    """Evokes callbacks for `seconds` and returns what arrived as a DataFrame."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        fed.evoke(0.05)
    return recorder.dataframe()


def main() -> int:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
    rti = glidepath.Rti.from_env()
    federation = os.environ.get("GLIDEPATH_FEDERATION", "python-traffic")
    recorder = StateRecorder()
    fed = rti.join_federation_execution(federation, recorder, name="pandas-reader")
    recorder.subscribe(fed)
    frame = record(fed, recorder, seconds)
    fed.resign_federation_execution()
    print(frame.groupby("callsign").agg(updates=("trackTime", "size"),
                                         altitude_ft=("altitudeFt", "last")).head(20))
    return 0


if __name__ == "__main__":
    sys.exit(main())
