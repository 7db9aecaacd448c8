//! The DDM test FOM (`tests/data/sectors.xml`) and helpers shared by the data
//! distribution management tests.

use glidepath::{
    AttributeHandle, Callback, DimensionHandle, Federate, Fom, InteractionClassHandle,
    ObjectClassHandle, RangeBounds, RegionHandle, Rti,
};

use super::{b, data_path, wait_for};

/// The DDM test FOM: `Target { name, position [X, Y], level [X, Y, Level] }`,
/// interactions `Contact [X, Y]` (time-stamp order) and `Chat` (no dimensions);
/// dimensions X and Y (upper bound 1000, excluded when unspecified) and Level (upper
/// bound 100, `[0..10)` when unspecified).
pub fn sectors_fom() -> Fom {
    Fom::load_files(&[data_path("sectors.xml")]).expect("the DDM test FOM loads")
}

/// An in-process RTI with a federation `name` of the DDM test FOM.
pub fn sectors(name: &str) -> Rti {
    let rti = Rti::inproc();
    rti.create_federation_execution_with_fom(name, sectors_fom())
        .expect("create");
    rti
}

/// Handles of the DDM test FOM.
pub struct Sectors {
    pub target: ObjectClassHandle,
    pub name: AttributeHandle,
    pub position: AttributeHandle,
    pub level_attribute: AttributeHandle,
    pub contact: InteractionClassHandle,
    pub chat: InteractionClassHandle,
    pub x: DimensionHandle,
    pub y: DimensionHandle,
    pub level: DimensionHandle,
}

impl Sectors {
    pub fn of(f: &Federate) -> Sectors {
        let target = f.object_class_handle("Target").unwrap();
        Sectors {
            target,
            name: f.attribute_handle(target, "name").unwrap(),
            position: f.attribute_handle(target, "position").unwrap(),
            level_attribute: f.attribute_handle(target, "level").unwrap(),
            contact: f.interaction_class_handle("Contact").unwrap(),
            chat: f.interaction_class_handle("Chat").unwrap(),
            x: f.dimension_handle("X").unwrap(),
            y: f.dimension_handle("Y").unwrap(),
            level: f.dimension_handle("Level").unwrap(),
        }
    }
}

pub fn r(lower: u64, upper: u64) -> RangeBounds {
    RangeBounds::new(lower, upper)
}

// ----- regions in use ---------------------------------------------------------------

/// A region of `f` on X (and Y when given), committed.
pub fn region_xy(
    f: &Federate,
    s: &Sectors,
    x: RangeBounds,
    y: Option<RangeBounds>,
) -> RegionHandle {
    let dims: Vec<DimensionHandle> = match y {
        Some(_) => vec![s.x, s.y],
        None => vec![s.x],
    };
    let region = f.create_region(&dims).unwrap();
    f.set_range_bounds(region, s.x, x).unwrap();
    if let Some(y) = y {
        f.set_range_bounds(region, s.y, y).unwrap();
    }
    f.commit_region_modifications(&[region]).unwrap();
    region
}

/// Sends a `Chat` marker from `f` and returns what `to` received before it.
pub fn until_chat(from: &Federate, to: &Federate, s: &Sectors, text: &str) -> Vec<Callback> {
    let text_param = from.parameter_handle(s.chat, "text").unwrap();
    from.send_interaction(s.chat, [(text_param, b(text))], "marker")
        .unwrap();
    let (_, before) = wait_for(to, "the chat marker", |c| {
        matches!(c, Callback::ReceiveInteraction { class, values, .. }
            if *class == s.chat && values.iter().any(|(_, v)| v == text.as_bytes()))
    });
    before
}

/// The values of `attribute` reflected among `callbacks`.
pub fn reflected(callbacks: &[Callback], attribute: AttributeHandle) -> Vec<String> {
    callbacks
        .iter()
        .filter_map(|c| match c {
            Callback::ReflectAttributeValues { values, .. } => Some(values),
            _ => None,
        })
        .flat_map(|values| values.iter())
        .filter(|(a, _)| *a == attribute)
        .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
        .collect()
}

/// The `what` parameters of the `Contact` interactions among `callbacks`.
pub fn contacts(callbacks: &[Callback], s: &Sectors) -> Vec<String> {
    callbacks
        .iter()
        .filter_map(|c| match c {
            Callback::ReceiveInteraction { class, values, .. } if *class == s.contact => {
                Some(String::from_utf8_lossy(&values[0].1).into_owned())
            }
            _ => None,
        })
        .collect()
}
