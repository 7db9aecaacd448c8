"""Bad arguments raise the right exceptions; a callback that raises does not break
the RTI."""

from __future__ import annotations

import sys
import threading

import pytest

import glidepath


@pytest.fixture
def federation(fom):
    rti = glidepath.Rti()
    rti.create_federation_execution("errors", [fom])
    amb = glidepath.FederateAmbassador()
    fed = rti.join_federation_execution("errors", amb, name="py")
    yield rti, fed
    if not fed.is_resigned:
        fed.resign_federation_execution()
    rti.destroy_federation_execution("errors")


def test_every_hla_exception_is_an_rtiexception():
    names = [n for n in glidepath.__all__ if n[0].isupper()]
    exceptions = [getattr(glidepath, n) for n in names if issubclass(getattr(glidepath, n), BaseException)]
    assert len(exceptions) > 30
    # The bus is not the RTI: its one exception stands apart.
    assert [e.__name__ for e in exceptions if not issubclass(e, glidepath.RTIexception)] == ["BusError"]
    assert issubclass(glidepath.BusError, Exception)
    assert issubclass(glidepath.RTIexception, Exception)


def test_federation_management_errors(fom, tmp_path):
    rti = glidepath.Rti()
    with pytest.raises(glidepath.FederationExecutionDoesNotExist):
        rti.join_federation_execution("nowhere", glidepath.FederateAmbassador())
    with pytest.raises(glidepath.FederationExecutionDoesNotExist):
        rti.destroy_federation_execution("nowhere")
    with pytest.raises(glidepath.ErrorReadingFDD, match="missing.xml"):
        rti.create_federation_execution("f", [str(tmp_path / "missing.xml")])
    bad = tmp_path / "bad.xml"
    bad.write_text("<objectModel><objects>")
    with pytest.raises(glidepath.ErrorReadingFDD, match="bad.xml"):
        rti.create_federation_execution("f", [bad])
    rti.create_federation_execution("f", [fom])
    with pytest.raises(glidepath.FederationExecutionAlreadyExists):
        rti.create_federation_execution("f", [fom])
    fed = rti.join_federation_execution("f", glidepath.FederateAmbassador(), name="x")
    with pytest.raises(glidepath.FederateNameAlreadyInUse):
        rti.join_federation_execution("f", glidepath.FederateAmbassador(), name="x")
    with pytest.raises(glidepath.FederatesCurrentlyJoined):
        rti.destroy_federation_execution("f")
    with pytest.raises(glidepath.SynchronizationPointLabelNotAnnounced):
        fed.synchronization_point_achieved("never")
    fed.resign_federation_execution()
    with pytest.raises(glidepath.FederateNotExecutionMember):
        fed.publish_interaction_class(fed.get_interaction_class_handle("Ping"))
    rti.destroy_federation_execution("f")


def test_configuration_errors():
    with pytest.raises(glidepath.InvalidLocalSettingsDesignator, match="carrier-pigeon"):
        glidepath.Rti(transport="carrier-pigeon")
    with pytest.raises(glidepath.InvalidLocalSettingsDesignator, match="colour"):
        glidepath.Rti(colour="blue")
    with pytest.raises(glidepath.InvalidLocalSettingsDesignator):
        glidepath.Rti(bundle_bytes="many")
    # Nothing listens on port 1: the NATS transport is unavailable.
    with pytest.raises(glidepath.ConnectionFailed):
        glidepath.Rti(transport="nats", nats_url="nats://127.0.0.1:1")


def test_name_and_handle_errors(federation):
    _, fed = federation
    with pytest.raises(glidepath.NameNotFound):
        fed.get_object_class_handle("Spaceship")
    cls = fed.get_object_class_handle("BenchObject")
    with pytest.raises(glidepath.NameNotFound):
        fed.get_attribute_handle(cls, "warpFactor")
    with pytest.raises(glidepath.InvalidObjectClassHandle):
        fed.get_attribute_handle(9999, "payload")
    with pytest.raises(glidepath.InvalidInteractionClassHandle):
        fed.get_interaction_class_name(9999)
    with pytest.raises(glidepath.InvalidAttributeHandle):
        fed.get_attribute_name(9999)
    with pytest.raises(glidepath.InvalidParameterHandle):
        fed.get_parameter_name(9999)
    with pytest.raises(TypeError):
        fed.get_object_class_handle(42)
    with pytest.raises(OverflowError):
        fed.get_attribute_handle(-1, "payload")


def test_declaration_and_object_errors(federation):
    _, fed = federation
    cls = fed.get_object_class_handle("BenchObject")
    payload = fed.get_attribute_handle(cls, "payload")
    ping = fed.get_interaction_class_handle("Ping")
    seq = fed.get_parameter_handle(ping, "seq")
    with pytest.raises(glidepath.ObjectClassNotDefined):
        fed.publish_object_class_attributes(9999, [payload])
    with pytest.raises(glidepath.AttributeNotDefined):
        fed.subscribe_object_class_attributes(cls, [9999])
    with pytest.raises(glidepath.InteractionClassNotDefined):
        fed.subscribe_interaction_class(9999)
    with pytest.raises(glidepath.ObjectClassNotPublished):
        fed.register_object_instance(cls)
    with pytest.raises(glidepath.InteractionClassNotPublished):
        fed.send_interaction(ping, {seq: b"\x00"})
    fed.publish_interaction_class(ping)
    with pytest.raises(glidepath.InteractionParameterNotDefined):
        fed.send_interaction(ping, {9999: b"\x00"})
    with pytest.raises(TypeError, match="bytes"):
        fed.send_interaction(ping, {seq: "not bytes"})
    with pytest.raises(TypeError):
        fed.send_interaction(ping, [(seq, b"\x00")])
    with pytest.raises(glidepath.ObjectInstanceNotKnown):
        fed.update_attribute_values(123456, {payload: b"x"})
    with pytest.raises(glidepath.ObjectInstanceNameNotReserved):
        fed.publish_object_class_attributes(cls, [payload])
        fed.register_object_instance(cls, "never-reserved")
    with pytest.raises(glidepath.IllegalName):
        fed.reserve_object_instance_name("HLAforbidden")


def test_time_management_errors(federation):
    _, fed = federation
    with pytest.raises(glidepath.InvalidLookahead):
        fed.enable_time_regulation(-1.0)
    with pytest.raises(glidepath.TimeRegulationIsNotEnabled):
        fed.disable_time_regulation()
    with pytest.raises(glidepath.TimeConstrainedIsNotEnabled):
        fed.disable_time_constrained()
    with pytest.raises(TypeError, match="int or a float"):
        fed.time_advance_request("soon")
    with pytest.raises(glidepath.InvalidLogicalTime):
        fed.time_advance_request(float("nan"))
    # A regulator at time 0 with lookahead 1 holds a constrained federate below 1.
    rti, _ = federation
    regulator = rti.join_federation_execution("errors", glidepath.FederateAmbassador(), name="regulator")
    regulator.enable_time_regulation(1.0)
    with pytest.raises(glidepath.RequestForTimeRegulationPending):
        regulator.enable_time_regulation(1.0)
    assert regulator.evoke(5.0)
    with pytest.raises(glidepath.TimeRegulationAlreadyEnabled):
        regulator.enable_time_regulation(1.0)
    fed.enable_time_constrained()
    assert fed.evoke(5.0)
    with pytest.raises(glidepath.TimeConstrainedAlreadyEnabled):
        fed.enable_time_constrained()
    fed.time_advance_request(0.5)
    assert fed.evoke(5.0)  # granted: GALT is 1
    with pytest.raises(glidepath.LogicalTimeAlreadyPassed):
        fed.time_advance_request(0.25)
    fed.time_advance_request(10.0)
    assert fed.is_time_advancing
    with pytest.raises(glidepath.InTimeAdvancingState):
        fed.time_advance_request(11.0)
    regulator.resign_federation_execution()
    with pytest.raises(ValueError, match="timeout"):
        fed.evoke(-1.0)
    with pytest.raises(ValueError, match="min_wait"):
        fed.evoke_multiple(-1.0, 1.0)


class Raising(glidepath.FederateAmbassador):
    def __init__(self):
        self.received = []

    def receive_interaction(self, interaction_class, parameters, tag, info):
        self.received.append(tag)
        if tag == b"boom":
            raise RuntimeError("model bug")

    def announce_synchronization_point(self, label, tag):
        self.received.append(label)


def _raising_pair(rti, process_model):
    amb = Raising()
    sender = rti.join_federation_execution("errors", glidepath.FederateAmbassador(), name="sender")
    receiver = rti.join_federation_execution("errors", amb, name="receiver", process_model=process_model)
    ping = sender.get_interaction_class_handle("Ping")
    seq = sender.get_parameter_handle(ping, "seq")
    receiver.subscribe_interaction_class(ping)
    sender.publish_interaction_class(ping)
    return amb, sender, receiver, ping, seq


def test_callback_that_raises_in_evoke_propagates_and_the_federate_goes_on(federation):
    rti, _ = federation
    amb, sender, receiver, ping, seq = _raising_pair(rti, glidepath.ProcessModel.EVOKED)
    sender.send_interaction(ping, {seq: b"1"}, tag=b"boom")
    sender.send_interaction(ping, {seq: b"2"}, tag=b"fine")
    with pytest.raises(RuntimeError, match="model bug"):
        receiver.evoke(10.0)
    assert receiver.evoke(10.0)
    assert amb.received == [b"boom", b"fine"]
    sender.resign_federation_execution()
    receiver.resign_federation_execution()


def test_callback_that_raises_on_the_rti_thread_is_reported_and_the_rti_goes_on(federation, monkeypatch):
    rti, _ = federation
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: reported.append(u.exc_value))
    amb, sender, receiver, ping, seq = _raising_pair(rti, glidepath.ProcessModel.IMMEDIATE)
    sender.send_interaction(ping, {seq: b"1"}, tag=b"boom")
    sender.send_interaction(ping, {seq: b"2"}, tag=b"fine")
    # A synchronization point announced to both afterwards shows the receiver's RTI
    # thread is still delivering.
    sender.register_federation_synchronization_point("after")
    for _ in range(100):
        if "after" in amb.received:
            break
        sender.evoke(0.1)
    assert amb.received == [b"boom", b"fine", "after"]
    assert receiver.callback_errors == 1
    assert len(reported) == 1 and str(reported[0]) == "model bug"
    assert receiver.evoke(0.0) is False  # immediate model: nothing to evoke
    sender.resign_federation_execution()
    receiver.resign_federation_execution()


class Numbered(glidepath.FederateAmbassador):
    """Records each interaction's number; raises on every 500th."""

    def __init__(self) -> None:
        self.numbers = []
        self.done = threading.Event()

    def receive_interaction(self, interaction_class, parameters, tag, info):
        n = int(tag)
        self.numbers.append(n)
        if n == 2999:
            self.done.set()
        if n % 500 == 499:
            raise RuntimeError(f"model bug at {n}")


def test_the_rti_thread_delivers_long_runs_in_order_across_raising_callbacks(federation, monkeypatch):
    """The immediate model hands callbacks over in batches under one GIL taking: many
    batches, in order, none lost, and a raising callback ends neither its batch nor
    the next."""
    rti, _ = federation
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: reported.append(u.exc_value))
    amb = Numbered()
    sender = rti.join_federation_execution("errors", glidepath.FederateAmbassador(), name="sender")
    receiver = rti.join_federation_execution(
        "errors", amb, name="receiver", process_model=glidepath.ProcessModel.IMMEDIATE
    )
    ping = sender.get_interaction_class_handle("Ping")
    seq = sender.get_parameter_handle(ping, "seq")
    receiver.subscribe_interaction_class(ping)
    sender.publish_interaction_class(ping)
    for n in range(3000):
        sender.send_interaction(ping, {seq: b"x"}, tag=str(n).encode())
    assert amb.done.wait(30), f"{len(amb.numbers)} of 3000 delivered"
    assert amb.numbers == list(range(3000))
    assert receiver.callback_errors == 6
    assert [str(e) for e in reported] == [f"model bug at {n}" for n in range(499, 3000, 500)]
    sender.resign_federation_execution()
    receiver.resign_federation_execution()


def test_evoke_inside_a_callback_is_refused(federation):
    rti, fed = federation
    caught = []

    class Nested(glidepath.FederateAmbassador):
        def announce_synchronization_point(self, label, tag):
            try:
                other.evoke(0.0)
            except glidepath.CallNotAllowedFromWithinCallback as e:
                caught.append(e)

    other = rti.join_federation_execution("errors", Nested(), name="nested")
    fed.register_federation_synchronization_point("p")
    assert other.evoke(10.0)
    assert len(caught) == 1
    other.resign_federation_execution()
