"""A Python subscriber that stops evoking once it has received some updates, and
waits to be killed: run by test_nats.py as a process of its own.

usage: python killed_subscriber.py NATS_URL FEDERATION
"""

import sys
import time

import glidepath


class Counter(glidepath.FederateAmbassador):
    def __init__(self):
        self.reflections = 0

    def reflect_attribute_values(self, instance, object_class, values, tag, info):
        self.reflections += 1


def main():
    url, federation = sys.argv[1], sys.argv[2]
    rti = glidepath.Rti(transport="nats", nats_url=url)
    amb = Counter()
    fed = rti.join_federation_execution(federation, amb, name="doomed-python")
    cls = fed.get_object_class_handle("BenchObject")
    payload = fed.get_attribute_handle(cls, "payload")
    fed.subscribe_object_class_attributes(cls, [payload])
    fed.publish_object_class_attributes(cls, [payload])
    fed.register_object_instance(cls)  # the flood starts when it discovers this
    while amb.reflections < 100:
        fed.evoke(1.0)
    print("ready", flush=True)
    # Stop reading: the sender's flow control now waits on us until we are killed.
    time.sleep(3600)


if __name__ == "__main__":
    main()
