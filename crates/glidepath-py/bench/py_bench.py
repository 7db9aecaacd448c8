"""Python federates measured next to a pure-Python peer in the same run (issue 19,
item 6).

    python crates/glidepath-py/bench/py_bench.py --transport inproc
    python crates/glidepath-py/bench/py_bench.py --transport nats --nats-url nats://127.0.0.1:4222

For each transport, three figures, each next to its raw peer:

- **throughput**: one federate sends COUNT `BenchInteraction`s of SIZE bytes, another
  in the same process receives them (evoked, `evoke_multiple`); the raw peer is
  nats-py publishing and subscribing through the same server (over `nats`), or a
  `queue.SimpleQueue` between two threads (over `inproc`).
- **round trip**: `Ping` answered by `Pong` between two federates (the answering one
  on a thread of its own), P50/P99 of ROUNDS round trips; the raw peer is nats-py
  (one subscription answers, the other waits) or two queues.
- **GIL hand-over**: the same throughput with the receiver in the immediate model,
  where the RTI thread takes the GIL for each callback; the difference per message
  from the evoked receiver is the hand-over's cost.

Needs the glidepath wheel, and nats-py for `--transport nats` (`pip install nats-py`).
Prints a table and, with `--json PATH`, writes the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import queue
import statistics
import sys
import threading
import time
from pathlib import Path

import glidepath

REPO = Path(__file__).resolve().parents[3]
FOM = str(REPO / "foms" / "benchmark.xml")


def percentile(values: list[float], p: float) -> float:
    """The exact-rank percentile (the ATM report's: the ceil(p/100 * n)-th value)."""
    s = sorted(values)
    k = max(1, -(-len(s) * p // 100))
    return s[int(k) - 1]


class Counter(glidepath.FederateAmbassador):
    """Counts interactions of one class; remembers the last Pong's sequence number."""

    def __init__(self) -> None:
        self.count = 0
        self.done = threading.Event()
        self.target = 0
        self.last_seq = -1
        self.seq_param = None

    def receive_interaction(self, interaction_class, parameters, tag, info):
        self.count += 1
        if self.seq_param is not None and self.seq_param in parameters:
            self.last_seq = int.from_bytes(parameters[self.seq_param], "big")
        if self.count >= self.target:
            self.done.set()


def federation(rti: glidepath.Rti, name: str) -> None:
    try:
        rti.destroy_federation_execution(name)
    except glidepath.RTIexception:
        pass
    rti.create_federation_execution(name, [FOM])


def glidepath_throughput(rti, count: int, size: int, immediate: bool) -> float:
    name = f"pybench-tp-{'imm' if immediate else 'evk'}"
    federation(rti, name)
    recv_amb = Counter()
    recv_amb.target = count
    model = glidepath.ProcessModel.IMMEDIATE if immediate else glidepath.ProcessModel.EVOKED
    receiver = rti.join_federation_execution(name, recv_amb, name="receiver", process_model=model)
    sender = rti.join_federation_execution(name, glidepath.FederateAmbassador(), name="sender")
    cls = sender.get_interaction_class_handle("BenchInteraction")
    payload = sender.get_parameter_handle(cls, "payload")
    sender.publish_interaction_class(cls)
    receiver.subscribe_interaction_class(cls)
    values = {payload: bytes(size)}

    def send() -> None:
        for _ in range(count):
            sender.send_interaction(cls, values)

    start = time.perf_counter()
    t = threading.Thread(target=send)
    t.start()
    deadline = time.monotonic() + 120
    while not recv_amb.done.is_set():
        if time.monotonic() > deadline:
            raise RuntimeError(f"only {recv_amb.count} of {count} interactions arrived")
        if immediate:
            recv_amb.done.wait(0.5)
        else:
            receiver.evoke_multiple(0.0, 0.1)
    elapsed = time.perf_counter() - start
    t.join()
    sender.resign_federation_execution()
    receiver.resign_federation_execution()
    rti.destroy_federation_execution(name)
    return count / elapsed


def glidepath_round_trips(rti, rounds: int, size: int) -> list[float]:
    name = "pybench-rt"
    federation(rti, name)
    ping_amb = Counter()
    pong_amb = Counter()
    a = rti.join_federation_execution(name, ping_amb, name="pinger")
    b = rti.join_federation_execution(name, pong_amb, name="ponger")
    ping = a.get_interaction_class_handle("Ping")
    pong = a.get_interaction_class_handle("Pong")
    ping_seq = a.get_parameter_handle(ping, "seq")
    ping_payload = a.get_parameter_handle(ping, "payload")
    pong_seq = a.get_parameter_handle(pong, "seq")
    a.publish_interaction_class(ping)
    a.subscribe_interaction_class(pong)
    b.publish_interaction_class(pong)
    b.subscribe_interaction_class(ping)
    ping_amb.seq_param = pong_seq
    pong_amb.seq_param = ping_seq
    stop = threading.Event()

    def answer() -> None:
        answered = 0
        while not stop.is_set():
            if b.evoke(0.05) and pong_amb.count > answered:
                answered = pong_amb.count
                b.send_interaction(pong, {pong_seq: pong_amb.last_seq.to_bytes(8, "big")})

    t = threading.Thread(target=answer)
    t.start()
    payload = bytes(size)
    samples = []
    try:
        for seq in range(rounds):
            start = time.perf_counter()
            a.send_interaction(ping, {ping_seq: seq.to_bytes(8, "big"), ping_payload: payload})
            deadline = time.monotonic() + 10
            while ping_amb.last_seq != seq:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"no Pong {seq} within 10 s")
                a.evoke(0.05)
            samples.append((time.perf_counter() - start) * 1e6)
    finally:
        stop.set()
        t.join()
    a.resign_federation_execution()
    b.resign_federation_execution()
    rti.destroy_federation_execution(name)
    return samples


def queue_throughput(count: int, size: int) -> float:
    q: queue.SimpleQueue = queue.SimpleQueue()
    payload = bytes(size)

    def send() -> None:
        for _ in range(count):
            q.put(payload)

    start = time.perf_counter()
    t = threading.Thread(target=send)
    t.start()
    for _ in range(count):
        q.get()
    elapsed = time.perf_counter() - start
    t.join()
    return count / elapsed


def queue_round_trips(rounds: int, size: int) -> list[float]:
    there: queue.SimpleQueue = queue.SimpleQueue()
    back: queue.SimpleQueue = queue.SimpleQueue()

    def answer() -> None:
        while True:
            m = there.get()
            if m is None:
                return
            back.put(m[0])

    t = threading.Thread(target=answer)
    t.start()
    payload = bytes(size)
    samples = []
    for seq in range(rounds):
        start = time.perf_counter()
        there.put((seq, payload))
        assert back.get() == seq
        samples.append((time.perf_counter() - start) * 1e6)
    there.put(None)
    t.join()
    return samples


async def nats_py_throughput(url: str, count: int, size: int) -> float:
    import nats

    pub = await nats.connect(url)
    sub_conn = await nats.connect(url)
    got = 0
    done = asyncio.Event()

    async def on_message(msg) -> None:
        nonlocal got
        got += 1
        if got >= count:
            done.set()

    await sub_conn.subscribe("pybench.tp", cb=on_message, pending_msgs_limit=count + 1)
    await sub_conn.flush()
    payload = bytes(size)
    start = time.perf_counter()
    for _ in range(count):
        await pub.publish("pybench.tp", payload)
    await pub.flush()
    await asyncio.wait_for(done.wait(), timeout=120)
    elapsed = time.perf_counter() - start
    await pub.close()
    await sub_conn.close()
    return count / elapsed


async def nats_py_round_trips(url: str, rounds: int, size: int) -> list[float]:
    import nats

    pinger = await nats.connect(url)
    ponger = await nats.connect(url)

    async def answer(msg) -> None:
        await ponger.publish("pybench.pong", msg.data[:8])

    await ponger.subscribe("pybench.ping", cb=answer)
    await ponger.flush()
    pongs: asyncio.Queue = asyncio.Queue()

    async def on_pong(msg) -> None:
        await pongs.put(int.from_bytes(msg.data, "big"))

    await pinger.subscribe("pybench.pong", cb=on_pong)
    await pinger.flush()
    payload = bytes(size)
    samples = []
    for seq in range(rounds):
        start = time.perf_counter()
        await pinger.publish("pybench.ping", seq.to_bytes(8, "big") + payload)
        got = await asyncio.wait_for(pongs.get(), timeout=10)
        assert got == seq
        samples.append((time.perf_counter() - start) * 1e6)
    await pinger.close()
    await ponger.close()
    return samples


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--transport", choices=["inproc", "nats"], default="inproc")
    ap.add_argument("--nats-url", default="nats://127.0.0.1:4222")
    ap.add_argument("--count", type=int, default=50_000, help="interactions for throughput")
    ap.add_argument("--rounds", type=int, default=2_000, help="round trips")
    ap.add_argument("--size", type=int, default=100, help="payload bytes")
    ap.add_argument("--json", type=Path, help="write the figures here")
    args = ap.parse_args()
    if args.count < 1 or args.rounds < 1 or args.size < 0:
        ap.error("--count and --rounds must be at least 1, --size at least 0")

    if args.transport == "nats":
        try:
            import nats  # noqa: F401
        except ImportError:
            print("--transport nats needs nats-py as the raw peer: pip install nats-py", file=sys.stderr)
            return 2
        rti = glidepath.Rti(transport="nats", nats_url=args.nats_url)
        executive = rti.ensure_executive()
        raw_name = "nats-py"
        raw_tp = asyncio.run(nats_py_throughput(args.nats_url, args.count, args.size))
        raw_rt = asyncio.run(nats_py_round_trips(args.nats_url, args.rounds, args.size))
    else:
        rti = glidepath.Rti()
        executive = None
        raw_name = "queue.SimpleQueue"
        raw_tp = queue_throughput(args.count, args.size)
        raw_rt = queue_round_trips(args.rounds, args.size)

    tp = glidepath_throughput(rti, args.count, args.size, immediate=False)
    tp_imm = glidepath_throughput(rti, args.count, args.size, immediate=True)
    rt = glidepath_round_trips(rti, args.rounds, args.size)
    if executive is not None:
        executive.close()

    figures = {
        "transport": args.transport,
        "size_bytes": args.size,
        "raw_peer": raw_name,
        "throughput_per_s": tp,
        "raw_throughput_per_s": raw_tp,
        "ratio_throughput": tp / raw_tp,
        "throughput_immediate_per_s": tp_imm,
        "gil_handover_us_per_callback": (1 / tp_imm - 1 / tp) * 1e6,
        "round_trip_p50_us": statistics.median(rt),
        "round_trip_p99_us": percentile(rt, 99),
        "raw_round_trip_p50_us": statistics.median(raw_rt),
        "raw_round_trip_p99_us": percentile(raw_rt, 99),
        "ratio_round_trip_p50": statistics.median(rt) / statistics.median(raw_rt),
    }
    print(f"Python, {args.transport}, {args.size} B; raw peer: {raw_name} in the same run")
    print(f"  throughput        {tp:>10.0f} /s   raw {raw_tp:>10.0f} /s   ratio {tp / raw_tp:.2f}")
    print(f"  immediate model   {tp_imm:>10.0f} /s   GIL hand-over {figures['gil_handover_us_per_callback']:+.2f} us per callback")
    print(
        f"  round trip P50    {figures['round_trip_p50_us']:>10.1f} us  raw {figures['raw_round_trip_p50_us']:>10.1f} us  "
        f"ratio {figures['ratio_round_trip_p50']:.2f}"
    )
    print(f"  round trip P99    {figures['round_trip_p99_us']:>10.1f} us  raw {figures['raw_round_trip_p99_us']:>10.1f} us")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
        print(f"figures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
