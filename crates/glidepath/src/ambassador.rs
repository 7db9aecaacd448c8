//! The federate ambassador: what a federate implements to receive callbacks.

use bytes::Bytes;
use glidepath_core::{
    AttributeHandle, Callback, FederateHandle, InteractionClassHandle, LogicalTime, MessageInfo,
    ObjectClassHandle, ObjectInstanceHandle, ParameterHandle, RestoreFailureReason, RestoreStatus,
    SaveFailureReason, SaveStatus, Values,
};

/// Receives the RTI's callbacks (the standard's `FederateAmbassador`).
///
/// Every method has a default that does nothing, so an implementation overrides only
/// what it cares about. [`FederateAmbassador::callback`] receives each [`Callback`]
/// first and dispatches it to the named methods; override it instead to handle the
/// enum directly (for example to queue callbacks elsewhere).
///
/// Callbacks reach an ambassador in the order the RTI produced them, and never from
/// two threads at once: in [`crate::ProcessModel::Evoked`] on the thread calling
/// `evoke_callback` / `evoke_multiple_callbacks`, in
/// [`crate::ProcessModel::Immediate`] on the federate's RTI thread. A callback may
/// call any [`crate::Federate`] service except the evoke calls.
#[allow(unused_variables)]
pub trait FederateAmbassador {
    /// Receives every callback `next` yields, in order, until it yields `None` (the
    /// immediate model's RTI thread hands over what is queued this way). The default
    /// calls [`FederateAmbassador::callback`] for each; an ambassador with a cost per
    /// hand-over (a lock, an interpreter's GIL) can take it once for several.
    fn callbacks(&mut self, next: &mut dyn FnMut() -> Option<Callback>) {
        while let Some(callback) = next() {
            self.callback(callback);
        }
    }

    /// Receives one callback; the default dispatches to the methods below.
    fn callback(&mut self, callback: Callback) {
        match callback {
            Callback::InitiateFederateSave { label, time } => {
                self.initiate_federate_save(&label, time)
            }
            Callback::FederationSaved { label } => self.federation_saved(&label),
            Callback::FederationNotSaved { label, reason } => {
                self.federation_not_saved(&label, &reason)
            }
            Callback::FederationSaveStatusResponse { statuses } => {
                self.federation_save_status_response(&statuses)
            }
            Callback::RequestFederationRestoreSucceeded { label } => {
                self.request_federation_restore_succeeded(&label)
            }
            Callback::RequestFederationRestoreFailed { label, reason } => {
                self.request_federation_restore_failed(&label, &reason)
            }
            Callback::FederationRestoreBegun { label } => self.federation_restore_begun(&label),
            Callback::InitiateFederateRestore {
                label,
                name,
                handle,
                saved_as,
                user_state,
            } => self.initiate_federate_restore(&label, &name, handle, saved_as, user_state),
            Callback::FederationRestored { label } => self.federation_restored(&label),
            Callback::FederationNotRestored { label, reason } => {
                self.federation_not_restored(&label, &reason)
            }
            Callback::FederationRestoreStatusResponse { statuses } => {
                self.federation_restore_status_response(&statuses)
            }
            Callback::SynchronizationPointRegistrationSucceeded { label } => {
                self.synchronization_point_registration_succeeded(&label)
            }
            Callback::SynchronizationPointRegistrationFailed { label, reason } => {
                self.synchronization_point_registration_failed(&label, &reason)
            }
            Callback::AnnounceSynchronizationPoint { label, tag } => {
                self.announce_synchronization_point(&label, tag)
            }
            Callback::FederationSynchronized { label, failed } => {
                self.federation_synchronized(&label, &failed)
            }
            Callback::ObjectInstanceNameReservationSucceeded { name } => {
                self.object_instance_name_reservation_succeeded(&name)
            }
            Callback::ObjectInstanceNameReservationFailed { name } => {
                self.object_instance_name_reservation_failed(&name)
            }
            Callback::DiscoverObjectInstance {
                instance,
                class,
                name,
                producer,
            } => self.discover_object_instance(instance, class, &name, producer),
            Callback::ReflectAttributeValues {
                instance,
                class,
                values,
                tag,
                info,
            } => self.reflect_attribute_values(instance, class, values, tag, info),
            Callback::ReceiveInteraction {
                class,
                values,
                tag,
                info,
            } => self.receive_interaction(class, values, tag, info),
            Callback::RemoveObjectInstance {
                instance,
                tag,
                info,
            } => self.remove_object_instance(instance, tag, info),
            Callback::ProvideAttributeValueUpdate {
                instance,
                attributes,
                tag,
            } => self.provide_attribute_value_update(instance, &attributes, tag),
            Callback::AttributesInScope {
                instance,
                attributes,
            } => self.attributes_in_scope(instance, &attributes),
            Callback::AttributesOutOfScope {
                instance,
                attributes,
            } => self.attributes_out_of_scope(instance, &attributes),
            Callback::TimeRegulationEnabled { time } => self.time_regulation_enabled(time),
            Callback::TimeConstrainedEnabled { time } => self.time_constrained_enabled(time),
            Callback::TimeAdvanceGrant { time } => self.time_advance_grant(time),
            Callback::RequestAttributeOwnershipAssumption {
                instance,
                attributes,
                tag,
            } => self.request_attribute_ownership_assumption(instance, &attributes, tag),
            Callback::RequestDivestitureConfirmation {
                instance,
                attributes,
            } => self.request_divestiture_confirmation(instance, &attributes),
            Callback::AttributeOwnershipAcquisitionNotification {
                instance,
                attributes,
                tag,
            } => self.attribute_ownership_acquisition_notification(instance, &attributes, tag),
            Callback::AttributeOwnershipUnavailable {
                instance,
                attributes,
            } => self.attribute_ownership_unavailable(instance, &attributes),
            Callback::RequestAttributeOwnershipRelease {
                instance,
                attributes,
                tag,
            } => self.request_attribute_ownership_release(instance, &attributes, tag),
            Callback::ConfirmAttributeOwnershipAcquisitionCancellation {
                instance,
                attributes,
            } => self.confirm_attribute_ownership_acquisition_cancellation(instance, &attributes),
            Callback::InformAttributeOwnership {
                instance,
                attribute,
                owner,
            } => self.inform_attribute_ownership(instance, attribute, owner),
            Callback::AttributeIsNotOwned {
                instance,
                attribute,
            } => self.attribute_is_not_owned(instance, attribute),
            Callback::AttributeIsOwnedByRti {
                instance,
                attribute,
            } => self.attribute_is_owned_by_rti(instance, attribute),
        }
    }

    /// A synchronization point this federate registered was accepted.
    fn synchronization_point_registration_succeeded(&mut self, label: &str) {}
    /// A synchronization point this federate registered was refused (label in use,
    /// or a listed federate is not joined).
    fn synchronization_point_registration_failed(&mut self, label: &str, reason: &str) {}
    /// This federate is asked to reach a synchronization point.
    fn announce_synchronization_point(&mut self, label: &str, tag: Bytes) {}
    /// Every federate asked has reached the point; `failed` lists those that reported failure.
    fn federation_synchronized(&mut self, label: &str, failed: &[FederateHandle]) {}
    /// An object instance name was reserved for this federate.
    fn object_instance_name_reservation_succeeded(&mut self, name: &str) {}
    /// An object instance name could not be reserved (already reserved or in use).
    fn object_instance_name_reservation_failed(&mut self, name: &str) {}
    /// A new object instance of a subscribed class (or subclass, seen as the
    /// subscribed class) is known to this federate.
    fn discover_object_instance(
        &mut self,
        instance: ObjectInstanceHandle,
        class: ObjectClassHandle,
        name: &str,
        producer: FederateHandle,
    ) {
    }
    /// New values for subscribed attributes of a known instance.
    fn reflect_attribute_values(
        &mut self,
        instance: ObjectInstanceHandle,
        class: ObjectClassHandle,
        values: Values<AttributeHandle>,
        tag: Bytes,
        info: MessageInfo,
    ) {
    }
    /// An interaction of a subscribed class (or subclass, seen as the subscribed class
    /// with only its parameters).
    fn receive_interaction(
        &mut self,
        class: InteractionClassHandle,
        values: Values<ParameterHandle>,
        tag: Bytes,
        info: MessageInfo,
    ) {
    }
    /// A known instance was deleted by its owner.
    fn remove_object_instance(
        &mut self,
        instance: ObjectInstanceHandle,
        tag: Bytes,
        info: MessageInfo,
    ) {
    }
    /// Another federate asks this owner to send current values of `attributes`.
    fn provide_attribute_value_update(
        &mut self,
        instance: ObjectInstanceHandle,
        attributes: &[AttributeHandle],
        tag: Bytes,
    ) {
    }
    /// These attributes of a discovered instance came into scope (data distribution
    /// management; only while the attribute scope advisory switch is on).
    fn attributes_in_scope(
        &mut self,
        instance: ObjectInstanceHandle,
        attributes: &[AttributeHandle],
    ) {
    }
    /// These attributes went out of scope (only while the switch is on).
    fn attributes_out_of_scope(
        &mut self,
        instance: ObjectInstanceHandle,
        attributes: &[AttributeHandle],
    ) {
    }
    /// Time regulation is enabled; the federate's logical time is now `time`.
    fn time_regulation_enabled(&mut self, time: LogicalTime) {}
    /// Time constrained is enabled; the federate's logical time is now `time`.
    fn time_constrained_enabled(&mut self, time: LogicalTime) {}
    /// The pending time advance (TAR, TARA, NER, NERA or FQR) is granted at `time`.
    fn time_advance_grant(&mut self, time: LogicalTime) {}
    /// Another federate offers attributes this federate publishes: acquire them (for
    /// example with `attribute_ownership_acquisition_if_available`) or ignore the offer.
    fn request_attribute_ownership_assumption(
        &mut self,
        instance: ObjectInstanceHandle,
        attributes: &[AttributeHandle],
        tag: Bytes,
    ) {
    }
    /// A federate waits for attributes this federate offers: confirm the divestiture
    /// (`confirm_divestiture`) or withdraw the offer.
    fn request_divestiture_confirmation(
        &mut self,
        instance: ObjectInstanceHandle,
        attributes: &[AttributeHandle],
    ) {
    }
    /// This federate now owns `attributes` and may update them.
    fn attribute_ownership_acquisition_notification(
        &mut self,
        instance: ObjectInstanceHandle,
        attributes: &[AttributeHandle],
        tag: Bytes,
    ) {
    }
    /// The acquisition of `attributes` ended without them.
    fn attribute_ownership_unavailable(
        &mut self,
        instance: ObjectInstanceHandle,
        attributes: &[AttributeHandle],
    ) {
    }
    /// A federate wants attributes this federate owns: release them
    /// (`attribute_ownership_divestiture_if_wanted`) or refuse
    /// (`attribute_ownership_release_denied`).
    fn request_attribute_ownership_release(
        &mut self,
        instance: ObjectInstanceHandle,
        attributes: &[AttributeHandle],
        tag: Bytes,
    ) {
    }
    /// The acquisition of `attributes` is cancelled.
    fn confirm_attribute_ownership_acquisition_cancellation(
        &mut self,
        instance: ObjectInstanceHandle,
        attributes: &[AttributeHandle],
    ) {
    }
    /// Answer to `query_attribute_ownership`: `owner` owns the attribute.
    fn inform_attribute_ownership(
        &mut self,
        instance: ObjectInstanceHandle,
        attribute: AttributeHandle,
        owner: FederateHandle,
    ) {
    }
    /// Answer to `query_attribute_ownership`: nobody owns the attribute.
    fn attribute_is_not_owned(
        &mut self,
        instance: ObjectInstanceHandle,
        attribute: AttributeHandle,
    ) {
    }
    /// Answer to `query_attribute_ownership`: the RTI owns the attribute (management
    /// object model instances).
    fn attribute_is_owned_by_rti(
        &mut self,
        instance: ObjectInstanceHandle,
        attribute: AttributeHandle,
    ) {
    }
    /// Save now: call `federate_save_begun`, then `federate_save_complete` with the
    /// bytes of your own state (`time`: the save's time, when it had one; you have
    /// been granted it).
    fn initiate_federate_save(&mut self, label: &str, time: Option<LogicalTime>) {}
    /// Every federate saved: the save `label` is kept.
    fn federation_saved(&mut self, label: &str) {}
    /// The save `label` failed.
    fn federation_not_saved(&mut self, label: &str, reason: &SaveFailureReason) {}
    /// Answer to `query_federation_save_status`.
    fn federation_save_status_response(&mut self, statuses: &[(FederateHandle, SaveStatus)]) {}
    /// Answer to `request_federation_restore`: the restore begins.
    fn request_federation_restore_succeeded(&mut self, label: &str) {}
    /// Answer to `request_federation_restore`: it cannot be done, and why.
    fn request_federation_restore_failed(&mut self, label: &str, reason: &str) {}
    /// A federation restore begins: the federation waits until every federate restored.
    fn federation_restore_begun(&mut self, label: &str) {}
    /// The RTI state is the saved one again: restore your own state from
    /// `user_state` (the bytes you saved), then call `federate_restore_complete`.
    /// You are now `handle` and `name`, in the place of the saved federate `saved_as`.
    fn initiate_federate_restore(
        &mut self,
        label: &str,
        name: &str,
        handle: FederateHandle,
        saved_as: FederateHandle,
        user_state: Bytes,
    ) {
    }
    /// Every federate restored the save `label`.
    fn federation_restored(&mut self, label: &str) {}
    /// The restore of `label` failed.
    fn federation_not_restored(&mut self, label: &str, reason: &RestoreFailureReason) {}
    /// Answer to `query_federation_restore_status`.
    fn federation_restore_status_response(&mut self, statuses: &[(FederateHandle, RestoreStatus)]) {
    }
}

/// Forwards to the boxed ambassador, so `Box<dyn FederateAmbassador + Send>` is one too.
impl<A: FederateAmbassador + ?Sized> FederateAmbassador for Box<A> {
    fn callback(&mut self, callback: Callback) {
        (**self).callback(callback)
    }
}

/// Collects every callback, in order: handy in tests and small tools.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CallbackLog {
    /// The callbacks received so far, oldest first.
    pub callbacks: Vec<Callback>,
}

impl FederateAmbassador for CallbackLog {
    fn callback(&mut self, callback: Callback) {
        self.callbacks.push(callback);
    }
}
