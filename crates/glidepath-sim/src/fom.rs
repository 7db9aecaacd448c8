//! The small FOM the simulator federations use, built in code so the simulator
//! depends on nothing but the services: a three-level object hierarchy and an
//! interaction hierarchy, with receive-order, time-stamp-order and best-effort items.

use std::collections::HashMap;

use glidepath_core::fom::{Attribute, InteractionClass, ObjectClass, Parameter};
use glidepath_core::{
    AttributeHandle, Fom, InteractionClassHandle, ObjectClassHandle, OrderType, ParameterHandle,
    TransportationType,
};

struct Builder {
    fom: Fom,
}

impl Builder {
    fn object(
        &mut self,
        name: &str,
        parent: Option<u32>,
        attrs: &[(&str, OrderType, TransportationType)],
    ) -> u32 {
        let h = ObjectClassHandle(self.fom.object_classes.len() as u32);
        let (qualified_name, mut all) = match parent {
            Some(p) => {
                let pc = &self.fom.object_classes[p as usize];
                (
                    format!("{}.{}", pc.qualified_name, name),
                    pc.all_attributes.clone(),
                )
            }
            None => (name.to_string(), Vec::new()),
        };
        let mut own = Vec::new();
        for (a, order, transportation) in attrs {
            let ah = AttributeHandle(self.fom.attributes.len() as u32);
            self.fom.attributes.push(Attribute {
                handle: ah,
                name: a.to_string(),
                class: h,
                data_type: Some("HLAopaqueData".into()),
                transportation: *transportation,
                order: *order,
                dimensions: vec![],
            });
            own.push(ah);
        }
        all.extend(own.iter().copied());
        self.fom
            .object_class_by_qname
            .insert(qualified_name.clone(), h);
        self.fom.object_classes.push(ObjectClass {
            handle: h,
            name: name.into(),
            qualified_name,
            parent: parent.map(ObjectClassHandle),
            own_attributes: own,
            all_attributes: all,
        });
        h.0
    }

    fn interaction(
        &mut self,
        name: &str,
        parent: Option<u32>,
        order: OrderType,
        params: &[&str],
    ) -> u32 {
        let h = InteractionClassHandle(self.fom.interaction_classes.len() as u32);
        let (qualified_name, mut all) = match parent {
            Some(p) => {
                let pc = &self.fom.interaction_classes[p as usize];
                (
                    format!("{}.{}", pc.qualified_name, name),
                    pc.all_parameters.clone(),
                )
            }
            None => (name.to_string(), Vec::new()),
        };
        let mut own = Vec::new();
        for p in params {
            let ph = ParameterHandle(self.fom.parameters.len() as u32);
            self.fom.parameters.push(Parameter {
                handle: ph,
                name: p.to_string(),
                class: h,
                data_type: Some("HLAopaqueData".into()),
            });
            own.push(ph);
        }
        all.extend(own.iter().copied());
        self.fom
            .interaction_class_by_qname
            .insert(qualified_name.clone(), h);
        self.fom.interaction_classes.push(InteractionClass {
            handle: h,
            name: name.into(),
            qualified_name,
            parent: parent.map(InteractionClassHandle),
            own_parameters: own,
            all_parameters: all,
            transportation: TransportationType::Reliable,
            order,
            dimensions: vec![],
        });
        h.0
    }
}

/// Object classes 1..=3 (`Vehicle`, `Vehicle.Aircraft`, `Ship`) and interaction
/// classes 1..=3 (`Event`, `Event.Alarm`, `Chat`).
pub fn sim_fom() -> Fom {
    use OrderType::*;
    use TransportationType::*;
    let mut b = Builder {
        fom: Fom {
            object_class_by_qname: HashMap::new(),
            ..Fom::default()
        },
    };
    b.fom.module_names.push("simulator".into());
    let root = b.object(
        "HLAobjectRoot",
        None,
        &[("HLAprivilegeToDeleteObject", Receive, Reliable)],
    );
    let vehicle = b.object(
        "Vehicle",
        Some(root),
        &[
            ("position", TimeStamp, Reliable),
            ("label", Receive, Reliable),
        ],
    );
    b.object(
        "Aircraft",
        Some(vehicle),
        &[
            ("altitude", TimeStamp, Reliable),
            ("squawk", Receive, BestEffort),
        ],
    );
    b.object("Ship", Some(root), &[("speed", TimeStamp, Reliable)]);
    let iroot = b.interaction("HLAinteractionRoot", None, Receive, &[]);
    let event = b.interaction("Event", Some(iroot), TimeStamp, &["what"]);
    b.interaction("Alarm", Some(event), TimeStamp, &["level"]);
    b.interaction("Chat", Some(iroot), Receive, &["text"]);
    b.fom
}
