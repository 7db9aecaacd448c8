//! The management object model from a federate: a monitor subscribes the RTI's
//! `HLAmanager.HLAfederate` instances, asks for their values once, then asks one
//! member (the generator) for a report every second with `HLAsetTiming`, and prints
//! what it reflects. The generator meanwhile advances time and updates an aircraft.
//!
//! ```sh
//! cargo run -p glidepath --example mom_status
//! ```

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use glidepath::mom::{self, MomValue};
use glidepath::{Callback, Fom, FomModule, JoinOptions, ResignAction, Rti};

const FOM: &str = r#"<?xml version="1.0"?>
<objectModel xmlns="http://standards.ieee.org/IEEE1516-2010">
  <modelIdentification><name>mom-example</name><type>FOM</type><version>1</version></modelIdentification>
  <objects><objectClass><name>HLAobjectRoot</name>
    <objectClass><name>Aircraft</name><sharing>PublishSubscribe</sharing>
      <attribute><name>position</name><dataType>HLAopaqueData</dataType>
        <transportation>HLAreliable</transportation><order>Receive</order></attribute>
    </objectClass>
  </objectClass></objects>
</objectModel>"#;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rti = Rti::inproc();
    let fom = Fom::merge(&[FomModule::parse_str("mom-example.xml", FOM)?])?;
    rti.create_federation_execution_with_fom("mom-example", fom)?;
    let generator = rti.join("mom-example", JoinOptions::named("generator", "tg"))?;
    let monitor = rti.join("mom-example", JoinOptions::named("monitor", "status"))?;

    // The generator: regulating, one aircraft.
    let aircraft = generator.object_class_handle("Aircraft")?;
    let position = generator.attribute_handle(aircraft, "position")?;
    generator.enable_time_regulation(1.0)?;
    while !matches!(
        generator.next_callback(Duration::from_secs(10)),
        Some(Callback::TimeRegulationEnabled { .. })
    ) {}
    generator.publish_object_class_attributes(aircraft, &[position])?;
    let a = generator.register_object_instance(aircraft)?;

    // The monitor: every reported attribute of HLAmanager.HLAfederate.
    let class = monitor.object_class_handle("HLAmanager.HLAfederate")?;
    let mut names = BTreeMap::new();
    for n in mom::FEDERATE_ATTRIBUTES {
        names.insert(monitor.attribute_handle(class, n)?, n);
    }
    let attributes: Vec<_> = names.keys().copied().collect();
    monitor.subscribe_object_class_attributes(class, &attributes)?;
    monitor.request_class_attribute_value_update(class, &[], "once")?;
    let set_timing =
        monitor.interaction_class_handle("HLAmanager.HLAfederate.HLAadjust.HLAsetTiming")?;
    monitor.publish_interaction_class(set_timing)?;
    monitor.send_interaction(
        set_timing,
        [
            (
                monitor.parameter_handle(set_timing, "HLAfederate")?,
                mom::encode_federate_handle(generator.handle()),
            ),
            (
                monitor.parameter_handle(set_timing, "HLAreportPeriod")?,
                mom::encode_i32(1),
            ),
        ],
        "",
    )?;

    let representation = monitor.fom().time_representation;
    let end = Instant::now() + Duration::from_secs(3);
    let mut step = 0u32;
    while Instant::now() < end {
        // The generator's work: an update and a time step, 20 times a second.
        step += 1;
        generator.update_attribute_values(
            a,
            [(position, step.to_be_bytes().to_vec().into())],
            "",
        )?;
        generator.time_advance_request(f64::from(step))?;
        while generator.next_callback(Duration::ZERO).is_some() {}
        // The monitor's: print what the MOM reports.
        while let Some(cb) = monitor.next_callback(Duration::from_millis(50)) {
            match cb {
                Callback::DiscoverObjectInstance { name, .. } => println!("discovered {name}"),
                Callback::ReflectAttributeValues { values, .. } => {
                    let mut line = Vec::new();
                    for (attribute, bytes) in values.iter() {
                        let name = names[attribute];
                        if let Ok(v @ (MomValue::Text(_) | MomValue::Float(_) | MomValue::Int(_))) =
                            mom::decode_attribute(name, representation, bytes)
                        {
                            if matches!(
                                name,
                                "HLAfederateName" | "HLAlogicalTime" | "HLAupdatesSent"
                            ) {
                                line.push(format!("{name}={v}"));
                            }
                        }
                    }
                    println!("reflected {}", line.join(" "));
                }
                _ => {}
            }
        }
    }
    monitor.resign(ResignAction::DeleteObjects)?;
    generator.resign(ResignAction::DeleteObjects)?;
    rti.destroy_federation_execution("mom-example")?;
    Ok(())
}
