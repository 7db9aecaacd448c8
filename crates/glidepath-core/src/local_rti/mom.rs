//! The management object model at one federate (`crate::mom` has the handles and
//! encodings): this federate's `HLAmanager.HLAfederate` instance answered on request
//! and on the period an `HLAsetTiming` interaction sets, the federation's instance
//! answered by the member with the smallest handle, and the MOM instances of the
//! other members discovered and removed as they join and resign.

use bytes::Bytes;

use super::*;
use crate::callback::{Callback, MessageInfo};
use crate::message::Values;
use crate::mom::{self, FederateState, MomHandles};
use crate::time::state::Constrained;
use crate::{OrderType, ParameterHandle, TransportationType};

/// What one federate's MOM keeps.
pub(crate) struct MomState {
    /// The MOM's handles in this federation's FOM; `None` when the FOM has no MIM
    /// (only hand-built FOMs), and then nothing here does anything.
    handles: Option<Arc<MomHandles>>,
    /// `HLAfederateHost`, told by the driver (the core knows no host).
    host: String,
    /// Seconds between periodic reports; 0, none (the standard's default).
    period_s: u32,
    /// What the federate did, for the counts the MOM reports.
    pub(crate) counts: MomCounts,
}

/// The MOM's counters of one federate.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct MomCounts {
    pub(crate) updates_sent: u64,
    pub(crate) interactions_sent: u64,
    pub(crate) registered: u64,
    pub(crate) deleted: u64,
    pub(crate) reflections: u64,
    pub(crate) interactions_received: u64,
    pub(crate) discovered: u64,
}

impl MomState {
    pub(crate) fn new(fom: &Fom) -> MomState {
        MomState {
            handles: MomHandles::resolve(fom).map(Arc::new),
            host: String::new(),
            period_s: 0,
            counts: MomCounts::default(),
        }
    }

    /// True for the MOM's `HLAsetTiming`, which travels on the federation topic.
    #[inline]
    pub(crate) fn is_adjustment(&self, class: InteractionClassHandle) -> bool {
        self.handles.as_ref().is_some_and(|h| h.set_timing == class)
    }

    /// Counts a callback as it leaves for the federate.
    #[inline]
    pub(crate) fn count_delivered(&mut self, cb: &Callback) {
        match cb {
            Callback::ReflectAttributeValues { .. } => self.counts.reflections += 1,
            Callback::ReceiveInteraction { .. } => self.counts.interactions_received += 1,
            Callback::DiscoverObjectInstance { .. } => self.counts.discovered += 1,
            _ => {}
        }
    }
}

impl LocalRti {
    /// Tells the MOM the host this federate runs on (`HLAfederateHost`).
    pub fn set_mom_host(&mut self, host: &str) {
        self.mom.host = host.to_string();
    }

    /// Seconds between this federate's periodic MOM reports, as the last
    /// `HLAsetTiming` for it set them; 0 when it reports only on request.
    pub fn mom_report_period_s(&self) -> u32 {
        self.mom.period_s
    }

    /// Publishes this federate's `HLAmanager.HLAfederate` values now (and the
    /// federation's, from the member with the smallest handle): the periodic report,
    /// which whoever drives the core calls every [`LocalRti::mom_report_period_s`].
    pub fn mom_report(&mut self) {
        if self.resigned {
            return;
        }
        let Some(h) = self.mom.handles.clone() else {
            return;
        };
        self.publish_federate_values(&h, &h.federate_attributes, Bytes::new());
        if self.answers_for_federation() {
            self.publish_federation_values(&h, &h.federation_attributes, Bytes::new());
        }
    }

    /// A conditional attribute changed (time regulation or constraint): a federate
    /// asked to report periodically also reports the change at once.
    pub(crate) fn mom_changed(&mut self) {
        if self.mom.period_s > 0 {
            self.mom_report();
        }
    }

    fn answers_for_federation(&self) -> bool {
        self.members.keys().next() == Some(&self.me)
    }

    /// A provide-update request that may name a MOM instance (or a class above
    /// them): this federate answers for its own, and for the federation's if it has
    /// the smallest handle.
    pub(crate) fn mom_request(
        &mut self,
        instance: Option<ObjectInstanceHandle>,
        class: ObjectClassHandle,
        attributes: &[AttributeHandle],
        tag: &Bytes,
    ) {
        let Some(h) = self.mom.handles.clone() else {
            return;
        };
        let wanted = |mine: &[AttributeHandle]| -> Vec<AttributeHandle> {
            if attributes.is_empty() {
                mine.to_vec()
            } else {
                mine.iter()
                    .copied()
                    .filter(|a| attributes.contains(a))
                    .collect()
            }
        };
        let fom = self.fom.clone();
        let asks = |target: ObjectInstanceHandle, target_class| match instance {
            Some(i) => i == target,
            None => fom.is_object_subclass_of(target_class, class),
        };
        if asks(mom::federate_instance(self.me), h.federate_class) {
            let attrs = wanted(&h.federate_attributes);
            if !attrs.is_empty() {
                self.publish_federate_values(&h, &attrs, tag.clone());
            }
        }
        if asks(mom::FEDERATION_INSTANCE, h.federation_class) && self.answers_for_federation() {
            let attrs = wanted(&h.federation_attributes);
            if !attrs.is_empty() {
                self.publish_federation_values(&h, &attrs, tag.clone());
            }
        }
    }

    /// An interaction that may be the MOM's `HLAsetTiming` for this federate:
    /// the new report period takes effect, and a report goes out at once.
    pub(crate) fn mom_adjust(
        &mut self,
        sender: FederateHandle,
        class: InteractionClassHandle,
        values: &Values<ParameterHandle>,
    ) {
        // Every received interaction passes here: the cheap check first.
        if !self.mom.is_adjustment(class) {
            return;
        }
        let Some(h) = self.mom.handles.clone() else {
            return;
        };
        let param = |p: ParameterHandle| values.iter().find(|(q, _)| *q == p).map(|(_, v)| v);
        let Some(target) = param(h.set_timing_federate) else {
            return self.mom_malformed(sender, "HLAsetTiming without HLAfederate".into());
        };
        match mom::decode_federate_handle(target) {
            Ok(f) if f == self.me => {}
            Ok(_) => return,
            Err(e) => return self.mom_malformed(sender, format!("HLAsetTiming: {e}")),
        }
        let Some(period) = param(h.set_timing_period) else {
            return self.mom_malformed(sender, "HLAsetTiming without HLAreportPeriod".into());
        };
        match mom::decode_i32(period) {
            Ok(s) => {
                self.mom.period_s = s.max(0) as u32;
                self.mom_report();
            }
            Err(e) => self.mom_malformed(sender, format!("HLAsetTiming: {e}")),
        }
    }

    fn mom_malformed(&mut self, sender: FederateHandle, reason: String) {
        self.stats.malformed_mom += 1;
        self.stats.last_peer_error = Some(PeerError::MalformedMom { sender, reason });
    }

    fn publish_federate_values(
        &mut self,
        h: &MomHandles,
        attributes: &[AttributeHandle],
        tag: Bytes,
    ) {
        let rep = self.fom.time_representation;
        let time = |t: LogicalTime| mom::encode_time(rep, t.as_f64(), t.as_i64());
        let interval = |t: LogicalTimeInterval| mom::encode_time(rep, t.as_f64(), t.as_i64());
        let c = self.mom.counts;
        let federate_type = self
            .members
            .get(&self.me)
            .map(|m| m.federate_type.clone())
            .unwrap_or_default();
        let state = if self.save.in_restore() {
            FederateState::RestoreInProgress
        } else if self.save.in_save() {
            FederateState::SaveInProgress
        } else {
            FederateState::Active
        };
        let mut values: Vec<(AttributeHandle, Bytes)> = Vec::with_capacity(attributes.len());
        for a in attributes {
            let Some(i) = h.federate_attributes.iter().position(|x| x == a) else {
                continue;
            };
            let v = match mom::FEDERATE_ATTRIBUTES[i] {
                "HLAfederateHandle" => mom::encode_federate_handle(self.me),
                "HLAfederateName" => mom::encode_unicode_string(&self.name),
                "HLAfederateType" => mom::encode_unicode_string(&federate_type),
                "HLAfederateHost" => mom::encode_unicode_string(&self.mom.host),
                "HLARTIversion" => mom::encode_unicode_string(mom::RTI_VERSION),
                "HLAtimeConstrained" => mom::encode_bool(self.time.constrained == Constrained::On),
                "HLAtimeRegulating" => mom::encode_bool(self.is_regulating()),
                // Receive-order messages are delivered as they arrive, advancing or not.
                "HLAasynchronousDelivery" => mom::encode_bool(true),
                "HLAfederateState" => mom::encode_i32(state as i32),
                "HLAtimeManagerState" => mom::encode_i32(i32::from(self.is_advancing())),
                "HLAlogicalTime" => time(self.time.logical_time),
                "HLAlookahead" => interval(self.time.lookahead),
                "HLAGALT" => time(self.query_galt().unwrap_or(LogicalTime::INFINITY)),
                "HLALITS" => time(self.query_lits().unwrap_or(LogicalTime::INFINITY)),
                "HLATSOlength" => mom::encode_count(self.queued_tso() as u64),
                "HLAreflectionsReceived" => mom::encode_count(c.reflections),
                "HLAupdatesSent" => mom::encode_count(c.updates_sent),
                "HLAinteractionsReceived" => mom::encode_count(c.interactions_received),
                "HLAinteractionsSent" => mom::encode_count(c.interactions_sent),
                "HLAobjectInstancesRegistered" => mom::encode_count(c.registered),
                "HLAobjectInstancesDiscovered" => mom::encode_count(c.discovered),
                "HLAobjectInstancesDeleted" => mom::encode_count(c.deleted),
                _ => continue,
            };
            values.push((*a, v));
        }
        self.send_mom_update(
            mom::federate_instance(self.me),
            h.federate_class,
            values,
            tag,
        );
    }

    fn publish_federation_values(
        &mut self,
        h: &MomHandles,
        attributes: &[AttributeHandle],
        tag: Bytes,
    ) {
        let members: Vec<FederateHandle> = self.members.keys().copied().collect();
        let mut values: Vec<(AttributeHandle, Bytes)> = Vec::with_capacity(attributes.len());
        for a in attributes {
            let Some(i) = h.federation_attributes.iter().position(|x| x == a) else {
                continue;
            };
            let v = match mom::FEDERATION_ATTRIBUTES[i] {
                "HLAfederationName" => mom::encode_unicode_string(&self.federation_name),
                "HLAfederatesInFederation" => mom::encode_federate_handles(&members),
                "HLARTIversion" => mom::encode_unicode_string(mom::RTI_VERSION),
                "HLAFOMmoduleDesignatorList" => mom::encode_unicode_strings(&self.fom.module_names),
                "HLAtimeImplementationName" => {
                    mom::encode_unicode_string(match self.fom.time_representation {
                        crate::TimeRepresentation::Float64 => "HLAfloat64Time",
                        crate::TimeRepresentation::Integer64 => "HLAinteger64Time",
                    })
                }
                _ => continue,
            };
            values.push((*a, v));
        }
        self.send_mom_update(mom::FEDERATION_INSTANCE, h.federation_class, values, tag);
    }

    fn send_mom_update(
        &mut self,
        instance: ObjectInstanceHandle,
        class: ObjectClassHandle,
        values: Vec<(AttributeHandle, Bytes)>,
        tag: Bytes,
    ) {
        if values.is_empty() {
            return;
        }
        let key = (OrderType::Receive, TransportationType::Reliable, None);
        self.send_update(instance, class, values, tag, key, None);
    }

    /// After a subscription changed: every member's MOM instance and the
    /// federation's are discovered if their class is now subscribed.
    pub(crate) fn mom_discover_members(&mut self) {
        let Some(h) = self.mom.handles.clone() else {
            return;
        };
        let members: Vec<(FederateHandle, String)> = self
            .members
            .values()
            .filter(|m| m.handle != self.me)
            .map(|m| (m.handle, m.name.clone()))
            .collect();
        for (f, name) in members {
            self.discover(
                mom::federate_instance(f),
                h.federate_class,
                &mom::federate_instance_name(&name),
                f,
            );
        }
        let name = format!("HLAfederation.{}", self.federation_name);
        self.discover(
            mom::FEDERATION_INSTANCE,
            h.federation_class,
            &name,
            FederateHandle::EXECUTIVE,
        );
    }

    /// A member joined: its MOM instance is discovered if the class is subscribed.
    pub(crate) fn mom_member_joined(&mut self, federate: FederateHandle, name: &str) {
        if let Some(h) = self.mom.handles.clone() {
            self.discover(
                mom::federate_instance(federate),
                h.federate_class,
                &mom::federate_instance_name(name),
                federate,
            );
        }
    }

    /// A member resigned: its MOM instance, if known here, is removed.
    pub(crate) fn mom_member_resigned(&mut self, federate: FederateHandle) {
        let instance = mom::federate_instance(federate);
        self.ddm.undiscovered.remove(&instance);
        if self.known.remove(&instance).is_some() {
            self.callbacks.push_back(Callback::RemoveObjectInstance {
                instance,
                tag: Bytes::new(),
                info: MessageInfo {
                    producer: federate,
                    seq: 0,
                    sent_order: OrderType::Receive,
                    received_order: OrderType::Receive,
                    transport: TransportationType::Reliable,
                    time: None,
                    publish_time_ns: 0,
                },
            });
        }
    }

    /// An update of a MOM instance not known here: a member's report that overtook
    /// the notification of its join. Discovered now if the member is known.
    pub(crate) fn mom_discover_on_update(&mut self, instance: ObjectInstanceHandle) {
        let Some(f) = mom::instance_federate(instance) else {
            if instance == mom::FEDERATION_INSTANCE {
                self.mom_discover_members();
            }
            return;
        };
        if let Some(name) = self.members.get(&f).map(|m| m.name.clone()) {
            if f != self.me {
                self.mom_member_joined(f, &name);
            }
        }
    }
}
