//! Data distribution management through the front API: the FOM's dimensions and
//! their queries, and regions (create, set and get range bounds, commit, delete),
//! with the standard's exceptions.

mod common;

use common::*;
use glidepath::{
    AttributeHandle, DdmError, DimensionHandle, Federate, Fom, InteractionClassHandle, NameError,
    NameKind, ObjectClassHandle, RangeBounds, RegionHandle, Rti, RtiError,
};

/// The DDM test FOM: `Target { name, position [X, Y], level [X, Y, Level] }`,
/// interactions `Contact [X, Y]` (time-stamp order) and `Chat` (no dimensions);
/// dimensions X and Y (upper bound 1000, excluded when unspecified) and Level (upper
/// bound 100, `[0..10)` when unspecified).
fn sectors_fom() -> Fom {
    Fom::load_files(&[data_path("sectors.xml")]).expect("the DDM test FOM loads")
}

fn sectors(name: &str) -> Rti {
    let rti = Rti::inproc();
    rti.create_federation_execution_with_fom(name, sectors_fom())
        .expect("create");
    rti
}

/// Handles of the DDM test FOM.
struct Sectors {
    target: ObjectClassHandle,
    name: AttributeHandle,
    position: AttributeHandle,
    level_attribute: AttributeHandle,
    contact: InteractionClassHandle,
    chat: InteractionClassHandle,
    x: DimensionHandle,
    y: DimensionHandle,
    level: DimensionHandle,
}

impl Sectors {
    fn of(f: &Federate) -> Sectors {
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

fn r(lower: u64, upper: u64) -> RangeBounds {
    RangeBounds::new(lower, upper)
}

#[test]
fn dimensions_come_from_the_fom_with_their_queries() {
    let rti = sectors("dimensions");
    let f = join(&rti, "dimensions", "f");
    let s = Sectors::of(&f);
    assert_eq!(f.dimension_name(s.x).unwrap(), "X");
    assert_eq!(f.dimension_upper_bound(s.x).unwrap(), 1000);
    assert_eq!(f.dimension_upper_bound(s.level).unwrap(), 100);
    // The MIM's own dimension is there too.
    let federate_dimension = f.dimension_handle("HLAfederate").unwrap();
    assert_eq!(
        f.dimension_upper_bound(federate_dimension).unwrap(),
        1 << 32
    );
    assert_eq!(
        f.dimension_handle("Altitude"),
        Err(NameError::NameNotFound {
            kind: NameKind::Dimension,
            name: "Altitude".into()
        })
    );
    let nowhere = DimensionHandle(999);
    assert_eq!(
        f.dimension_upper_bound(nowhere),
        Err(NameError::InvalidDimensionHandle(nowhere))
    );
    assert_eq!(
        f.dimension_name(nowhere),
        Err(NameError::InvalidDimensionHandle(nowhere))
    );

    assert_eq!(
        f.available_dimensions_for_class_attribute(s.target, s.position)
            .unwrap(),
        [s.x, s.y]
    );
    assert_eq!(
        f.available_dimensions_for_class_attribute(s.target, s.level_attribute)
            .unwrap(),
        [s.x, s.y, s.level]
    );
    assert_eq!(
        f.available_dimensions_for_class_attribute(s.target, s.name)
            .unwrap(),
        []
    );
    assert_eq!(
        f.available_dimensions_for_interaction_class(s.contact)
            .unwrap(),
        [s.x, s.y]
    );
    assert_eq!(
        f.available_dimensions_for_interaction_class(s.chat)
            .unwrap(),
        []
    );
    // HLAprivilegeToDeleteObject belongs to HLAobjectRoot, not to a class of its own.
    let root = f.object_class_handle("HLAobjectRoot").unwrap();
    assert_eq!(
        f.available_dimensions_for_class_attribute(root, s.position),
        Err(NameError::AttributeNotDefined {
            class: root,
            attribute: s.position
        })
    );
    assert_eq!(
        f.available_dimensions_for_class_attribute(ObjectClassHandle(999), s.position),
        Err(NameError::InvalidObjectClassHandle(ObjectClassHandle(999)))
    );
    assert_eq!(
        f.available_dimensions_for_class_attribute(s.target, AttributeHandle(999)),
        Err(NameError::InvalidAttributeHandle(AttributeHandle(999)))
    );
    assert_eq!(
        f.available_dimensions_for_interaction_class(InteractionClassHandle(999)),
        Err(NameError::InvalidInteractionClassHandle(
            InteractionClassHandle(999)
        ))
    );
    assert_eq!(
        f.normalize_federate_handle(f.handle()),
        u64::from(f.handle().0)
    );
}

#[test]
fn a_region_is_created_with_the_full_range_and_its_bounds_are_set_and_read() {
    let rti = sectors("bounds");
    let f = join(&rti, "bounds", "f");
    let s = Sectors::of(&f);
    let region = f.create_region(&[s.y, s.x]).unwrap();
    assert_eq!(region.federate, f.handle());
    assert_eq!(f.dimension_handle_set(region).unwrap(), [s.x, s.y]);
    assert_eq!(f.range_bounds(region, s.x).unwrap(), r(0, 1000));
    f.set_range_bounds(region, s.x, r(100, 200)).unwrap();
    // As set, before and after the commit.
    assert_eq!(f.range_bounds(region, s.x).unwrap(), r(100, 200));
    f.commit_region_modifications(&[region]).unwrap();
    assert_eq!(f.range_bounds(region, s.x).unwrap(), r(100, 200));
    assert_eq!(f.range_bounds(region, s.y).unwrap(), r(0, 1000));
    // Empty and whole ranges are ranges; so is a point at the upper bound.
    for ok in [r(5, 5), r(0, 1000), r(1000, 1000)] {
        f.set_range_bounds(region, s.x, ok).unwrap();
    }
    // Two regions are two handles; a region without dimensions is a region.
    let other = f.create_region(&[]).unwrap();
    assert_ne!(other, region);
    assert_eq!(f.dimension_handle_set(other).unwrap(), []);
}

#[test]
fn region_services_raise_the_standards_exceptions() {
    let rti = sectors("exceptions");
    let f = join(&rti, "exceptions", "f");
    let g = join(&rti, "exceptions", "g");
    let s = Sectors::of(&f);
    let nowhere = DimensionHandle(999);
    assert_eq!(
        f.create_region(&[s.x, nowhere]),
        Err(RtiError::Ddm(DdmError::InvalidDimensionHandle(nowhere)))
    );
    let region = f.create_region(&[s.x]).unwrap();
    assert_eq!(
        f.set_range_bounds(region, s.y, r(0, 1)),
        Err(RtiError::Ddm(
            DdmError::RegionDoesNotContainSpecifiedDimension {
                region,
                dimension: s.y
            }
        ))
    );
    assert_eq!(
        f.range_bounds(region, s.y),
        Err(RtiError::Ddm(
            DdmError::RegionDoesNotContainSpecifiedDimension {
                region,
                dimension: s.y
            }
        ))
    );
    for bad in [r(10, 5), r(0, 1001), r(1001, 1001)] {
        assert_eq!(
            f.set_range_bounds(region, s.x, bad),
            Err(RtiError::Ddm(DdmError::InvalidRangeBound {
                dimension: s.x,
                bounds: bad,
                upper_bound: 1000
            }))
        );
    }
    // A refused range leaves the region as it was.
    assert_eq!(f.range_bounds(region, s.x).unwrap(), r(0, 1000));

    // Another federate's region is not ours to use.
    for result in [
        g.set_range_bounds(region, s.x, r(0, 1)),
        g.commit_region_modifications(&[region]),
        g.delete_region(region),
    ] {
        assert_eq!(
            result,
            Err(RtiError::Ddm(DdmError::RegionNotCreatedByThisFederate(
                region
            )))
        );
    }
    assert_eq!(
        g.range_bounds(region, s.x),
        Err(RtiError::Ddm(DdmError::RegionNotCreatedByThisFederate(
            region
        )))
    );

    // A deleted region is no region; a commit naming one commits nothing.
    let kept = f.create_region(&[s.x]).unwrap();
    f.set_range_bounds(kept, s.x, r(1, 2)).unwrap();
    f.delete_region(region).unwrap();
    assert_eq!(
        f.commit_region_modifications(&[kept, region]),
        Err(RtiError::Ddm(DdmError::InvalidRegion(region)))
    );
    assert_eq!(
        f.delete_region(region),
        Err(RtiError::Ddm(DdmError::InvalidRegion(region)))
    );
    assert_eq!(
        f.dimension_handle_set(region),
        Err(RtiError::Ddm(DdmError::InvalidRegion(region)))
    );
    let never = RegionHandle {
        federate: f.handle(),
        serial: 77,
    };
    assert_eq!(
        f.set_range_bounds(never, s.x, r(0, 1)),
        Err(RtiError::Ddm(DdmError::InvalidRegion(never)))
    );
}
