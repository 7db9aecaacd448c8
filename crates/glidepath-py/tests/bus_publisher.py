"""A bus member in a process of its own: publishes COUNT numbered messages at LEVEL
on P.X over NATS, then closes (what it published goes out first)."""

from __future__ import annotations

import sys

import glidepath


def main() -> None:
    url, group, level, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    with glidepath.Bus(transport="nats", nats_url=url, name="publisher", group=group) as bus:
        for i in range(count):
            m = glidepath.BusMessage().set("i", i, type="I").set("who", "python-process")
            bus.publish("P.X", m, level=level)
    print(bus.member)


if __name__ == "__main__":
    main()
