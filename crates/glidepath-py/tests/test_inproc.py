"""A Python federate and a Rust federate in one process over inproc, and the HLA
services between Python federates."""

from __future__ import annotations

import struct
import threading

import glidepath
import lockstep

STEPS = 50


def test_version_and_metadata():
    assert glidepath.__version__ and glidepath.__version__[0].isdigit()
    assert issubclass(glidepath.NameNotFound, glidepath.RTIexception)
    assert glidepath.Rti().transport == "inproc"


def _lockstep_with_rust(fom: str, process_model: glidepath.ProcessModel) -> None:
    rti = glidepath.Rti()
    rti.create_federation_execution("lockstep", [fom])
    amb = lockstep.Lockstep()
    fed = rti.join_federation_execution("lockstep", amb, name="python", process_model=process_model)
    report: list = []
    errors: list = []

    def rust_side():
        try:
            report.append(glidepath._glidepath._run_rust_peer(rti, "lockstep", STEPS))
        except BaseException as e:  # reported by the assertion below
            errors.append(e)

    peer = threading.Thread(target=rust_side)
    peer.start()
    try:
        lockstep.run(fed, amb, STEPS)
    finally:
        peer.join(timeout=60)
    assert not peer.is_alive(), "the Rust federate did not finish"
    assert errors == []
    grants, matched, last_grant = report[0]
    # Every step, each side saw the other's value of that step before its grant.
    assert (grants, matched, last_grant) == (STEPS, STEPS, float(STEPS))
    assert amb.matched == STEPS
    fed.resign_federation_execution()
    rti.destroy_federation_execution("lockstep")


def test_lockstep_with_rust_federate_evoked(fom):
    _lockstep_with_rust(fom, glidepath.ProcessModel.EVOKED)


def test_lockstep_with_rust_federate_immediate(fom):
    _lockstep_with_rust(fom, glidepath.ProcessModel.IMMEDIATE)


class Recorder(glidepath.FederateAmbassador):
    """Keeps every callback as (name, args)."""

    def __init__(self):
        self.calls = []

    def __getattribute__(self, name):
        attr = object.__getattribute__(self, name)
        if name.startswith("_") or not hasattr(glidepath.FederateAmbassador, name):
            return attr
        calls = object.__getattribute__(self, "calls")
        return lambda *args: calls.append((name, args))

    def names(self):
        return [c[0] for c in self.calls]

    def first(self, name):
        return next(args for n, args in self.calls if n == name)


def evoke_until(fed, amb, name, count=1):
    for _ in range(200):
        if amb.names().count(name) >= count:
            return
        fed.evoke(0.1)
    raise AssertionError(f"no {name} in {amb.names()}")


def test_objects_interactions_sync_points_between_python_federates(fom):
    rti = glidepath.Rti()
    rti.create_federation_execution("services", [fom])
    a_amb, b_amb = Recorder(), Recorder()
    a = rti.join_federation_execution("services", a_amb, name="a")
    b = rti.join_federation_execution("services", b_amb, name="b")
    assert sorted(n for _, n, _ in a.list_federates()) == ["a", "b"]

    cls = a.get_object_class_handle("BenchObject")
    payload = a.get_attribute_handle(cls, "payload")
    assert a.get_object_class_name(cls) == "HLAobjectRoot.BenchObject"
    assert a.get_attribute_name(payload) == "payload"
    ping = a.get_interaction_class_handle("Ping")
    seq = a.get_parameter_handle(ping, "seq")
    assert a.get_parameter_name(seq) == "seq"

    a.publish_object_class_attributes(cls, [payload])
    b.subscribe_object_class_attributes(cls, [payload])
    a.publish_interaction_class(ping)
    b.subscribe_interaction_class(ping)

    a.reserve_object_instance_name("aircraft-1")
    evoke_until(a, a_amb, "object_instance_name_reservation_succeeded")
    instance = a.register_object_instance(cls, "aircraft-1")
    assert a.get_object_instance_name(instance) == "aircraft-1"
    evoke_until(b, b_amb, "discover_object_instance")
    assert b_amb.first("discover_object_instance") == (instance, cls, "aircraft-1", a.handle)

    a.update_attribute_values(instance, {payload: b"\x01\x02"}, tag=b"t1")
    evoke_until(b, b_amb, "reflect_attribute_values")
    inst, klass, values, tag, info = b_amb.first("reflect_attribute_values")
    assert (inst, klass, values, tag) == (instance, cls, {payload: b"\x01\x02"}, b"t1")
    assert (info.producer, info.time, info.transportation) == (a.handle, None, "reliable")

    a.send_interaction(ping, {seq: struct.pack(">Q", 7)}, tag=b"p")
    evoke_until(b, b_amb, "receive_interaction")
    klass, params, tag, info = b_amb.first("receive_interaction")
    assert (klass, params, tag) == (ping, {seq: struct.pack(">Q", 7)}, b"p")

    b.request_instance_attribute_value_update(instance, [payload], tag=b"please")
    evoke_until(a, a_amb, "provide_attribute_value_update")
    assert a_amb.first("provide_attribute_value_update") == (instance, [payload], b"please")

    a.register_federation_synchronization_point("ready", tag=b"go")
    evoke_until(a, a_amb, "synchronization_point_registration_succeeded")
    evoke_until(b, b_amb, "announce_synchronization_point")
    assert b_amb.first("announce_synchronization_point") == ("ready", b"go")
    evoke_until(a, a_amb, "announce_synchronization_point")
    a.synchronization_point_achieved("ready")
    b.synchronization_point_achieved("ready")
    evoke_until(a, a_amb, "federation_synchronized")
    evoke_until(b, b_amb, "federation_synchronized")
    assert b_amb.first("federation_synchronized") == ("ready", [])

    a.delete_object_instance(instance, tag=b"bye")
    evoke_until(b, b_amb, "remove_object_instance")
    assert b_amb.first("remove_object_instance")[:2] == (instance, b"bye")

    a.resign_federation_execution()
    b.resign_federation_execution(glidepath.ResignAction.NO_ACTION)
    assert a.is_resigned and b.is_resigned
    rti.destroy_federation_execution("services")


def test_time_management_services(fom):
    rti = glidepath.Rti()
    rti.create_federation_execution("time", [fom])
    amb = Recorder()
    fed = rti.join_federation_execution("time", amb, name="solo")
    fed.enable_time_regulation(2.5)
    evoke_until(fed, amb, "time_regulation_enabled")
    fed.enable_time_constrained()
    evoke_until(fed, amb, "time_constrained_enabled")
    assert fed.is_time_regulating and fed.is_time_constrained
    assert fed.query_lookahead() == 2.5
    fed.modify_lookahead(1.0)
    assert fed.query_lookahead() == 1.0
    fed.time_advance_request(10.0)
    evoke_until(fed, amb, "time_advance_grant", 1)
    fed.next_message_request(20.0)
    evoke_until(fed, amb, "time_advance_grant", 2)
    fed.time_advance_request_available(30.0)
    evoke_until(fed, amb, "time_advance_grant", 3)
    fed.next_message_request_available(40.0)
    evoke_until(fed, amb, "time_advance_grant", 4)
    fed.flush_queue_request(50.0)
    evoke_until(fed, amb, "time_advance_grant", 5)
    grants = [args[0] for name, args in amb.calls if name == "time_advance_grant"]
    assert grants == [10.0, 20.0, 30.0, 40.0, 50.0]
    assert fed.query_logical_time() == 50.0
    fed.flush()
    fed.disable_time_regulation()
    fed.disable_time_constrained()
    assert not fed.is_time_regulating and not fed.is_time_constrained
    assert fed.evoke_multiple(0.0, 0.05) >= 0
    fed.resign_federation_execution()
    rti.destroy_federation_execution("time")


def test_evoke_releases_the_gil_while_it_waits(fom):
    rti = glidepath.Rti()
    rti.create_federation_execution("gil", [fom])
    amb = Recorder()
    waiter = rti.join_federation_execution("gil", amb, name="waiter")
    sender = rti.join_federation_execution("gil", glidepath.FederateAmbassador(), name="sender")
    ping = sender.get_interaction_class_handle("Ping")
    waiter.subscribe_interaction_class(ping)
    sender.publish_interaction_class(ping)
    started = threading.Event()
    result = []

    def wait_in_evoke():
        started.set()
        result.append(waiter.evoke(60.0))

    thread = threading.Thread(target=wait_in_evoke)
    thread.start()
    started.wait()
    # The waiter keeps the GIL from started.set() until it blocks, which is inside
    # evoke (or after its switch interval). This thread needs the GIL to send: were it held by the waiting evoke, nothing
    # would be sent and the evoke would return False after 60 s.
    sender.send_interaction(ping, {}, tag=b"wake")
    thread.join(timeout=60)
    assert result == [True]
    assert amb.names() == ["receive_interaction"]
    waiter.resign_federation_execution()
    sender.resign_federation_execution()
    rti.destroy_federation_execution("gil")
