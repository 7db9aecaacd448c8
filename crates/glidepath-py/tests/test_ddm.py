"""Data distribution management from Python: regions over the air-traffic FOM's
Latitude, Longitude and FlightLevel dimensions; an interaction or an update reaches a
subscriber only where its regions overlap the subscriber's; the standard's exceptions
for a bad range, a region in use, a dimension the class does not have."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import glidepath

FOM = str(Path(__file__).resolve().parents[3] / "foms" / "air-traffic.xml")


class Inbox(glidepath.FederateAmbassador):
    def __init__(self) -> None:
        self.interactions: list = []
        self.reflections: list = []
        self.discovered: list = []
        self.scope: list = []

    def attributes_in_scope(self, instance, attributes):
        self.scope.append(("in", instance, attributes))

    def attributes_out_of_scope(self, instance, attributes):
        self.scope.append(("out", instance, attributes))

    def receive_interaction(self, interaction_class, parameters, tag, info):
        self.interactions.append(parameters)

    def discover_object_instance(self, instance, object_class, name, producer):
        self.discovered.append(instance)

    def reflect_attribute_values(self, instance, object_class, values, tag, info):
        self.reflections.append((instance, values))


def drain(fed: glidepath.Federate, seconds: float = 0.5) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        fed.evoke(0.05)


@pytest.fixture(params=["inproc", "nats"])
def pair(request):
    """A sector subscriber and a traffic publisher, in one process or over a real
    nats-server, where regions filter on the wire (cells of an 8 x 8 grid)."""
    server = None
    if request.param == "nats":
        url = request.getfixturevalue("nats_url")
        rti = glidepath.Rti(transport="nats", nats_url=url, ddm_cells=8)
        server = rti.ensure_executive()
    else:
        rti = glidepath.Rti()
    name = f"ddm-{time.monotonic_ns()}"
    rti.create_federation_execution(name, [FOM])
    inbox = Inbox()
    sub = rti.join_federation_execution(name, inbox, name="sector")
    pub = rti.join_federation_execution(name, glidepath.FederateAmbassador(), name="traffic")
    yield sub, pub, inbox
    for f in (sub, pub):
        f.resign_federation_execution()
    rti.destroy_federation_execution(name)
    if server is not None:
        server.close()


def box(fed, dims, lat, lon):
    r = fed.create_region([dims["Latitude"], dims["Longitude"]])
    fed.set_range_bounds(r, dims["Latitude"], lat)
    fed.set_range_bounds(r, dims["Longitude"], lon)
    fed.commit_region_modifications([r])
    return r


def test_an_interaction_reaches_only_the_overlapping_subscriber(pair):
    sub, pub, inbox = pair
    dims = {n: sub.get_dimension_handle(n) for n in ("Latitude", "Longitude", "FlightLevel")}
    assert sub.get_dimension_name(dims["Latitude"]) == "Latitude"
    assert sub.get_dimension_upper_bound(dims["Latitude"]) == 180_000
    sndem = sub.get_interaction_class_handle("SndemMessage")
    assert sorted(sub.get_available_dimensions_for_interaction_class(sndem)) == sorted(dims.values())
    sector = box(sub, dims, (127_000, 128_500), (57_000, 59_000))  # 37..38.5 N, 123..121 W
    assert sub.get_range_bounds(sector, dims["Latitude"]) == (127_000, 128_500)
    assert sorted(sub.get_dimension_handle_set(sector)) == sorted([dims["Latitude"], dims["Longitude"]])
    sub.subscribe_interaction_class_with_regions(sndem, [sector])

    pub.publish_interaction_class(sndem)
    vid = pub.get_parameter_handle(sndem, "vid")
    point = pub.create_region([dims["Latitude"], dims["Longitude"]])
    sent = {"inside": (127_500, 58_000), "north": (129_000, 58_000), "edge": (128_500, 58_000)}
    for label, (lat, lon) in sent.items():
        pub.set_range_bounds(point, dims["Latitude"], (lat, lat + 1))
        pub.set_range_bounds(point, dims["Longitude"], (lon, lon + 1))
        pub.commit_region_modifications([point])
        pub.send_interaction_with_regions(sndem, {vid: label.encode()}, [point])
    pub.send_interaction(sndem, {vid: b"no-region"})  # the default region overlaps all
    drain(sub)
    got = sorted(v[vid] for v in inbox.interactions)
    assert got == [b"inside", b"no-region"], got  # upper bounds are excluded

    # A region in use cannot go; unsubscribed, it can.
    with pytest.raises(glidepath.RegionInUseForUpdateOrSubscription):
        sub.delete_region(sector)
    sub.unsubscribe_interaction_class_with_regions(sndem, [sector])
    sub.delete_region(sector)
    with pytest.raises(glidepath.InvalidRegion):
        sub.set_range_bounds(sector, dims["Latitude"], (0, 1))


def test_updates_reach_the_subscriber_only_within_its_region(pair):
    sub, pub, inbox = pair
    fl = sub.get_dimension_handle("FlightLevel")
    aircraft = sub.get_object_class_handle("Aircraft")
    alt = sub.get_attribute_handle(aircraft, "altitudeFt")
    assert sub.get_available_dimensions_for_class_attribute(aircraft, alt) == [fl]
    band = sub.create_region([fl])
    sub.set_range_bounds(band, fl, (100, 300))  # FL100 to FL300
    sub.commit_region_modifications([band])
    sub.subscribe_object_class_attributes_with_regions(aircraft, [([alt], [band])])

    pub.publish_object_class_attributes(aircraft, [alt])
    level = pub.create_region([fl])
    pub.set_range_bounds(level, fl, (350, 351))
    pub.commit_region_modifications([level])
    high = pub.register_object_instance_with_regions(aircraft, [([alt], [level])])
    pub.update_attribute_values(high, {alt: pub.encode_attribute(alt, 35_000.0)})
    drain(sub)
    assert inbox.reflections == [], "FL350 is above the band"
    # Descending into the band: the update region moves, the update arrives.
    pub.set_range_bounds(level, fl, (250, 251))
    pub.commit_region_modifications([level])
    pub.update_attribute_values(high, {alt: pub.encode_attribute(alt, 25_000.0)})
    drain(sub)
    assert [pub.decode_attribute(alt, v[alt]) for _, v in inbox.reflections] == [25_000.0]
    assert inbox.discovered, "discovered when its first update overlapped"
    pub.unassociate_regions_for_updates(high, [([alt], [level])])


def test_bad_regions_raise_the_standards_exceptions(pair):
    sub, _, _ = pair
    lat = sub.get_dimension_handle("Latitude")
    fl = sub.get_dimension_handle("FlightLevel")
    r = sub.create_region([lat])
    with pytest.raises(glidepath.InvalidRangeBound):
        sub.set_range_bounds(r, lat, (0, 180_001))
    with pytest.raises(glidepath.RegionDoesNotContainSpecifiedDimension):
        sub.set_range_bounds(r, fl, (0, 1))
    with pytest.raises(glidepath.InvalidDimensionHandle):
        sub.create_region([9_999])
    with pytest.raises(glidepath.NameNotFound):
        sub.get_dimension_handle("Altitude")
    # Latitude is not available for Aircraft's altitude: the region does not fit it.
    aircraft = sub.get_object_class_handle("Aircraft")
    alt = sub.get_attribute_handle(aircraft, "altitudeFt")
    with pytest.raises(glidepath.InvalidRegionContext):
        sub.subscribe_object_class_attributes_with_regions(aircraft, [([alt], [r])])
    assert issubclass(glidepath.InvalidRegion, glidepath.RTIexception)


def test_scope_advisories_follow_the_update_region(pair):
    sub, pub, inbox = pair
    fl = sub.get_dimension_handle("FlightLevel")
    aircraft = sub.get_object_class_handle("Aircraft")
    alt = sub.get_attribute_handle(aircraft, "altitudeFt")
    band = sub.create_region([fl])
    sub.set_range_bounds(band, fl, (100, 300))
    sub.commit_region_modifications([band])
    sub.subscribe_object_class_attributes_with_regions(aircraft, [([alt], [band])])
    sub.enable_attribute_scope_advisory_switch()
    with pytest.raises(glidepath.AttributeScopeAdvisorySwitchIsOn):
        sub.enable_attribute_scope_advisory_switch()
    drain(pub, 0.3)  # the publisher hears that the sector watches

    pub.publish_object_class_attributes(aircraft, [alt])
    level = pub.create_region([fl])
    pub.set_range_bounds(level, fl, (250, 251))
    pub.commit_region_modifications([level])
    plane = pub.register_object_instance_with_regions(aircraft, [([alt], [level])])
    pub.update_attribute_values(plane, {alt: pub.encode_attribute(alt, 25_000.0)})
    drain(sub)
    assert inbox.scope == [("in", plane, [alt])]
    # Climbing out of the band, with no update after: out of scope.
    pub.set_range_bounds(level, fl, (350, 351))
    pub.commit_region_modifications([level])
    drain(sub)
    assert inbox.scope[1:] == [("out", plane, [alt])]
    sub.disable_attribute_scope_advisory_switch()
    with pytest.raises(glidepath.AttributeScopeAdvisorySwitchIsOff):
        sub.disable_attribute_scope_advisory_switch()
