"""The federate ambassador: subclass it and override the callbacks you need."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple, Union

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

    def attributes_in_scope(self, instance: int, attributes: List[int]) -> None:
        """These attributes of a discovered instance came into scope (the
        attribute scope advisory switch is on)."""

    def attributes_out_of_scope(self, instance: int, attributes: List[int]) -> None:
        """These attributes went out of scope (the switch is on)."""

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

    # ----- ownership management --------------------------------------------------

    def request_attribute_ownership_assumption(
        self, instance: int, attributes: List[int], tag: bytes
    ) -> None:
        """Another federate offers ``attributes`` (which this federate publishes);
        acquire them with ``attribute_ownership_acquisition(_if_available)``."""

    def request_divestiture_confirmation(self, instance: int, attributes: List[int]) -> None:
        """A federate wants attributes this federate offers; answer with
        ``confirm_divestiture`` (or cancel the offer)."""

    def attribute_ownership_acquisition_notification(
        self, instance: int, attributes: List[int], tag: bytes
    ) -> None:
        """This federate now owns ``attributes`` of ``instance``."""

    def attribute_ownership_unavailable(self, instance: int, attributes: List[int]) -> None:
        """``attributes`` cannot be acquired now; that acquisition has ended."""

    def request_attribute_ownership_release(
        self, instance: int, attributes: List[int], tag: bytes
    ) -> None:
        """A federate wants attributes this federate owns; release them with
        ``attribute_ownership_divestiture_if_wanted`` or refuse with
        ``attribute_ownership_release_denied``."""

    def confirm_attribute_ownership_acquisition_cancellation(
        self, instance: int, attributes: List[int]
    ) -> None:
        """The acquisition of ``attributes`` is cancelled."""

    def inform_attribute_ownership(self, instance: int, attribute: int, owner: int) -> None:
        """Answers ``query_attribute_ownership``: federate ``owner`` owns ``attribute``."""

    def attribute_is_not_owned(self, instance: int, attribute: int) -> None:
        """Answers ``query_attribute_ownership``: nobody owns ``attribute``."""

    def attribute_is_owned_by_rti(self, instance: int, attribute: int) -> None:
        """Answers ``query_attribute_ownership``: the RTI owns ``attribute`` (the
        management object model's instances)."""

    # ----- federation save and restore -------------------------------------------
    #
    # Reasons and statuses are strings, the names of the RTI's enumerators:
    # save failure reasons "FederateReportedFailure", "FederateResigned",
    # "SaveAborted", "StorageFailed"; restore failure reasons
    # "FederateReportedFailure", "FederateResigned", "RestoreAborted"; save statuses
    # "NoSaveInProgress", "FederateInstructedToSave", "FederateSaving",
    # "FederateWaitingForFederationToSave"; restore statuses "NoRestoreInProgress",
    # "FederateInstructedToRestore", "FederateWaitingForFederationToRestore".

    def initiate_federate_save(self, label: str, time: Optional[Time]) -> None:
        """Save now: call ``federate_save_begun``, then ``federate_save_complete``
        with this federate's own state (``time`` is the save's time, ``None`` for an
        untimed save)."""

    def federation_saved(self, label: str) -> None:
        """Every federate saved: save ``label`` is kept."""

    def federation_not_saved(self, label: str, reason: str) -> None:
        """Save ``label`` failed; ``reason`` is a save failure reason's name."""

    def federation_save_status_response(self, statuses: List[Tuple[int, str]]) -> None:
        """Answers ``query_federation_save_status``: ``(federate, save status)`` pairs."""

    def request_federation_restore_succeeded(self, label: str) -> None:
        """This federate's restore request for ``label`` is accepted."""

    def request_federation_restore_failed(self, label: str, reason: str) -> None:
        """This federate's restore request for ``label`` is refused; ``reason`` says why."""

    def federation_restore_begun(self, label: str) -> None:
        """The federation is restoring ``label``: time stands still until it ends."""

    def initiate_federate_restore(
        self, label: str, name: str, handle: int, saved_as: int, user_state: bytes
    ) -> None:
        """This federate's RTI state is the saved one again: take back its own state
        from ``user_state`` (what it passed to ``federate_save_complete``), then call
        ``federate_restore_complete``. It is ``handle`` and ``name``, in the place of
        the saved federate ``saved_as``."""

    def federation_restored(self, label: str) -> None:
        """Every federate restored ``label``."""

    def federation_not_restored(self, label: str, reason: str) -> None:
        """Restore ``label`` failed; ``reason`` is a restore failure reason's name."""

    def federation_restore_status_response(self, statuses: List[Tuple[int, str]]) -> None:
        """Answers ``query_federation_restore_status``: ``(federate, restore status)``
        pairs."""
