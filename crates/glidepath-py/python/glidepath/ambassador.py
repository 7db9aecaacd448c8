"""The federate ambassador: subclass it and override the callbacks you need."""

from __future__ import annotations

from typing import Dict, List, Union

from glidepath._glidepath import MessageInfo

Time = Union[int, float]


class FederateAmbassador:
    """Receives the RTI's callbacks (the standard's FederateAmbassador).

    Every method does nothing by default, so a subclass overrides only what it
    needs. In the evoked model the callbacks run inside ``Federate.evoke`` /
    ``evoke_multiple`` on the calling thread, and an exception a callback raises
    propagates out of that call. In the immediate model they run on the federate's
    RTI thread (holding the GIL); an exception is reported through
    ``sys.unraisablehook`` and counted in ``Federate.callback_errors``, and the RTI
    goes on. A callback may call any federate service except the evoke calls.
    """

    # ----- federation management -------------------------------------------------

    def synchronization_point_registration_succeeded(self, label: str) -> None:
        """A synchronization point this federate registered was accepted."""

    def synchronization_point_registration_failed(self, label: str, reason: str) -> None:
        """A synchronization point this federate registered was refused."""

    def announce_synchronization_point(self, label: str, tag: bytes) -> None:
        """This federate is asked to reach synchronization point ``label``."""

    def federation_synchronized(self, label: str, failed: List[int]) -> None:
        """Every federate asked reached ``label``; ``failed`` lists those that failed."""

    # ----- object management -----------------------------------------------------

    def object_instance_name_reservation_succeeded(self, name: str) -> None:
        """An object instance name was reserved for this federate."""

    def object_instance_name_reservation_failed(self, name: str) -> None:
        """An object instance name could not be reserved."""

    def discover_object_instance(
        self, instance: int, object_class: int, name: str, producer: int
    ) -> None:
        """A new instance of a subscribed class is known to this federate."""

    def reflect_attribute_values(
        self,
        instance: int,
        object_class: int,
        values: Dict[int, bytes],
        tag: bytes,
        info: MessageInfo,
    ) -> None:
        """New values of subscribed attributes of a known instance."""

    def receive_interaction(
        self,
        interaction_class: int,
        parameters: Dict[int, bytes],
        tag: bytes,
        info: MessageInfo,
    ) -> None:
        """An interaction of a subscribed class."""

    def remove_object_instance(self, instance: int, tag: bytes, info: MessageInfo) -> None:
        """A known instance was deleted by its owner."""

    def provide_attribute_value_update(
        self, instance: int, attributes: List[int], tag: bytes
    ) -> None:
        """Another federate asks this owner for current values of ``attributes``."""

    # ----- time management -------------------------------------------------------

    def time_regulation_enabled(self, time: Time) -> None:
        """Time regulation is enabled; the federate's logical time is ``time``."""

    def time_constrained_enabled(self, time: Time) -> None:
        """Time constrained is enabled; the federate's logical time is ``time``."""

    def time_advance_grant(self, time: Time) -> None:
        """The pending time advance (TAR, TARA, NER, NERA or FQR) is granted at ``time``."""
