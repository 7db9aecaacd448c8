"""Typed values: Python values in the HLA encodings of the FOM's data types, checked
byte for byte, through a real update between two Python federates, and bad values
and bad bytes raising EncoderException with where and why."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

import glidepath

REPO = Path(__file__).resolve().parents[3]
AIR_TRAFFIC = str(REPO / "foms" / "air-traffic.xml")


class Recorder(glidepath.FederateAmbassador):
    def __init__(self) -> None:
        self.reflections: list = []

    def discover_object_instance(self, instance, object_class, name, producer):
        pass

    def reflect_attribute_values(self, instance, object_class, values, tag, info):
        self.reflections.append(values)


@pytest.fixture
def federation():
    rti = glidepath.Rti()
    rti.create_federation_execution("values", [AIR_TRAFFIC])
    sender = rti.join_federation_execution("values", glidepath.FederateAmbassador(), name="sender")
    amb = Recorder()
    receiver = rti.join_federation_execution("values", amb, name="receiver")
    yield sender, receiver, amb
    for fed in (sender, receiver):
        fed.resign_federation_execution()
    rti.destroy_federation_execution("values")


def test_basic_types_encode_as_the_standard_says(federation):
    fed, _, _ = federation
    assert fed.encode("HLAfloat64BE", 1.5) == struct.pack(">d", 1.5)
    assert fed.encode("HLAinteger32BE", -2) == struct.pack(">i", -2)
    assert fed.encode("HLAboolean", True) == b"\x00\x00\x00\x01"
    assert fed.encode("HLAunicodeString", "KLM12") == struct.pack(">i5H", 5, *map(ord, "KLM12"))
    assert fed.encode("HLAopaqueData", b"\x01\x02") == b"\x00\x00\x00\x02\x01\x02"
    assert fed.decode("HLAfloat64BE", struct.pack(">d", 2.25)) == 2.25
    assert fed.decode("HLAboolean", b"\x00\x00\x00\x00") is False
    assert fed.decode("HLAunicodeString", fed.encode("HLAunicodeString", "Zürich")) == "Zürich"


def test_records_enumerations_and_lists_round_trip(federation):
    fed, _, _ = federation
    meta = {"src": "tg", "ver": 3, "run": "r1", "tpub": 1_700_000_000_000_000}
    data = fed.encode("TrackMetadata", meta)
    # src: count 2 and two code units (8 bytes); ver at 8; run at 12..20; tpub
    # (an 8-byte integer) padded to 24.
    assert len(data) == 32
    assert data[8:12] == struct.pack(">i", 3)
    assert data[24:] == struct.pack(">q", meta["tpub"])
    assert fed.decode("TrackMetadata", data) == meta
    assert fed.encode("FlightRules", "VFR") == b"\x01"
    assert fed.decode("FlightRules", b"\x03") == "VfrThenIfr"
    names = ["a.xml", "bb.xml"]
    assert fed.decode("HLAmoduleDesignatorList", fed.encode("HLAmoduleDesignatorList", names)) == names


def test_attribute_values_travel_typed_between_federates(federation):
    sender, receiver, amb = federation
    aircraft = sender.get_object_class_handle("Aircraft")
    altitude = sender.get_attribute_handle(aircraft, "altitudeFt")
    metadata = sender.get_attribute_handle(aircraft, "trackMetadata")
    sender.publish_object_class_attributes(aircraft, [altitude, metadata])
    receiver.subscribe_object_class_attributes(aircraft, [altitude, metadata])
    instance = sender.register_object_instance(aircraft)
    meta = {"src": "python", "ver": 1, "run": "test", "tpub": 42}
    sender.update_attribute_values(
        instance,
        {
            altitude: sender.encode_attribute(altitude, 35_000.0),
            metadata: sender.encode_attribute(metadata, meta),
        },
    )
    for _ in range(100):
        receiver.evoke(0.05)
        if amb.reflections:
            break
    values = amb.reflections[0]
    assert receiver.decode_attribute(altitude, values[altitude]) == 35_000.0
    assert receiver.decode_attribute(metadata, values[metadata]) == meta


def test_bad_values_and_bad_bytes_raise_encoder_exceptions(federation):
    fed, _, _ = federation
    assert issubclass(glidepath.EncoderException, glidepath.RTIexception)
    cases = [
        (lambda: fed.encode("HLAinteger16BE", 40_000), "40000 is outside -32768..=32767"),
        (lambda: fed.encode("HLAfloat64BE", "high"), "expected a number, got text"),
        (lambda: fed.encode("FlightRules", "SVFR"), "no enumerator `SVFR`"),
        (lambda: fed.encode("TrackMetadata", {"src": "x"}), "the field `ver` is missing"),
        (lambda: fed.encode("TrackMetadata", {"src": "x", "ver": 1, "run": "r", "tpub": 0, "extra": 1}),
         "no field `extra`"),
        (lambda: fed.encode("NoSuchType", 1), "no data type `NoSuchType`"),
        (lambda: fed.encode("HLAinteger64BE", 2**70), "does not fit a 64-bit integer"),
        (lambda: fed.encode("HLAfloat64BE", object()), "cannot encode a object"),
        (lambda: fed.decode("HLAfloat64BE", b"\x00"), "8 bytes needed at 0"),
        (lambda: fed.decode("HLAunicodeString", b"\xff\xff\xff\xff"), "a negative element count"),
        (lambda: fed.decode("FlightRules", b"\x09"), "9 is the value of no enumerator"),
    ]
    for call, expected in cases:
        with pytest.raises(glidepath.EncoderException) as e:
            call()
        assert expected in str(e.value), (expected, str(e.value))
    # The path names the field that is wrong.
    with pytest.raises(glidepath.EncoderException, match="at `/ver`"):
        fed.encode("TrackMetadata", {"src": "x", "ver": 2**40, "run": "r", "tpub": 0})
    with pytest.raises(glidepath.InvalidAttributeHandle):
        fed.encode_attribute(999_999, 1.0)


VARIANT_FOM = """<?xml version="1.0" encoding="UTF-8"?>
<objectModel xmlns="http://standards.ieee.org/IEEE1516-2010">
  <modelIdentification><name>variants</name><type>FOM</type><version>1</version></modelIdentification>
  <dataTypes>
    <enumeratedDataTypes>
      <enumeratedData><name>Kind</name><representation>HLAinteger16BE</representation>
        <enumerator><name>Circle</name><value>1</value></enumerator>
        <enumerator><name>Gone</name><value>2</value></enumerator>
      </enumeratedData>
    </enumeratedDataTypes>
    <variantRecordDataTypes>
      <variantRecordData><name>Shape</name><discriminant>kind</discriminant><dataType>Kind</dataType>
        <alternative><enumerator>Circle</enumerator><name>radius</name><dataType>HLAinteger32BE</dataType></alternative>
        <alternative><enumerator>HLAother</enumerator><name>none</name><dataType>NA</dataType></alternative>
        <encoding>HLAvariantRecord</encoding>
      </variantRecordData>
    </variantRecordDataTypes>
  </dataTypes>
</objectModel>
"""


def test_a_variant_record_is_a_dict_of_its_discriminant_and_alternative(tmp_path):
    fom = tmp_path / "variants.xml"
    fom.write_text(VARIANT_FOM)
    rti = glidepath.Rti()
    rti.create_federation_execution("variants", [str(fom)])
    fed = rti.join_federation_execution("variants", glidepath.FederateAmbassador(), name="v")
    try:
        circle = {"kind": "Circle", "radius": 300}
        data = fed.encode("Shape", circle)
        assert data == struct.pack(">hxxi", 1, 300)
        assert fed.decode("Shape", data) == circle
        assert fed.decode("Shape", fed.encode("Shape", {"kind": "Gone"})) == {"kind": "Gone"}
        with pytest.raises(glidepath.EncoderException, match="radius"):
            fed.encode("Shape", {"kind": "Circle"})
        with pytest.raises(glidepath.EncoderException, match="without a value"):
            fed.encode("Shape", {"kind": "Gone", "none": 1})
    finally:
        fed.resign_federation_execution()
        rti.destroy_federation_execution("variants")
