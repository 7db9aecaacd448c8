//! The [`Federate`] facade: the handle users call HLA services on, how a federate
//! joins ([`JoinOptions`]), and the values accepted as logical times.
//!
//! Each method is one call into the local RTI component under its lock
//! ([`Shared::call`] or [`Shared::read`]); the evoke calls wait for callbacks through
//! [`Shared::wait_callback`]. Everything that delivers callbacks (the RTI thread, the
//! waits, the wait strategies, the locks and their invariants) lives in
//! [`crate::delivery`].

use std::sync::{Arc, Weak};
use std::thread::{self, JoinHandle, ThreadId};
use std::time::{Duration, Instant};

use bytes::Bytes;
use glidepath_core::{
    AttributeHandle, Callback, FederateHandle, FederateInfo, Fom, InteractionClassHandle, LocalRti,
    LocalStats, LogicalTime, LogicalTimeInterval, ObjectClassHandle, ObjectInstanceHandle,
    ParameterHandle, ProcessModel, ResignAction, RtiError, TimeError, TimeValue,
};
use glidepath_transport::Endpoint;
use parking_lot::Mutex;

use crate::ambassador::FederateAmbassador;
use crate::delivery::{self, Shared, WaitStrategy};
use crate::error::{NameError, NameKind};
use crate::link::Outbound;

mod ddm;
mod ownership;
mod save;
mod time;

/// How a federate joins a federation execution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JoinOptions {
    /// The federate's name, unique in the federation. Default `None`: the executive
    /// names it `HLAfederate<handle>`, so anonymous federates never collide.
    pub federate_name: Option<String>,
    /// The federate's type, free text shown by `list_federates`. Default `"glidepath"`.
    pub federate_type: String,
    /// When callbacks are delivered. Default [`ProcessModel::Evoked`], because it
    /// needs no ambassador at join time and keeps callbacks on the user's thread.
    pub process_model: ProcessModel,
    /// How the thread that delivers callbacks waits for traffic. Default
    /// [`WaitStrategy::Park`]: no CPU burnt while idle.
    pub wait: WaitStrategy,
}

impl Default for JoinOptions {
    fn default() -> Self {
        JoinOptions {
            federate_name: None,
            federate_type: "glidepath".into(),
            process_model: ProcessModel::Evoked,
            wait: WaitStrategy::Park,
        }
    }
}

impl JoinOptions {
    /// Evoked-model options for a named federate of a type.
    pub fn named(federate_name: impl Into<String>, federate_type: impl Into<String>) -> Self {
        JoinOptions {
            federate_name: Some(federate_name.into()),
            federate_type: federate_type.into(),
            ..Default::default()
        }
    }

    /// The same options with another process model.
    pub fn with_process_model(mut self, process_model: ProcessModel) -> Self {
        self.process_model = process_model;
        self
    }

    /// The same options with another wait strategy.
    pub fn with_wait(mut self, wait: WaitStrategy) -> Self {
        self.wait = wait;
        self
    }
}

/// A value usable as a logical time or lookahead: an `f64` (`HLAfloat64Time`
/// federations), an `i64` (`HLAinteger64Time` federations), a `u32`, or a
/// [`LogicalTime`]. The RTI checks it against the federation's time representation:
/// `10.0` is the integer 10 in an integer federation, `10.5` is refused there.
pub trait IntoLogicalTime: Copy {
    /// The value, before it is checked against the federation's representation.
    fn into_time_value(self) -> TimeValue;
}
impl IntoLogicalTime for f64 {
    fn into_time_value(self) -> TimeValue {
        TimeValue::Float(self)
    }
}
impl IntoLogicalTime for i64 {
    fn into_time_value(self) -> TimeValue {
        TimeValue::Integer(self)
    }
}
impl IntoLogicalTime for u32 {
    fn into_time_value(self) -> TimeValue {
        TimeValue::Integer(i64::from(self))
    }
}
impl IntoLogicalTime for LogicalTime {
    fn into_time_value(self) -> TimeValue {
        self.into()
    }
}

fn logical_time(t: impl IntoLogicalTime) -> Result<LogicalTime, RtiError> {
    let v = t.into_time_value();
    match v {
        TimeValue::Float(x) => LogicalTime::new(x),
        TimeValue::Integer(i) => Some(LogicalTime::from_i64(i)),
    }
    .ok_or_else(|| TimeError::InvalidLogicalTime(v).into())
}

/// The part whose drop means "the user let go of the federate".
struct Inner {
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
    thread_id: ThreadId,
}

impl Inner {
    /// Stops the RTI thread and closes the endpoint (draining what was published).
    fn shutdown(&self) {
        self.shared.stop();
        if thread::current().id() != self.thread_id {
            if let Some(handle) = self.thread.lock().take() {
                // A panic on the RTI thread was recorded by its exit guard.
                let _ = handle.join();
            }
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        {
            let mut rti = self.shared.rti.lock();
            if !rti.is_resigned() {
                // Nobody is left to hear about a failure here; the action that never
                // fails, so a dropped federate never stays a member.
                let _ = rti.resign(
                    &mut self.shared.link(),
                    ResignAction::CancelThenDeleteThenDivest,
                );
                let _ = self.shared.send(rti);
            }
        }
        self.shutdown();
    }
}

/// A federate joined to a federation execution.
///
/// Cheap to clone; every clone is the same federate and may be used from any thread.
/// Dropping the last clone resigns with [`ResignAction::CancelThenDeleteThenDivest`]
/// (if still joined: pending acquisitions are cancelled, deletable objects deleted,
/// other owned attributes divested) and stops the federate's RTI thread.
///
/// In the immediate model an ambassador that keeps a clone keeps the federate alive:
/// keep a [`WeakFederate`] there instead, or call [`Federate::resign`] explicitly.
#[derive(Clone)]
pub struct Federate {
    inner: Arc<Inner>,
}

/// A federate reference that does not keep it joined (see [`Federate::downgrade`]).
#[derive(Clone)]
pub struct WeakFederate {
    inner: Weak<Inner>,
}

impl WeakFederate {
    /// The federate, if some [`Federate`] handle still holds it.
    pub fn upgrade(&self) -> Option<Federate> {
        self.inner.upgrade().map(|inner| Federate { inner })
    }
}

impl std::fmt::Debug for Federate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = &self.inner.shared;
        f.debug_struct("Federate")
            .field("handle", &s.handle)
            .field("name", &s.name)
            .field("federation", &s.federation_name)
            .field("process_model", &s.process_model)
            .finish()
    }
}

impl Federate {
    /// Starts the RTI thread for a freshly joined core.
    pub(crate) fn start(
        endpoint: Box<dyn Endpoint>,
        outbound: Outbound,
        rti: LocalRti,
        process_model: ProcessModel,
        wait: WaitStrategy,
        ambassador: Option<Box<dyn FederateAmbassador + Send>>,
    ) -> Result<Federate, RtiError> {
        let (shared, wake) = Shared::new(endpoint, outbound, rti, process_model, wait);
        let spawned = delivery::spawn_rti_thread(shared.clone(), wake, ambassador);
        match spawned {
            Ok(handle) => {
                let thread_id = handle.thread().id();
                let inner = Arc::new(Inner {
                    shared,
                    thread: Mutex::new(Some(handle)),
                    thread_id,
                });
                // Callbacks queued by the join itself must not wait for traffic.
                if inner.shared.read(|r| r.pending_callbacks()) > 0 {
                    inner.shared.callbacks_queued();
                }
                Ok(Federate { inner })
            }
            Err(e) => {
                let mut rti = shared.rti.lock();
                let _ = rti.resign(&mut shared.link(), ResignAction::DeleteObjects);
                let _ = shared.send(rti);
                shared.endpoint.close();
                Err(RtiError::RtiThreadNotStarted(e.to_string()))
            }
        }
    }

    fn shared(&self) -> &Shared {
        &self.inner.shared
    }

    // ----- identity -------------------------------------------------------------------

    /// This federate's handle in the federation.
    pub fn handle(&self) -> FederateHandle {
        self.shared().handle
    }
    /// This federate's name (given at join, or assigned by the executive).
    pub fn name(&self) -> &str {
        &self.shared().name
    }
    /// The federation execution's name.
    pub fn federation_name(&self) -> &str {
        &self.shared().federation_name
    }
    /// The federation's merged FOM.
    pub fn fom(&self) -> &Arc<Fom> {
        &self.shared().fom
    }
    /// The process model chosen at join.
    pub fn process_model(&self) -> ProcessModel {
        self.shared().process_model
    }
    /// A reference that does not keep the federate joined.
    pub fn downgrade(&self) -> WeakFederate {
        WeakFederate {
            inner: Arc::downgrade(&self.inner),
        }
    }
    /// True once the federate has resigned.
    pub fn is_resigned(&self) -> bool {
        self.shared().read(|r| r.is_resigned())
    }

    // ----- support services: names and handles ------------------------------------

    /// The handle of an object class by dotted name, with or without `HLAobjectRoot.`.
    pub fn object_class_handle(&self, name: &str) -> Result<ObjectClassHandle, NameError> {
        self.fom()
            .object_class_by_name(name)
            .ok_or_else(|| NameError::not_found(NameKind::ObjectClass, name))
    }
    /// The handle of an attribute (own or inherited) of an object class.
    pub fn attribute_handle(
        &self,
        class: ObjectClassHandle,
        name: &str,
    ) -> Result<AttributeHandle, NameError> {
        self.fom()
            .object_class(class)
            .ok_or(NameError::InvalidObjectClassHandle(class))?;
        self.fom()
            .attribute_by_name(class, name)
            .ok_or_else(|| NameError::not_found(NameKind::Attribute(class), name))
    }
    /// The handle of an interaction class by dotted name, with or without `HLAinteractionRoot.`.
    pub fn interaction_class_handle(
        &self,
        name: &str,
    ) -> Result<InteractionClassHandle, NameError> {
        self.fom()
            .interaction_class_by_name(name)
            .ok_or_else(|| NameError::not_found(NameKind::InteractionClass, name))
    }
    /// The handle of a parameter (own or inherited) of an interaction class.
    pub fn parameter_handle(
        &self,
        class: InteractionClassHandle,
        name: &str,
    ) -> Result<ParameterHandle, NameError> {
        self.fom()
            .interaction_class(class)
            .ok_or(NameError::InvalidInteractionClassHandle(class))?;
        self.fom()
            .parameter_by_name(class, name)
            .ok_or_else(|| NameError::not_found(NameKind::Parameter(class), name))
    }
    /// The dotted name of an object class (`HLAobjectRoot.Vehicle.Aircraft`).
    pub fn object_class_name(&self, class: ObjectClassHandle) -> Result<&str, NameError> {
        self.fom()
            .object_class(class)
            .map(|c| c.qualified_name.as_str())
            .ok_or(NameError::InvalidObjectClassHandle(class))
    }
    /// The name of an attribute.
    pub fn attribute_name(&self, attribute: AttributeHandle) -> Result<&str, NameError> {
        self.fom()
            .attribute(attribute)
            .map(|a| a.name.as_str())
            .ok_or(NameError::InvalidAttributeHandle(attribute))
    }
    /// The dotted name of an interaction class.
    pub fn interaction_class_name(&self, class: InteractionClassHandle) -> Result<&str, NameError> {
        self.fom()
            .interaction_class(class)
            .map(|c| c.qualified_name.as_str())
            .ok_or(NameError::InvalidInteractionClassHandle(class))
    }
    /// The name of a parameter.
    pub fn parameter_name(&self, parameter: ParameterHandle) -> Result<&str, NameError> {
        self.fom()
            .parameter(parameter)
            .map(|p| p.name.as_str())
            .ok_or(NameError::InvalidParameterHandle(parameter))
    }
    /// The name of an object instance this federate has discovered.
    pub fn object_instance_name(&self, instance: ObjectInstanceHandle) -> Option<String> {
        self.shared()
            .read(|r| r.object_instance_name(instance).map(str::to_string))
    }

    // ----- federation management ------------------------------------------------------

    /// The federation's members as the executive lists them.
    pub fn list_federates(&self) -> Result<Vec<FederateInfo>, RtiError> {
        self.shared().call(|r, l| r.list_federates(l))
    }

    /// Sends whatever the transport holds back (a bundle being gathered) and waits
    /// until the transport has it. Time advance requests (TAR, TARA, NER, NERA, FQR)
    /// and resign do this by themselves; call it after a burst of updates that must
    /// not wait for the bundle timer. Does nothing on `inproc`.
    pub fn flush(&self) -> Result<(), RtiError> {
        self.shared()
            .endpoint
            .flush()
            .map_err(crate::link::transport_error)
    }

    /// Resigns from the federation, deleting or divesting owned objects as `action`
    /// says, then stops the RTI thread and closes the endpoint. No callback arrives
    /// after this returns `Ok`. On `Err` the federate is still joined.
    pub fn resign(&self, action: ResignAction) -> Result<(), RtiError> {
        self.shared().call(|r, l| r.resign(l, action))?;
        self.inner.shutdown();
        Ok(())
    }

    /// Registers a synchronization point for every joined federate. The outcome
    /// arrives as `synchronization_point_registration_succeeded` (or `_failed`).
    pub fn register_federation_synchronization_point(
        &self,
        label: &str,
        tag: impl Into<Bytes>,
    ) -> Result<(), RtiError> {
        let tag = tag.into();
        self.shared()
            .call(|r, l| r.register_federation_synchronization_point(l, label, tag, None))
    }

    /// Registers a synchronization point for the listed federates only (an empty
    /// list means every joined federate, as the standard says).
    pub fn register_federation_synchronization_point_for(
        &self,
        label: &str,
        tag: impl Into<Bytes>,
        federates: &[FederateHandle],
    ) -> Result<(), RtiError> {
        let tag = tag.into();
        self.shared().call(|r, l| {
            r.register_federation_synchronization_point(l, label, tag, Some(federates.to_vec()))
        })
    }

    /// Reports that this federate reached an announced synchronization point.
    pub fn synchronization_point_achieved(&self, label: &str) -> Result<(), RtiError> {
        self.shared()
            .call(|r, l| r.synchronization_point_achieved(l, label, true))
    }

    /// Reports that this federate could not reach an announced synchronization point;
    /// it is listed in `federation_synchronized`'s `failed`.
    pub fn synchronization_point_failed(&self, label: &str) -> Result<(), RtiError> {
        self.shared()
            .call(|r, l| r.synchronization_point_achieved(l, label, false))
    }

    // ----- declaration management ---------------------------------------------------

    /// Publishes these attributes of `class` (added to those already published).
    pub fn publish_object_class_attributes(
        &self,
        class: ObjectClassHandle,
        attributes: &[AttributeHandle],
    ) -> Result<(), RtiError> {
        self.shared()
            .call(|r, _| r.publish_object_class_attributes(class, attributes))
    }
    /// Stops publishing `class`. What this federate owns of instances it knows as
    /// `class` is unconditionally divested (except the privilege to delete);
    /// refused with `OwnershipAcquisitionPending` while it acquires attributes there.
    pub fn unpublish_object_class(&self, class: ObjectClassHandle) -> Result<(), RtiError> {
        self.shared()
            .call(|r, l| r.unpublish_object_class(l, class))
    }
    /// Stops publishing these attributes of `class`, divesting what this federate
    /// owns of them, as [`Federate::unpublish_object_class`] does for the whole class.
    pub fn unpublish_object_class_attributes(
        &self,
        class: ObjectClassHandle,
        attributes: &[AttributeHandle],
    ) -> Result<(), RtiError> {
        self.shared()
            .call(|r, l| r.unpublish_object_class_attributes(l, class, attributes))
    }
    /// Subscribes these attributes of `class` (replacing the class's previous set).
    /// Instances of `class` and its subclasses, including those registered earlier,
    /// are discovered as `class` unless a closer subscribed class applies.
    pub fn subscribe_object_class_attributes(
        &self,
        class: ObjectClassHandle,
        attributes: &[AttributeHandle],
    ) -> Result<(), RtiError> {
        self.shared()
            .call(|r, l| r.subscribe_object_class_attributes(l, class, attributes))
    }
    /// Stops subscribing `class`.
    pub fn unsubscribe_object_class(&self, class: ObjectClassHandle) -> Result<(), RtiError> {
        self.shared().call(|r, _| r.unsubscribe_object_class(class))
    }
    /// Publishes an interaction class.
    pub fn publish_interaction_class(&self, class: InteractionClassHandle) -> Result<(), RtiError> {
        self.shared()
            .call(|r, _| r.publish_interaction_class(class))
    }
    /// Stops publishing an interaction class.
    pub fn unpublish_interaction_class(
        &self,
        class: InteractionClassHandle,
    ) -> Result<(), RtiError> {
        self.shared()
            .call(|r, _| r.unpublish_interaction_class(class))
    }
    /// Subscribes an interaction class; interactions of subclasses arrive as this class.
    pub fn subscribe_interaction_class(
        &self,
        class: InteractionClassHandle,
    ) -> Result<(), RtiError> {
        self.shared()
            .call(|r, _| r.subscribe_interaction_class(class))
    }
    /// Stops subscribing an interaction class.
    pub fn unsubscribe_interaction_class(
        &self,
        class: InteractionClassHandle,
    ) -> Result<(), RtiError> {
        self.shared()
            .call(|r, _| r.unsubscribe_interaction_class(class))
    }

    // ----- object management --------------------------------------------------------

    /// Asks to reserve an object instance name; the answer arrives as
    /// `object_instance_name_reservation_succeeded` (or `_failed`).
    pub fn reserve_object_instance_name(&self, name: &str) -> Result<(), RtiError> {
        self.shared()
            .call(|r, l| r.reserve_object_instance_name(l, name))
    }
    /// Releases a reserved name that was not used.
    pub fn release_object_instance_name(&self, name: &str) -> Result<(), RtiError> {
        self.shared()
            .call(|r, l| r.release_object_instance_name(l, name))
    }
    /// Registers an instance of a published class under a name the executive picks.
    pub fn register_object_instance(
        &self,
        class: ObjectClassHandle,
    ) -> Result<ObjectInstanceHandle, RtiError> {
        self.shared()
            .call(|r, l| r.register_object_instance(l, class, None))
    }
    /// Registers an instance under a name this federate reserved.
    pub fn register_object_instance_with_name(
        &self,
        class: ObjectClassHandle,
        name: &str,
    ) -> Result<ObjectInstanceHandle, RtiError> {
        self.shared()
            .call(|r, l| r.register_object_instance(l, class, Some(name)))
    }
    /// Updates published attributes of an owned instance, in receive order.
    pub fn update_attribute_values(
        &self,
        instance: ObjectInstanceHandle,
        values: impl IntoIterator<Item = (AttributeHandle, Bytes)>,
        tag: impl Into<Bytes>,
    ) -> Result<(), RtiError> {
        let (values, tag) = (values.into_iter().collect(), tag.into());
        self.shared()
            .call(|r, _| r.update_attribute_values(instance, values, tag, None))
    }
    /// Updates attributes with a time stamp: attributes the FOM orders by time stamp
    /// travel in time-stamp order when this federate is regulating (the time must then
    /// be at least logical time plus lookahead); the others in receive order.
    pub fn update_attribute_values_at(
        &self,
        instance: ObjectInstanceHandle,
        values: impl IntoIterator<Item = (AttributeHandle, Bytes)>,
        tag: impl Into<Bytes>,
        time: impl IntoLogicalTime,
    ) -> Result<(), RtiError> {
        let time = logical_time(time)?;
        let (values, tag) = (values.into_iter().collect(), tag.into());
        self.shared()
            .call(|r, _| r.update_attribute_values(instance, values, tag, Some(time)))
    }
    /// Sends an interaction of a published class, in receive order.
    pub fn send_interaction(
        &self,
        class: InteractionClassHandle,
        parameters: impl IntoIterator<Item = (ParameterHandle, Bytes)>,
        tag: impl Into<Bytes>,
    ) -> Result<(), RtiError> {
        let (values, tag) = (parameters.into_iter().collect(), tag.into());
        self.shared()
            .call(|r, _| r.send_interaction(class, values, tag, None))
    }
    /// Sends an interaction with a time stamp (time-stamp order when the FOM says so
    /// and this federate is regulating).
    pub fn send_interaction_at(
        &self,
        class: InteractionClassHandle,
        parameters: impl IntoIterator<Item = (ParameterHandle, Bytes)>,
        tag: impl Into<Bytes>,
        time: impl IntoLogicalTime,
    ) -> Result<(), RtiError> {
        let time = logical_time(time)?;
        let (values, tag) = (parameters.into_iter().collect(), tag.into());
        self.shared()
            .call(|r, _| r.send_interaction(class, values, tag, Some(time)))
    }
    /// Deletes an owned instance; subscribers get `remove_object_instance`.
    pub fn delete_object_instance(
        &self,
        instance: ObjectInstanceHandle,
        tag: impl Into<Bytes>,
    ) -> Result<(), RtiError> {
        let tag = tag.into();
        self.shared()
            .call(|r, l| r.delete_object_instance(l, instance, tag, None))
    }
    /// Deletes an owned instance with a time stamp (time-stamp order when regulating).
    pub fn delete_object_instance_at(
        &self,
        instance: ObjectInstanceHandle,
        tag: impl Into<Bytes>,
        time: impl IntoLogicalTime,
    ) -> Result<(), RtiError> {
        let time = logical_time(time)?;
        let tag = tag.into();
        self.shared()
            .call(|r, l| r.delete_object_instance(l, instance, tag, Some(time)))
    }
    /// Asks the owners of attributes of a known instance to provide current values;
    /// each gets `provide_attribute_value_update` for the attributes it owns.
    pub fn request_instance_attribute_value_update(
        &self,
        instance: ObjectInstanceHandle,
        attributes: &[AttributeHandle],
        tag: impl Into<Bytes>,
    ) -> Result<(), RtiError> {
        let tag = tag.into();
        self.shared()
            .call(|r, _| r.request_instance_attribute_value_update(instance, attributes, tag))
    }
    /// Asks the owners of every instance of `class` and its subclasses to provide values.
    pub fn request_class_attribute_value_update(
        &self,
        class: ObjectClassHandle,
        attributes: &[AttributeHandle],
        tag: impl Into<Bytes>,
    ) -> Result<(), RtiError> {
        let tag = tag.into();
        self.shared()
            .call(|r, _| r.request_class_attribute_value_update(class, attributes, tag))
    }

    // ----- callbacks (evoked model) ---------------------------------------------------

    /// Delivers one callback to `ambassador` on this thread, waiting up to `max_wait`
    /// for one. Returns whether a callback was delivered.
    ///
    /// Returns `Ok(false)` at once in the immediate model (callbacks go to the RTI
    /// thread there), after resigning, and when called from inside a callback
    /// delivered by another evoke call on this thread. Concurrent evoke calls take
    /// turns, so callbacks keep their order.
    pub fn evoke_callback(
        &self,
        ambassador: &mut impl FederateAmbassador,
        max_wait: Duration,
    ) -> Result<bool, RtiError> {
        self.check_transport()?;
        let Some(_guard) = self.shared().enter_evoke() else {
            return Ok(false);
        };
        match self
            .shared()
            .wait_callback(crate::delivery::Deadline::After(max_wait))
        {
            Some(cb) => {
                ambassador.callback(cb);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Delivers callbacks to `ambassador` on this thread: everything that arrives
    /// during `min_wait`, then whatever is already queued, stopping at `max_wait`.
    /// Returns how many were delivered. Same restrictions as [`Federate::evoke_callback`].
    pub fn evoke_multiple_callbacks(
        &self,
        ambassador: &mut impl FederateAmbassador,
        min_wait: Duration,
        max_wait: Duration,
    ) -> Result<usize, RtiError> {
        self.check_transport()?;
        let Some(_guard) = self.shared().enter_evoke() else {
            return Ok(0);
        };
        let start = Instant::now();
        let min_deadline = start.checked_add(min_wait);
        let max_deadline = start.checked_add(max_wait.max(min_wait));
        let mut delivered = 0;
        loop {
            let now = Instant::now();
            if max_deadline.is_some_and(|d| now >= d) {
                break;
            }
            let waiting = min_deadline.is_none_or(|d| now < d);
            let callback = if waiting {
                self.shared().wait_callback(min_deadline)
            } else {
                self.shared().wait_callback(Some(now))
            };
            match callback {
                Some(cb) => {
                    ambassador.callback(cb);
                    delivered += 1;
                }
                None if waiting && !self.shared().stopped() => continue,
                None => break,
            }
        }
        Ok(delivered)
    }

    /// The next callback itself instead of an ambassador call, waiting up to
    /// `max_wait` (evoked model; `None` in the immediate model or after resigning).
    pub fn next_callback(&self, max_wait: Duration) -> Option<Callback> {
        let _guard = self.shared().enter_evoke()?;
        self.shared()
            .wait_callback(crate::delivery::Deadline::After(max_wait))
    }

    /// How many callbacks are queued for this federate.
    pub fn pending_callbacks(&self) -> usize {
        self.shared().read(|r| r.pending_callbacks())
    }

    // ----- diagnostics ---------------------------------------------------------------

    /// Counters of received, delivered and dropped input.
    pub fn stats(&self) -> LocalStats {
        self.shared().read(|r| r.stats().clone())
    }
    /// The transport failure the RTI thread met since the federate's last call (its
    /// own statuses and answers, which no call waits for), reported and cleared as
    /// that call would have; `Ok` when there is none. Waiting for callbacks does not
    /// report it, so a loop that only waits should ask here: a federate that can no
    /// longer send then fails at once instead of waiting for answers that cannot come.
    pub fn check_transport(&self) -> Result<(), RtiError> {
        match self.shared().failure().take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
    /// How many transport operations have failed since the federate joined (each
    /// made the call that sent it, or the next call, return [`RtiError::Link`]).
    pub fn transport_failures(&self) -> u64 {
        self.shared().failure().count()
    }
    /// What the federate's transport endpoint counted as lost or malformed (always
    /// zero on `inproc`; on `nats`, gaps in senders' sequence numbers and envelopes
    /// that could not be decoded).
    pub fn transport_stats(&self) -> glidepath_transport::EndpointStats {
        self.shared().endpoint.stats()
    }
}
