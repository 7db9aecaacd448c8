"""The group-communication bus under its own name: ``from glidepath import bus``.

The same classes as ``glidepath.Bus`` and friends, named as the bus names them:
:class:`Bus`, :class:`Message` (key/type/value entries; ``publish`` also takes a plain
``dict``), :class:`Subscription`, :class:`Delivery`, :class:`Membership`,
:class:`BusError`, and :data:`SERVICE_LEVELS`, Spread's six levels, weakest first.
"""

from glidepath._glidepath import Bus, BusDelivery, BusError, BusMembership, BusMessage, BusSubscription

Message = BusMessage
Subscription = BusSubscription
Delivery = BusDelivery
Membership = BusMembership

#: Spread's service levels, weakest first: what ``Bus.publish(level=...)`` accepts.
SERVICE_LEVELS = ("unreliable", "reliable", "fifo", "causal", "agreed", "safe")

#: The value type letters of a message entry and the Python type each holds.
VALUE_TYPES = {"I": int, "F": float, "D": float, "L": int, "B": bool, "S": str, "X": bytes}

__all__ = [
    "Bus",
    "Message",
    "Subscription",
    "Delivery",
    "Membership",
    "BusError",
    "SERVICE_LEVELS",
    "VALUE_TYPES",
]
