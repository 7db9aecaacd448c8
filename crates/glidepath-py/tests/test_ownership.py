"""Ownership management from Python, two (or three) federates on inproc over the
air-traffic FOM: a generator registers an aircraft and owns its position; a pilot
station takes it by unconditional divestiture and by a negotiated release, hands it
back by negotiated divestiture; queries answer who owns what; every misuse raises
the standard's exception.

glidepath does not enforce the FOM's <ownership> column (the Rust ownership tests
transfer NoTransfer attributes too), so the Aircraft attributes serve."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

import glidepath
from recorder import Recorder, evoke_until

FOM = str(Path(__file__).resolve().parents[3] / "foms" / "air-traffic.xml")


class Handover:
    """A generator owning an aircraft's attributes and a pilot station that publishes
    and subscribes them; both know the aircraft."""

    def __init__(self, rti, name: str, pilot_model=glidepath.ProcessModel.EVOKED):
        self.gen_amb, self.pilot_amb = Recorder(), Recorder()
        self.gen = rti.join_federation_execution(name, self.gen_amb, name="generator")
        self.pilot = rti.join_federation_execution(
            name, self.pilot_amb, name="pilot", process_model=pilot_model
        )
        g = self.gen
        self.aircraft_class = g.get_object_class_handle("Aircraft")
        self.lat, self.lon, self.alt, self.callsign = (
            g.get_attribute_handle(self.aircraft_class, n)
            for n in ("latitudeDeg", "longitudeDeg", "altitudeFt", "callsign")
        )
        moving = [self.lat, self.lon, self.alt]
        for f in (self.gen, self.pilot):
            f.publish_object_class_attributes(self.aircraft_class, moving + [self.callsign])
            f.subscribe_object_class_attributes(self.aircraft_class, moving)
        self.aircraft = g.register_object_instance(self.aircraft_class)
        if pilot_model == glidepath.ProcessModel.EVOKED:
            evoke_until(self.pilot, self.pilot_amb, "discover_object_instance")

    def reflected(self, fed, amb: Recorder, attribute: int, value: bytes) -> int:
        """Waits for a reflection of `attribute` = `value`; returns its producer."""
        deadline = time.monotonic() + 20
        while True:
            for instance, _, values, _, info in amb.named("reflect_attribute_values"):
                if instance == self.aircraft and values.get(attribute) == value:
                    return info.producer
            assert time.monotonic() < deadline, "no reflection of the update"
            fed.evoke(0.05)


@pytest.fixture
def federation():
    rti = glidepath.Rti()
    name = f"ownership-{time.monotonic_ns()}"
    rti.create_federation_execution(name, [FOM])
    joined: list = []
    yield rti, name, joined
    for f in joined:
        if not f.is_resigned:
            f.resign_federation_execution(glidepath.ResignAction.CANCEL_THEN_DELETE_THEN_DIVEST)
    rti.destroy_federation_execution(name)


@pytest.fixture
def handover(federation):
    rti, name, joined = federation
    h = Handover(rti, name)
    joined += [h.pilot, h.gen]
    return h


def test_unconditional_divestiture_then_acquisition_if_available(handover):
    h = handover
    gen, pilot = h.gen, h.pilot
    assert gen.is_attribute_owned_by_federate(h.aircraft, h.lat)
    assert not pilot.is_attribute_owned_by_federate(h.aircraft, h.lat)
    with pytest.raises(glidepath.AttributeNotOwned):
        pilot.update_attribute_values(h.aircraft, {h.lat: b"early"})

    gen.unconditional_attribute_ownership_divestiture(h.aircraft, [h.lat, h.lon])
    assert not gen.is_attribute_owned_by_federate(h.aircraft, h.lat)
    # The pilot, which publishes them, is offered them.
    offer = evoke_until(pilot, h.pilot_amb, "request_attribute_ownership_assumption")
    assert offer == (h.aircraft, [h.lat, h.lon], b"")
    # Nobody owns them now.
    pilot.query_attribute_ownership(h.aircraft, h.lat)
    assert evoke_until(pilot, h.pilot_amb, "attribute_is_not_owned") == (h.aircraft, h.lat)

    pilot.attribute_ownership_acquisition_if_available(h.aircraft, [h.lat, h.lon])
    acquired = evoke_until(pilot, h.pilot_amb, "attribute_ownership_acquisition_notification")
    assert acquired[:2] == (h.aircraft, [h.lat, h.lon])
    assert pilot.is_attribute_owned_by_federate(h.aircraft, h.lat)
    assert pilot.is_attribute_owned_by_federate(h.aircraft, h.lon)

    # Updates of them now come from the pilot; the generator's are refused, and what
    # it still owns it still updates.
    pilot.update_attribute_values(h.aircraft, {h.lat: b"pilot-1"})
    assert h.reflected(gen, h.gen_amb, h.lat, b"pilot-1") == pilot.handle
    with pytest.raises(glidepath.AttributeNotOwned):
        gen.update_attribute_values(h.aircraft, {h.lat: b"gen-late"})
    gen.update_attribute_values(h.aircraft, {h.alt: b"gen-alt"})
    assert h.reflected(pilot, h.pilot_amb, h.alt, b"gen-alt") == gen.handle

    # Who owns what, as the generator learns by asking.
    gen.query_attribute_ownership(h.aircraft, h.lat)
    assert evoke_until(gen, h.gen_amb, "inform_attribute_ownership") == (
        h.aircraft,
        h.lat,
        pilot.handle,
    )
    gen.query_attribute_ownership(h.aircraft, h.alt)
    assert evoke_until(gen, h.gen_amb, "inform_attribute_ownership", 2) == (
        h.aircraft,
        h.alt,
        gen.handle,
    )


def test_negotiated_release_and_negotiated_divestiture(handover):
    h = handover
    gen, pilot = h.gen, h.pilot
    # The pilot asks; the generator is asked to release, and does.
    pilot.attribute_ownership_acquisition(h.aircraft, [h.alt], tag=b"pilot takes over")
    asked = evoke_until(gen, h.gen_amb, "request_attribute_ownership_release")
    assert asked == (h.aircraft, [h.alt], b"pilot takes over")
    # Only what somebody waits for is divested.
    assert gen.attribute_ownership_divestiture_if_wanted(h.aircraft, [h.alt, h.lat]) == [h.alt]
    assert not gen.is_attribute_owned_by_federate(h.aircraft, h.alt)
    assert gen.is_attribute_owned_by_federate(h.aircraft, h.lat)
    acquired = evoke_until(pilot, h.pilot_amb, "attribute_ownership_acquisition_notification")
    assert acquired[:2] == (h.aircraft, [h.alt])
    pilot.update_attribute_values(h.aircraft, {h.alt: b"FL350"})
    assert h.reflected(gen, h.gen_amb, h.alt, b"FL350") == pilot.handle

    # Back: the pilot offers, the generator takes if available, the pilot confirms.
    pilot.negotiated_attribute_ownership_divestiture(h.aircraft, [h.alt], tag=b"handing back")
    offer = evoke_until(gen, h.gen_amb, "request_attribute_ownership_assumption")
    assert offer == (h.aircraft, [h.alt], b"handing back")
    gen.attribute_ownership_acquisition_if_available(h.aircraft, [h.alt])
    confirm = evoke_until(pilot, h.pilot_amb, "request_divestiture_confirmation")
    assert confirm == (h.aircraft, [h.alt])
    # Offered but not yet divested: the pilot still owns it.
    assert pilot.is_attribute_owned_by_federate(h.aircraft, h.alt)
    pilot.confirm_divestiture(h.aircraft, [h.alt], tag=b"yours")
    assert not pilot.is_attribute_owned_by_federate(h.aircraft, h.alt)
    back = evoke_until(gen, h.gen_amb, "attribute_ownership_acquisition_notification")
    assert back == (h.aircraft, [h.alt], b"yours")
    assert gen.is_attribute_owned_by_federate(h.aircraft, h.alt)


def test_denied_cancelled_and_withdrawn_acquisitions_end(handover):
    h = handover
    gen, pilot = h.gen, h.pilot
    # Denied: the acquisition ends as unavailable.
    pilot.attribute_ownership_acquisition(h.aircraft, [h.lat], tag=b"please")
    evoke_until(gen, h.gen_amb, "request_attribute_ownership_release")
    gen.attribute_ownership_release_denied(h.aircraft, [h.lat])
    assert evoke_until(pilot, h.pilot_amb, "attribute_ownership_unavailable") == (h.aircraft, [h.lat])
    # If available, but owned and not offered: unavailable at once.
    pilot.attribute_ownership_acquisition_if_available(h.aircraft, [h.lat])
    assert evoke_until(pilot, h.pilot_amb, "attribute_ownership_unavailable", 2) == (
        h.aircraft,
        [h.lat],
    )
    # Cancelled: confirmed; the owner's later release finds nobody waiting.
    pilot.attribute_ownership_acquisition(h.aircraft, [h.lat], tag=b"again")
    pilot.cancel_attribute_ownership_acquisition(h.aircraft, [h.lat])
    cancelled = evoke_until(pilot, h.pilot_amb, "confirm_attribute_ownership_acquisition_cancellation")
    assert cancelled == (h.aircraft, [h.lat])
    assert gen.attribute_ownership_divestiture_if_wanted(h.aircraft, [h.lat]) == []
    assert gen.is_attribute_owned_by_federate(h.aircraft, h.lat)
    # An offer withdrawn: the federate acquiring if available is told unavailable.
    gen.negotiated_attribute_ownership_divestiture(h.aircraft, [h.lon])
    evoke_until(pilot, h.pilot_amb, "request_attribute_ownership_assumption")
    pilot.attribute_ownership_acquisition_if_available(h.aircraft, [h.lon])
    evoke_until(gen, h.gen_amb, "request_divestiture_confirmation")
    gen.cancel_negotiated_attribute_ownership_divestiture(h.aircraft, [h.lon])
    assert evoke_until(pilot, h.pilot_amb, "attribute_ownership_unavailable", 3) == (
        h.aircraft,
        [h.lon],
    )
    assert gen.is_attribute_owned_by_federate(h.aircraft, h.lon)
    assert not pilot.is_attribute_owned_by_federate(h.aircraft, h.lon)


def test_misuse_raises_the_standards_exceptions(federation):
    rti, name, joined = federation
    h = Handover(rti, name)
    radar_amb = Recorder()
    radar = rti.join_federation_execution(name, radar_amb, name="radar")
    joined += [h.pilot, h.gen, radar]
    gen, pilot = h.gen, h.pilot
    radar.subscribe_object_class_attributes(h.aircraft_class, [h.lat])
    evoke_until(radar, radar_amb, "discover_object_instance")

    # Divesting what one does not own.
    with pytest.raises(glidepath.AttributeNotOwned):
        pilot.unconditional_attribute_ownership_divestiture(h.aircraft, [h.lat])
    with pytest.raises(glidepath.AttributeNotOwned):
        pilot.negotiated_attribute_ownership_divestiture(h.aircraft, [h.lat])
    # An unknown instance; an attribute of another class.
    with pytest.raises(glidepath.ObjectInstanceNotKnown):
        gen.unconditional_attribute_ownership_divestiture(h.aircraft + 1000, [h.lat])
    plan = gen.get_object_class_handle("FlightPlan")
    route = gen.get_attribute_handle(plan, "route")
    with pytest.raises(glidepath.AttributeNotDefined):
        gen.query_attribute_ownership(h.aircraft, route)
    # Acquiring only what one publishes, and not what one owns.
    with pytest.raises(glidepath.ObjectClassNotPublished):
        radar.attribute_ownership_acquisition(h.aircraft, [h.lat])
    radar.publish_object_class_attributes(h.aircraft_class, [h.lat])
    with pytest.raises(glidepath.AttributeNotPublished):
        radar.attribute_ownership_acquisition_if_available(h.aircraft, [h.alt])
    with pytest.raises(glidepath.FederateOwnsAttributes):
        gen.attribute_ownership_acquisition(h.aircraft, [h.lat])
    # Twice the same acquisition; cancelling or denying what was not asked.
    pilot.attribute_ownership_acquisition(h.aircraft, [h.lat])
    with pytest.raises(glidepath.AttributeAlreadyBeingAcquired):
        pilot.attribute_ownership_acquisition(h.aircraft, [h.lat])
    with pytest.raises(glidepath.AttributeAcquisitionWasNotRequested):
        pilot.cancel_attribute_ownership_acquisition(h.aircraft, [h.lon])
    # Pending acquisitions: no unpublishing, no resigning without cancelling them.
    with pytest.raises(glidepath.OwnershipAcquisitionPending):
        pilot.unpublish_object_class(h.aircraft_class)
    with pytest.raises(glidepath.OwnershipAcquisitionPending):
        pilot.resign_federation_execution(glidepath.ResignAction.DELETE_OBJECTS_THEN_DIVEST)
    pilot.cancel_attribute_ownership_acquisition(h.aircraft, [h.lat])
    evoke_until(pilot, h.pilot_amb, "confirm_attribute_ownership_acquisition_cancellation")
    # Confirming with no divestiture requested, offering twice, confirming when
    # nobody waits any more.
    with pytest.raises(glidepath.AttributeDivestitureWasNotRequested):
        gen.confirm_divestiture(h.aircraft, [h.lat])
    with pytest.raises(glidepath.AttributeDivestitureWasNotRequested):
        gen.cancel_negotiated_attribute_ownership_divestiture(h.aircraft, [h.lat])
    gen.negotiated_attribute_ownership_divestiture(h.aircraft, [h.lat])
    with pytest.raises(glidepath.AttributeAlreadyBeingDivested):
        gen.negotiated_attribute_ownership_divestiture(h.aircraft, [h.lat])
    with pytest.raises(glidepath.NoAcquisitionPending):
        gen.confirm_divestiture(h.aircraft, [h.lat])
    # Every one of them is an RTIexception.
    for e in (
        glidepath.AttributeNotPublished,
        glidepath.AttributeAlreadyBeingDivested,
        glidepath.AttributeDivestitureWasNotRequested,
        glidepath.AttributeAlreadyBeingAcquired,
        glidepath.AttributeAcquisitionWasNotRequested,
        glidepath.NoAcquisitionPending,
        glidepath.OwnershipAcquisitionPending,
    ):
        assert issubclass(e, glidepath.RTIexception)


def test_ownership_callbacks_reach_an_immediate_ambassador(federation):
    rti, name, joined = federation
    h = Handover(rti, name, pilot_model=glidepath.ProcessModel.IMMEDIATE)
    joined += [h.pilot, h.gen]
    deadline = time.monotonic() + 20
    while not h.pilot_amb.named("discover_object_instance"):
        assert time.monotonic() < deadline, "no discovery"
        time.sleep(0.01)
    h.pilot.attribute_ownership_acquisition(h.aircraft, [h.lat], tag=b"now")
    evoke_until(h.gen, h.gen_amb, "request_attribute_ownership_release")
    assert h.gen.attribute_ownership_divestiture_if_wanted(h.aircraft, [h.lat]) == [h.lat]
    while not h.pilot_amb.named("attribute_ownership_acquisition_notification"):
        assert time.monotonic() < deadline, "no acquisition notification"
        time.sleep(0.01)
    assert h.pilot_amb.named("attribute_ownership_acquisition_notification")[0][:2] == (
        h.aircraft,
        [h.lat],
    )
    assert h.pilot.is_attribute_owned_by_federate(h.aircraft, h.lat)
    assert h.pilot.callback_errors == 0
