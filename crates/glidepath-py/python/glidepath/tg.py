"""A station of a running target generator (``glidepath tg``), from Python.

The target generator (seed 004's distributed target generator) is a federation: a
simulation server, processing nodes flying the aircraft, and stations. A
:class:`TargetGenerator` joins that federation as a station over HLA and, through the
target-generator FOM (``foms/target-generator.xml``):

* reads every aircraft's latest state (the ``Aircraft`` objects' attributes, decoded
  by their FOM data types) with :meth:`TargetGenerator.aircraft`;
* controls the run as the operator's console does (``TgControl``): :meth:`pause`,
  :meth:`resume`, :meth:`step`, :meth:`stop`, :meth:`rate`, :meth:`speed` and
  :meth:`load` (another scenario, flown from its start: ``glidepath tg`` on the
  ``inproc`` transport, where the nodes are threads of the server's process);
* sends pilot commands (``TgCommand``) and reads their acknowledgements
  (``TgCommandAck``): :meth:`command` and :meth:`wait_ack`.

Commands and acknowledgements travel in the target generator's own encoding inside
``HLAopaqueData`` (``docs/wire-format.md``, section 8); this module writes and reads
it. Callbacks arrive when the station is evoked: :meth:`poll` (or any method that
waits) evokes them.

    import glidepath
    from glidepath.tg import TargetGenerator

    tg = TargetGenerator(glidepath.Rti.from_env(), federation="glidepath-tg")
    tg.poll(1.0)
    print(len(tg.aircraft()), "aircraft")
    ack = tg.wait_ack(tg.command("UAL101", "heading", 270))
    tg.pause()
"""

from __future__ import annotations

import itertools
import struct
import time
from typing import Any, Dict, List, Optional

from glidepath._glidepath import Federate, Rti
from glidepath.ambassador import FederateAmbassador

#: The attributes of an ``Aircraft`` a station reads, by their FOM names.
STATE_ATTRIBUTES = (
    "callsign", "aircraftType", "latitudeDeg", "longitudeDeg", "altitudeFt",
    "groundSpeedKt", "courseDeg", "verticalSpeedFpm", "headingDeg", "trackTime",
)

#: Instruction name -> its code in the command encoding.
INSTRUCTIONS = {"heading": 1, "altitude": 2, "speed": 3, "direct": 4, "resume": 5}

#: A refusal's code in the acknowledgement encoding -> its name.
REFUSALS = {1: "unknown_aircraft", 2: "envelope", 3: "unknown_waypoint", 4: "invalid_value"}


def encode_command(command_id: int, callsign: str, instruction: str,
                   value: Any = None) -> bytes:
    """A command in the target generator's encoding (big-endian; strings as a u64
    length then UTF-8): id, callsign, instruction code, then the value — a float for
    heading (degrees), altitude (ft) and speed (kt CAS), a waypoint name for direct,
    nothing for resume."""
    if instruction not in INSTRUCTIONS:
        raise ValueError(f"instruction {instruction!r}: expected one of {', '.join(INSTRUCTIONS)}")
    if not isinstance(callsign, str) or not callsign:
        raise ValueError("callsign: expected a non-empty string")
    out = bytearray(struct.pack(">Q", command_id)) + _string(callsign)
    out.append(INSTRUCTIONS[instruction])
    if instruction in ("heading", "altitude", "speed"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{instruction} needs a number, got {value!r}")
        out += struct.pack(">d", float(value))
    elif instruction == "direct":
        if not isinstance(value, str) or not value:
            raise ValueError(f"direct needs a waypoint name, got {value!r}")
        out += _string(value)
    elif value is not None:
        raise ValueError(f"resume takes no value, got {value!r}")
    return bytes(out)


def decode_ack(data: bytes) -> Dict[str, Any]:
    """An acknowledgement: ``id``, ``callsign``, ``frame`` (the frame that applied it)
    and ``outcome`` (``"applied"`` or a refusal's name) with its ``reason``.
    ValueError when the bytes are not one."""
    r = _Reader(data)
    ack: Dict[str, Any] = {"id": r.u64(), "callsign": r.string(), "frame": r.u64()}
    code = r.u8()
    if code == 0:
        ack.update(outcome="applied", reason=None)
    elif code == 2:
        type_code, reason = r.string(), r.string()
        ack.update(outcome="envelope", reason=f"{type_code}: {reason}")
    elif code in REFUSALS:
        ack.update(outcome=REFUSALS[code], reason=r.string())
    else:
        raise ValueError(f"acknowledgement: unknown outcome {code}")
    r.finish()
    return ack


def _string(s: str) -> bytes:
    b = s.encode("utf-8")
    return struct.pack(">Q", len(b)) + b


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.at = bytes(data), 0

    def take(self, n: int) -> bytes:
        if n < 0 or self.at + n > len(self.data):
            raise ValueError(f"acknowledgement: truncated at byte {self.at}")
        out = self.data[self.at:self.at + n]
        self.at += n
        return out

    def u8(self) -> int:
        return self.take(1)[0]

    def u64(self) -> int:
        return struct.unpack(">Q", self.take(8))[0]

    def string(self) -> str:
        return self.take(self.u64()).decode("utf-8")

    def finish(self) -> None:
        if self.at != len(self.data):
            raise ValueError(f"acknowledgement: {len(self.data) - self.at} trailing bytes")


class TargetGenerator(FederateAmbassador):
    """A station joined to a running target generator's federation.

    ``rti``: where the target generator runs (``Rti.from_env()`` with
    ``GLIDEPATH_TRANSPORT=nats`` for ``glidepath tg --transport nats``);
    ``federation``: its name (``glidepath tg --federation``, ``glidepath-tg`` by
    default); ``name``: this station's federate name.
    """

    def __init__(self, rti: Rti, federation: str = "glidepath-tg",
                 name: str = "python-station") -> None:
        self._states: Dict[int, Dict[str, Any]] = {}
        self._acks: Dict[int, Dict[str, Any]] = {}
        self.malformed = 0
        self.fed: Federate = rti.join_federation_execution(federation, self, name=name)
        f = self.fed
        self._aircraft = f.get_object_class_handle("Aircraft")
        self._names = {f.get_attribute_handle(self._aircraft, n): n for n in STATE_ATTRIBUTES}
        self._control = f.get_interaction_class_handle("TgControl")
        self._control_line = f.get_parameter_handle(self._control, "control")
        self._command = f.get_interaction_class_handle("TgCommand")
        self._command_bytes = f.get_parameter_handle(self._command, "command")
        self._ack = f.get_interaction_class_handle("TgCommandAck")
        self._ack_bytes = f.get_parameter_handle(self._ack, "ack")
        f.publish_interaction_class(self._control)
        f.publish_interaction_class(self._command)
        f.subscribe_interaction_class(self._ack)
        f.subscribe_object_class_attributes(self._aircraft, list(self._names))
        # The callsign comes with an aircraft's first update only: ask for it.
        f.request_class_attribute_value_update(self._aircraft, list(self._names))
        # Ids no console or web command uses (they count from 1): the top bit set,
        # then this federate's handle.
        self._ids = itertools.count(((1 << 63) | (f.handle << 32)) + 1)

    # -- callbacks -------------------------------------------------------------------
    def reflect_attribute_values(self, instance, object_class, values, tag, info):
        state = self._states.setdefault(instance, {})
        for h, v in values.items():
            name = self._names.get(h)
            if name is None:
                continue
            try:
                state[name] = self.fed.decode_attribute(h, v)
            except Exception:  # a peer's bad bytes: counted, never fatal
                self.malformed += 1

    def remove_object_instance(self, instance, tag, info):
        self._states.pop(instance, None)

    def receive_interaction(self, interaction_class, parameters, tag, info):
        if interaction_class != self._ack or self._ack_bytes not in parameters:
            return
        try:
            ack = decode_ack(self.fed.decode_parameter(self._ack_bytes, parameters[self._ack_bytes]))
        except Exception:
            self.malformed += 1
            return
        self._acks[ack["id"]] = ack

    # -- reading -----------------------------------------------------------------------
    def poll(self, seconds: float = 0.0) -> None:
        """Takes the callbacks that arrive within ``seconds`` (at least those waiting)."""
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            self.fed.evoke(max(0.0, min(left, 0.05)))
            if left <= 0:
                return

    def aircraft(self) -> Dict[str, Dict[str, Any]]:
        """Callsign -> the latest state received (``latitudeDeg``, ``longitudeDeg``,
        ``altitudeFt``, ``groundSpeedKt``, ``courseDeg``, ``verticalSpeedFpm``,
        ``headingDeg``, ``aircraftType``, ``trackTime`` in µs of simulated time)."""
        return {s["callsign"]: dict(s) for s in self._states.values() if "callsign" in s}

    # -- control ------------------------------------------------------------------------
    def control(self, line: str) -> None:
        """Sends one operator's line (``pause``, ``rate 30``, ``load us-400``, ...); the
        server obeys it at its next frame or paused pass, and counts one it cannot
        parse."""
        if not isinstance(line, str) or not line.strip():
            raise ValueError("a control line: expected a non-empty string")
        self.fed.send_interaction(
            self._control, {self._control_line: self.fed.encode_parameter(self._control_line, line)})

    def pause(self) -> None:
        """Stops the frames until :meth:`resume`."""
        self.control("pause")

    def resume(self) -> None:
        """Runs the frames again (also starts a run paused by a station)."""
        self.control("resume")

    def step(self) -> None:
        """One frame, while paused."""
        self.control("step")

    def stop(self) -> None:
        """Ends the run."""
        self.control("stop")

    def rate(self, hz: float) -> None:
        """Frames per wall second (0: as fast as possible)."""
        self.control(f"rate {_number(hz, 'rate', 0.0)}")

    def speed(self, factor: float) -> None:
        """Simulated seconds per wall second (above 0)."""
        value = _number(factor, "speed", 0.0)
        if value == 0.0:
            raise ValueError("speed: must be above 0 (pause stops time)")
        self.control(f"speed {value}")

    def load(self, scenario: str) -> None:
        """Flies ``scenario`` (a built-in name) from its start instead; the states of
        the old one are forgotten as its aircraft are deleted."""
        if not isinstance(scenario, str) or not scenario or any(c.isspace() for c in scenario):
            raise ValueError(f"scenario: expected a name without spaces, got {scenario!r}")
        self.control(f"load {scenario}")

    # -- commands -----------------------------------------------------------------------
    def command(self, callsign: str, instruction: str, value: Any = None) -> int:
        """Sends a pilot command (``heading`` °, ``altitude`` ft, ``speed`` kt,
        ``direct`` waypoint, ``resume``); returns its id for :meth:`wait_ack`."""
        command_id = next(self._ids)
        data = encode_command(command_id, callsign, instruction, value)
        self.fed.send_interaction(
            self._command, {self._command_bytes: self.fed.encode_parameter(self._command_bytes, data)})
        return command_id

    def wait_ack(self, command_id: int, timeout: float = 10.0) -> Optional[Dict[str, Any]]:
        """The acknowledgement of command ``command_id`` (see :func:`decode_ack`), or
        ``None`` if none came within ``timeout`` seconds (a paused run applies
        nothing until a frame runs)."""
        deadline = time.monotonic() + timeout
        while command_id not in self._acks and time.monotonic() < deadline:
            self.fed.evoke(0.05)
        return self._acks.pop(command_id, None)

    def close(self) -> None:
        """Resigns the station."""
        self.fed.resign_federation_execution()

    def __enter__(self) -> "TargetGenerator":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _number(value: Any, what: str, low: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value \
            or value in (float("inf"), float("-inf")) or value < low:
        raise ValueError(f"{what}: expected a finite number >= {low}, got {value!r}")
    return float(value)


__all__: List[str] = ["TargetGenerator", "encode_command", "decode_ack", "INSTRUCTIONS",
                      "STATE_ATTRIBUTES"]
