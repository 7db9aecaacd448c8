//! `glidepath federation status NAME`: joins the federation, subscribes the
//! management object model's `HLAmanager.HLAfederate` and `HLAmanager.HLAfederation`
//! classes, asks every member for its values, and prints them as a table (or JSON).
//! The tool itself is a member while it runs but does not list itself.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::Context;
use glidepath::mom::{self, MomValue};
use glidepath::{AttributeHandle, Callback, ObjectInstanceHandle};

use crate::federation::{join, leave, CommonArgs};

/// How long the members have at most to answer once the tool asked (less with a
/// smaller `--timeout-s`; the tool stops earlier when every discovered instance
/// answered and nothing more came).
const ANSWER_WAIT: Duration = Duration::from_secs(5);
/// Quiet time after the last callback that ends the wait once all answered.
const SETTLE: Duration = Duration::from_millis(300);

#[derive(Default)]
struct Instance {
    name: String,
    values: BTreeMap<&'static str, MomValue>,
}

pub(crate) fn status(name: &str, json: bool, common: CommonArgs) -> anyhow::Result<()> {
    // The members answer at once; a member that cannot (its callbacks backed up)
    // is listed without values after this long.
    let wait = ANSWER_WAIT.min(Duration::from_secs(common.timeout_s));
    let f = join(name, &common)?;
    let result = collect(&f, wait);
    leave(f);
    let (federation, federates) = result?;
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&to_json(name, &federation, &federates))?
        );
    } else {
        print_table(name, &federation, &federates);
    }
    Ok(())
}

type Collected = (Option<Instance>, Vec<Instance>);

fn collect(f: &glidepath::Federate, wait: Duration) -> anyhow::Result<Collected> {
    let federate_class = f.object_class_handle("HLAmanager.HLAfederate")?;
    let federation_class = f.object_class_handle("HLAmanager.HLAfederation")?;
    let handles =
        |class, names: &[&'static str]| -> anyhow::Result<Vec<(AttributeHandle, &'static str)>> {
            names
                .iter()
                .map(|n| Ok((f.attribute_handle(class, n)?, *n)))
                .collect()
        };
    let mut attributes = handles(federate_class, &mom::FEDERATE_ATTRIBUTES)?;
    let federation_attributes = handles(federation_class, &mom::FEDERATION_ATTRIBUTES)?;
    let federate_set: Vec<AttributeHandle> = attributes.iter().map(|(a, _)| *a).collect();
    let federation_set: Vec<AttributeHandle> =
        federation_attributes.iter().map(|(a, _)| *a).collect();
    attributes.extend(federation_attributes);
    f.subscribe_object_class_attributes(federate_class, &federate_set)
        .context("subscribing HLAmanager.HLAfederate")?;
    f.subscribe_object_class_attributes(federation_class, &federation_set)
        .context("subscribing HLAmanager.HLAfederation")?;
    f.request_class_attribute_value_update(federate_class, &[], "status")?;
    f.request_class_attribute_value_update(federation_class, &[], "status")?;
    let representation = f.fom().time_representation;
    let mut seen: BTreeMap<ObjectInstanceHandle, Instance> = BTreeMap::new();
    let mut malformed = 0usize;
    let deadline = Instant::now() + wait;
    let mut last = Instant::now();
    loop {
        let all_answered = !seen.is_empty() && seen.values().all(|i| !i.values.is_empty());
        let now = Instant::now();
        if now >= deadline || (all_answered && now.duration_since(last) >= SETTLE) {
            break;
        }
        let Some(cb) = f.next_callback(SETTLE.min(deadline - now)) else {
            continue;
        };
        last = Instant::now();
        match cb {
            Callback::DiscoverObjectInstance { instance, name, .. }
                if mom::is_mom_instance(instance) =>
            {
                seen.entry(instance).or_default().name = name;
            }
            Callback::ReflectAttributeValues {
                instance, values, ..
            } => {
                let Some(entry) = seen.get_mut(&instance) else {
                    continue;
                };
                for (a, v) in values.iter() {
                    let Some((_, n)) = attributes.iter().find(|(h, _)| h == a) else {
                        continue;
                    };
                    match mom::decode_attribute(n, representation, v) {
                        Ok(value) => {
                            entry.values.insert(*n, value);
                        }
                        Err(_) => malformed += 1,
                    }
                }
            }
            Callback::RemoveObjectInstance { instance, .. } => {
                seen.remove(&instance);
            }
            _ => {}
        }
    }
    if malformed > 0 {
        eprintln!("warning: {malformed} management object model values could not be read");
    }
    let federation = seen.remove(&mom::FEDERATION_INSTANCE);
    let mut federates: Vec<Instance> = seen.into_values().collect();
    federates.sort_by_key(|i| match i.values.get("HLAfederateHandle") {
        Some(MomValue::Federate(h)) => h.0,
        _ => u32::MAX,
    });
    Ok((federation, federates))
}

fn cell(i: &Instance, attribute: &str) -> String {
    i.values
        .get(attribute)
        .map(|v| match v {
            MomValue::Float(x) if x.is_infinite() => "inf".to_string(),
            MomValue::Integer(x) if *x == i64::MAX => "inf".to_string(),
            MomValue::Text(t) if t.is_empty() => "-".to_string(),
            other => other.to_string(),
        })
        .unwrap_or_else(|| "-".into())
}

const COLUMNS: [(&str, &str); 16] = [
    ("handle", "HLAfederateHandle"),
    ("name", "HLAfederateName"),
    ("type", "HLAfederateType"),
    ("host", "HLAfederateHost"),
    ("regulating", "HLAtimeRegulating"),
    ("constrained", "HLAtimeConstrained"),
    ("time", "HLAlogicalTime"),
    ("lookahead", "HLAlookahead"),
    ("GALT", "HLAGALT"),
    ("LITS", "HLALITS"),
    ("TSO queue", "HLATSOlength"),
    ("updates", "HLAupdatesSent"),
    ("reflections", "HLAreflectionsReceived"),
    ("interactions sent", "HLAinteractionsSent"),
    ("received", "HLAinteractionsReceived"),
    ("registered", "HLAobjectInstancesRegistered"),
];

fn print_table(name: &str, federation: &Option<Instance>, federates: &[Instance]) {
    match federation {
        Some(fed) => println!(
            "federation `{name}`: {} members (this tool included), time {}, {}, FOM modules: {}",
            match fed.values.get("HLAfederatesInFederation") {
                Some(MomValue::Federates(v)) => v.len().to_string(),
                _ => "?".into(),
            },
            cell(fed, "HLAtimeImplementationName"),
            cell(fed, "HLARTIversion"),
            cell(fed, "HLAFOMmoduleDesignatorList"),
        ),
        None => println!("federation `{name}`: its own instance did not answer"),
    }
    let rows: Vec<Vec<String>> = federates
        .iter()
        .map(|i| {
            COLUMNS
                .iter()
                .map(|(_, a)| {
                    if *a == "HLAfederateName" && !i.values.contains_key(*a) {
                        format!("{} (no answer)", i.name)
                    } else {
                        cell(i, a)
                    }
                })
                .collect()
        })
        .collect();
    let widths: Vec<usize> = COLUMNS
        .iter()
        .enumerate()
        .map(|(c, (h, _))| {
            rows.iter()
                .map(|r| r[c].len())
                .chain([h.len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        println!("{}", padded.join("  ").trim_end());
    };
    line(COLUMNS.iter().map(|(h, _)| *h).collect());
    for r in &rows {
        line(r.iter().map(String::as_str).collect());
    }
    if federates.is_empty() {
        println!("(no other member)");
    }
}

fn json_value(v: &MomValue) -> serde_json::Value {
    use serde_json::json;
    match v {
        MomValue::Text(s) => json!(s),
        MomValue::Bool(b) => json!(b),
        MomValue::Int(i) => json!(i),
        MomValue::Federate(h) => json!(h.0),
        MomValue::Federates(v) => json!(v.iter().map(|h| h.0).collect::<Vec<_>>()),
        MomValue::Float(x) if x.is_finite() => json!(x),
        MomValue::Float(x) => json!(if *x > 0.0 { "inf" } else { "-inf" }),
        MomValue::Integer(i) => json!(i),
        MomValue::Texts(v) => json!(v),
    }
}

fn to_json(name: &str, federation: &Option<Instance>, federates: &[Instance]) -> serde_json::Value {
    let object = |i: &Instance| -> serde_json::Value {
        let mut m = serde_json::Map::new();
        m.insert("instance".into(), serde_json::json!(i.name));
        for (k, v) in &i.values {
            m.insert((*k).to_string(), json_value(v));
        }
        serde_json::Value::Object(m)
    };
    serde_json::json!({
        "federation": name,
        "HLAfederation": federation.as_ref().map(object),
        "HLAfederate": federates.iter().map(object).collect::<Vec<_>>(),
    })
}
