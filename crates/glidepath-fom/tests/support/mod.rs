//! Helpers shared by the integration tests: paths to the FOM files and a way to
//! find where a piece of text sits in a module, so that tests can assert error
//! positions without hard-coding line numbers.

#![allow(dead_code)]

use std::path::PathBuf;

use glidepath_fom::{Fom, FomSummary};

/// `foms/` at the workspace root (our own modules).
pub fn foms_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../foms")
}

/// The vendored third-party modules.
pub fn third_party(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/third_party")
        .join(name)
}

/// The 1-based line and character column of the `nth` (0-based) occurrence of `needle`.
pub fn position_of(text: &str, needle: &str, nth: usize) -> (u32, u32) {
    let offset = text
        .match_indices(needle)
        .nth(nth)
        .unwrap_or_else(|| panic!("`{needle}` occurs fewer than {} times", nth + 1))
        .0;
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = text[line_start..offset].chars().count() + 1;
    (line as u32, column as u32)
}

/// A complete 1516-2010 module around the given tables.
pub fn module(objects: &str, interactions: &str, tables: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<objectModel xmlns="http://standards.ieee.org/IEEE1516-2010">
    <modelIdentification>
        <name>test</name>
        <type>FOM</type>
    </modelIdentification>
    <objects>
        <objectClass>
            <name>HLAobjectRoot</name>
{objects}
        </objectClass>
    </objects>
    <interactions>
        <interactionClass>
            <name>HLAinteractionRoot</name>
{interactions}
        </interactionClass>
    </interactions>
{tables}
</objectModel>
"#
    )
}

/// An attribute element in the 1516-2010 layout.
pub fn attribute(name: &str, data_type: &str, transportation: &str, order: &str) -> String {
    format!(
        r#"                <attribute>
                    <name>{name}</name>
                    <dataType>{data_type}</dataType>
                    <transportation>{transportation}</transportation>
                    <order>{order}</order>
                </attribute>"#
    )
}

/// The standard MIM alone, merged.
pub fn mim() -> Fom {
    Fom::merge(&[]).expect("the MIM alone merges")
}

/// `counts` written as the roots, `HLAprivilegeToDeleteObject`, the MIM's data
/// types and a module's own items, plus the MOM classes, attributes, parameters
/// and dimensions the standard MIM adds to every FOM.
pub fn plus_mom(counts: FomSummary) -> FomSummary {
    let mim = mim().summary();
    FomSummary {
        modules: counts.modules,
        object_classes: counts.object_classes + mim.object_classes - 1,
        attributes: counts.attributes + mim.attributes - 1,
        interaction_classes: counts.interaction_classes + mim.interaction_classes - 1,
        parameters: counts.parameters + mim.parameters,
        dimensions: counts.dimensions + mim.dimensions,
        data_types: counts.data_types,
    }
}
