//! A small FOM built in code for the tests that feed envelopes to a federate: the
//! same classes and handles as the simulator's (`glidepath_sim::sim_fom`), kept here
//! so that the wire crate's tests depend on the services only.
//!
//! Object classes 0..=3 (`HLAobjectRoot`, `Vehicle`, `Vehicle.Aircraft`, `Ship`),
//! attributes 0..=5, interaction classes 0..=3 (`HLAinteractionRoot`, `Event`,
//! `Event.Alarm`, `Chat`) and parameters 0..=2, with receive-order, time-stamp-order
//! and best-effort items.

use glidepath_core::fom::{Attribute, InteractionClass, ObjectClass, Parameter};
use glidepath_core::{
    AttributeHandle, Fom, InteractionClassHandle, ObjectClassHandle, OrderType, ParameterHandle,
    TransportationType,
};

use OrderType::{Receive, TimeStamp};
use TransportationType::{BestEffort, Reliable};

/// The test FOM (see the module documentation).
pub fn test_fom() -> Fom {
    let mut fom = Fom::default();
    fom.module_names.push("wire-tests".into());
    let root = object(
        &mut fom,
        "HLAobjectRoot",
        None,
        &[("HLAprivilegeToDeleteObject", Receive, Reliable)],
    );
    let vehicle = object(
        &mut fom,
        "Vehicle",
        Some(root),
        &[
            ("position", TimeStamp, Reliable),
            ("label", Receive, Reliable),
        ],
    );
    object(
        &mut fom,
        "Aircraft",
        Some(vehicle),
        &[
            ("altitude", TimeStamp, Reliable),
            ("squawk", Receive, BestEffort),
        ],
    );
    object(
        &mut fom,
        "Ship",
        Some(root),
        &[("speed", TimeStamp, Reliable)],
    );
    let iroot = interaction(&mut fom, "HLAinteractionRoot", None, Receive, &[]);
    let event = interaction(&mut fom, "Event", Some(iroot), TimeStamp, &["what"]);
    interaction(&mut fom, "Alarm", Some(event), TimeStamp, &["level"]);
    interaction(&mut fom, "Chat", Some(iroot), Receive, &["text"]);
    fom
}

/// Adds an object class with its own attributes; returns its handle.
fn object(
    fom: &mut Fom,
    name: &str,
    parent: Option<ObjectClassHandle>,
    attributes: &[(&str, OrderType, TransportationType)],
) -> ObjectClassHandle {
    let handle = ObjectClassHandle(fom.object_classes.len() as u32);
    let (qualified_name, mut all_attributes) = match parent {
        Some(p) => {
            let parent = &fom.object_classes[p.0 as usize];
            let qualified = format!("{}.{name}", parent.qualified_name);
            (qualified, parent.all_attributes.clone())
        }
        None => (name.to_string(), Vec::new()),
    };
    let mut own_attributes = Vec::new();
    for &(attribute, order, transportation) in attributes {
        let a = AttributeHandle(fom.attributes.len() as u32);
        fom.attributes.push(Attribute {
            handle: a,
            name: attribute.to_string(),
            class: handle,
            data_type: Some("HLAopaqueData".into()),
            transportation,
            order,
            dimensions: vec![],
        });
        own_attributes.push(a);
    }
    all_attributes.extend(&own_attributes);
    fom.object_class_by_qname
        .insert(qualified_name.clone(), handle);
    fom.object_classes.push(ObjectClass {
        handle,
        name: name.into(),
        qualified_name,
        parent,
        own_attributes,
        all_attributes,
    });
    handle
}

/// Adds a reliable interaction class with its own parameters; returns its handle.
fn interaction(
    fom: &mut Fom,
    name: &str,
    parent: Option<InteractionClassHandle>,
    order: OrderType,
    parameters: &[&str],
) -> InteractionClassHandle {
    let handle = InteractionClassHandle(fom.interaction_classes.len() as u32);
    let (qualified_name, mut all_parameters) = match parent {
        Some(p) => {
            let parent = &fom.interaction_classes[p.0 as usize];
            let qualified = format!("{}.{name}", parent.qualified_name);
            (qualified, parent.all_parameters.clone())
        }
        None => (name.to_string(), Vec::new()),
    };
    let mut own_parameters = Vec::new();
    for parameter in parameters {
        let p = ParameterHandle(fom.parameters.len() as u32);
        fom.parameters.push(Parameter {
            handle: p,
            name: parameter.to_string(),
            class: handle,
            data_type: Some("HLAopaqueData".into()),
        });
        own_parameters.push(p);
    }
    all_parameters.extend(&own_parameters);
    fom.interaction_class_by_qname
        .insert(qualified_name.clone(), handle);
    fom.interaction_classes.push(InteractionClass {
        handle,
        name: name.into(),
        qualified_name,
        parent,
        own_parameters,
        all_parameters,
        transportation: Reliable,
        order,
        dimensions: vec![],
    });
    handle
}
