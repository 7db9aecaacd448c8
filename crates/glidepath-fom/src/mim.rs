//! The built-in MOM and Initialization Module (MIM): the standard's own
//! `HLAstandardMIM.xml` (IEEE Std 1516.1-2010), compiled into the crate and parsed
//! by the same reader as every user module.
//!
//! Using the standard's file itself, rather than a transcription of it, is what
//! makes the built-in MIM identical to it in every class, attribute, parameter,
//! data type, order and transportation: a federation that lists the standard MIM
//! explicitly (as RPR-, SpaceFOM- and NETN-based federations commonly do) merges it
//! as an equivalent module. `include_str!` keeps merging independent of any file
//! installed next to the binary. The file's provenance and the IEEE's licence are in
//! `data/README.md`.
//!
//! The MIM fixes the first handles: `HLAobjectRoot`, `HLAprivilegeToDeleteObject`
//! and `HLAinteractionRoot` are 0; the MOM classes (`HLAmanager...`) follow in the
//! file's order, and every user module's classes come after them.

use std::sync::OnceLock;

use crate::parse::FomModule;

/// The label the MIM carries in error messages and positions.
pub(crate) const MIM_SOURCE: &str = "HLAstandardMIM (built in)";

/// The standard's `HLAstandardMIM.xml`, unmodified.
pub const STANDARD_MIM_XML: &str = include_str!("../data/HLAstandardMIM.xml");

/// The MIM as a parsed module, so that merging treats it exactly like a user's.
/// Parsed once per process.
pub(crate) fn standard_mim() -> &'static FomModule {
    static MIM: OnceLock<FomModule> = OnceLock::new();
    MIM.get_or_init(|| {
        let mut module = FomModule::parse_str(MIM_SOURCE, STANDARD_MIM_XML)
            // The text is a constant of this crate; `mim_parses` below proves it.
            .expect("the standard MIM compiled into glidepath-fom parses");
        module.name = "HLAstandardMIM".into();
        module
    })
}

/// How many data types the MIM declares; part of every merged FOM's count.
pub const MIM_DATA_TYPE_COUNT: usize = 53;

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn mim_parses() {
        let mim = standard_mim();
        assert_eq!(
            mim.model_name.as_deref(),
            Some("Standard MOM and Initialization Module (MIM) for HLA IEEE 1516-2010")
        );
    }

    #[test]
    fn data_type_names_are_unique_and_counted() {
        let mim = standard_mim();
        let names: HashSet<&str> = mim.data_types.iter().map(|t| t.definition.name()).collect();
        assert_eq!(names.len(), mim.data_types.len());
        assert_eq!(mim.data_types.len(), MIM_DATA_TYPE_COUNT);
    }

    #[test]
    fn every_reference_resolves_within_the_mim() {
        let mim = standard_mim();
        let names: HashSet<&str> = mim.data_types.iter().map(|t| t.definition.name()).collect();
        for t in &mim.data_types {
            for r in &t.references {
                assert!(
                    names.contains(r.name.as_str()),
                    "{} -> {}",
                    t.definition.name(),
                    r.name
                );
            }
        }
    }
}
