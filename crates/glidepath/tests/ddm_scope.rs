//! Attribute scope advisories (data distribution management): with the switch on, a
//! federate hears *attributes in scope* when an attribute it subscribes of a
//! discovered instance gains an owner whose update regions overlap its subscription
//! regions, and *attributes out of scope* when that ends, whichever side moves; with
//! it off (the default) it hears nothing, and owners send nothing extra.

mod common;

use common::sectors::*;
use common::*;
use glidepath::backend::nats::NatsTestbed;
use glidepath::{
    AttributeHandle, Callback, DdmError, Federate, ObjectInstanceHandle, Rti, RtiConfig, RtiError,
    TransportKind,
};

/// The scope callbacks among `callbacks`, as `"in"` / `"out"` with their
/// attributes, in order.
fn scope(
    callbacks: &[Callback],
) -> Vec<(&'static str, ObjectInstanceHandle, Vec<AttributeHandle>)> {
    callbacks
        .iter()
        .filter_map(|c| match c {
            Callback::AttributesInScope {
                instance,
                attributes,
            } => Some(("in", *instance, attributes.clone())),
            Callback::AttributesOutOfScope {
                instance,
                attributes,
            } => Some(("out", *instance, attributes.clone())),
            _ => None,
        })
        .collect()
}

/// Moves a committed X/Y region of `f`.
fn move_to(f: &Federate, s: &Sectors, region: glidepath::RegionHandle, x: u64, y: u64) {
    f.set_range_bounds(region, s.x, r(x, x + 1)).unwrap();
    f.set_range_bounds(region, s.y, r(y, y + 1)).unwrap();
    f.commit_region_modifications(&[region]).unwrap();
}

#[test]
fn scope_follows_the_overlap_of_update_and_subscription_regions() {
    scope_follows_overlap(&sectors("scope"));
}

/// The same over a real `nats-server`, with cells on the wire (the notices travel on
/// the class's subject, updates on their cells').
#[test]
fn scope_follows_the_overlap_over_nats() {
    let testbed = NatsTestbed::start().unwrap_or_else(|e| panic!("{e}"));
    let mut config = RtiConfig::default();
    config.transport = TransportKind::Nats;
    config.nats_url = testbed.url();
    let rti = Rti::from_config(&config).unwrap_or_else(|e| panic!("{e}"));
    rti.create_federation_execution_with_fom("scope", sectors_fom())
        .unwrap();
    scope_follows_overlap(&rti);
}

fn scope_follows_overlap(rti: &Rti) {
    let owner = join(rti, "scope", "owner");
    let radar = join(rti, "scope", "radar");
    let s = Sectors::of(&owner);
    owner
        .publish_object_class_attributes(s.target, &[s.name, s.position])
        .unwrap();
    owner.publish_interaction_class(s.chat).unwrap();
    radar.publish_interaction_class(s.chat).unwrap();
    radar.subscribe_interaction_class(s.chat).unwrap();
    owner.subscribe_interaction_class(s.chat).unwrap();
    let sector = region_xy(&radar, &s, r(0, 100), Some(r(0, 100)));
    radar
        .subscribe_object_class_attributes_with_regions(s.target, &[(&[s.position], &[sector])])
        .unwrap();
    radar.enable_attribute_scope_advisory_switch().unwrap();
    assert_eq!(
        radar.enable_attribute_scope_advisory_switch(),
        Err(RtiError::Ddm(DdmError::AttributeScopeAdvisorySwitchIsOn))
    );
    // The owner has heard the radar's switch once it has the radar's marker.
    until_chat(&radar, &owner, &s, "watching");

    let at = region_xy(&owner, &s, r(50, 51), Some(r(50, 51)));
    let target = owner
        .register_object_instance_with_regions(s.target, &[(&[s.position], &[at])], None)
        .unwrap();
    // Not discovered yet (the radar subscribes with regions only): nothing in scope.
    let seen = until_chat(&owner, &radar, &s, "registered");
    assert!(scope(&seen).is_empty(), "{seen:?}");

    // The first overlapping update discovers it, brings position into scope and is
    // reflected, in that order.
    owner
        .update_attribute_values(target, [(s.position, b("near"))], "")
        .unwrap();
    let seen = until_chat(&owner, &radar, &s, "near");
    assert!(
        matches!(seen[0], Callback::DiscoverObjectInstance { .. }),
        "{seen:?}"
    );
    assert_eq!(scope(&seen[1..2]), [("in", target, vec![s.position])]);
    assert_eq!(reflected(&seen, s.position), ["near"]);

    // The owner moves its update region away: out of scope, though no update follows.
    move_to(&owner, &s, at, 500, 500);
    let seen = until_chat(&owner, &radar, &s, "moved away");
    assert_eq!(scope(&seen), [("out", target, vec![s.position])]);
    // Elsewhere, still out: nothing more.
    move_to(&owner, &s, at, 700, 700);
    let seen = until_chat(&owner, &radar, &s, "still away");
    assert!(scope(&seen).is_empty(), "{seen:?}");
    // Back into the sector: in scope again.
    move_to(&owner, &s, at, 10, 10);
    let seen = until_chat(&owner, &radar, &s, "back");
    assert_eq!(scope(&seen), [("in", target, vec![s.position])]);

    // The radar moves its own sector away: out of scope at once (its own commit).
    radar.set_range_bounds(sector, s.x, r(900, 1000)).unwrap();
    radar.commit_region_modifications(&[sector]).unwrap();
    let (cb, _) = wait_for(&radar, "out of scope", |c| {
        matches!(c, Callback::AttributesOutOfScope { .. })
    });
    assert_eq!(scope(&[cb]), [("out", target, vec![s.position])]);
    radar.set_range_bounds(sector, s.x, r(0, 100)).unwrap();
    radar.commit_region_modifications(&[sector]).unwrap();
    let (cb, _) = wait_for(&radar, "in scope", |c| {
        matches!(c, Callback::AttributesInScope { .. })
    });
    assert_eq!(scope(&[cb]), [("in", target, vec![s.position])]);

    // Switch off: moves tell nothing. On again: the owner tells where it is.
    radar.disable_attribute_scope_advisory_switch().unwrap();
    assert_eq!(
        radar.disable_attribute_scope_advisory_switch(),
        Err(RtiError::Ddm(DdmError::AttributeScopeAdvisorySwitchIsOff))
    );
    move_to(&owner, &s, at, 500, 500);
    move_to(&owner, &s, at, 20, 20);
    let seen = until_chat(&owner, &radar, &s, "unwatched moves");
    assert!(scope(&seen).is_empty(), "{seen:?}");
    radar.enable_attribute_scope_advisory_switch().unwrap();
    until_chat(&radar, &owner, &s, "watching again");
    let seen = until_chat(&owner, &radar, &s, "told again");
    assert_eq!(scope(&seen), [("in", target, vec![s.position])]);

    // Deleted: removed, with no out-of-scope callback before it.
    owner.delete_object_instance(target, "gone").unwrap();
    let seen = until_chat(&owner, &radar, &s, "deleted");
    assert!(scope(&seen).is_empty(), "{seen:?}");
    assert!(seen.iter().any(
        |c| matches!(c, Callback::RemoveObjectInstance { instance, .. } if *instance == target)
    ));
}

#[test]
fn the_default_region_is_in_scope_while_another_federate_owns_the_attribute() {
    let rti = sectors("scope-default");
    let owner = join(&rti, "scope-default", "owner");
    let display = join(&rti, "scope-default", "display");
    let s = Sectors::of(&owner);
    owner
        .publish_object_class_attributes(s.target, &[s.name, s.position])
        .unwrap();
    owner.publish_interaction_class(s.chat).unwrap();
    display.publish_interaction_class(s.chat).unwrap();
    display.subscribe_interaction_class(s.chat).unwrap();
    owner.subscribe_interaction_class(s.chat).unwrap();
    display
        .subscribe_object_class_attributes(s.target, &[s.name, s.position])
        .unwrap();
    display.enable_attribute_scope_advisory_switch().unwrap();
    until_chat(&display, &owner, &s, "watching");

    // Registered with the default region: discovered, both attributes in scope.
    let target = owner.register_object_instance(s.target).unwrap();
    let seen = until_chat(&owner, &display, &s, "registered");
    assert!(
        matches!(seen[0], Callback::DiscoverObjectInstance { .. }),
        "{seen:?}"
    );
    assert_eq!(scope(&seen), [("in", target, vec![s.name, s.position])]);

    // The owner lets the name go to nobody: the name is out of scope.
    owner
        .unconditional_attribute_ownership_divestiture(target, &[s.name])
        .unwrap();
    let seen = until_chat(&owner, &display, &s, "divested");
    assert_eq!(scope(&seen), [("out", target, vec![s.name])]);

    // The display takes it: owned here, still out of scope; the owner's regions for
    // position are untouched.
    display
        .publish_object_class_attributes(s.target, &[s.name])
        .unwrap();
    display
        .attribute_ownership_acquisition_if_available(target, &[s.name])
        .unwrap();
    wait_for(&display, "the acquisition", |c| {
        matches!(
            c,
            Callback::AttributeOwnershipAcquisitionNotification { .. }
        )
    });
    let seen = until_chat(&owner, &display, &s, "acquired");
    assert!(scope(&seen).is_empty(), "{seen:?}");
    // The owner moves position's update region: still the default region's
    // overlap for the display, so nothing changes.
    let at = region_xy(&owner, &s, r(5, 6), Some(r(5, 6)));
    owner
        .associate_regions_for_updates(target, &[(&[s.position], &[at])])
        .unwrap();
    let seen = until_chat(&owner, &display, &s, "associated");
    assert!(scope(&seen).is_empty(), "{seen:?}");
}

#[test]
fn nobody_watching_costs_nothing_on_the_wire() {
    let rti = sectors("scope-free");
    let owner = join(&rti, "scope-free", "owner");
    let radar = join(&rti, "scope-free", "radar");
    let s = Sectors::of(&owner);
    owner
        .publish_object_class_attributes(s.target, &[s.position])
        .unwrap();
    owner.publish_interaction_class(s.chat).unwrap();
    radar.subscribe_interaction_class(s.chat).unwrap();
    radar
        .subscribe_object_class_attributes(s.target, &[s.position])
        .unwrap();
    let at = region_xy(&owner, &s, r(50, 51), Some(r(50, 51)));
    let target = owner
        .register_object_instance_with_regions(s.target, &[(&[s.position], &[at])], None)
        .unwrap();
    until_chat(&owner, &radar, &s, "registered");
    let before = radar.stats().received;
    for k in 0..10 {
        move_to(&owner, &s, at, 10 * k, 10 * k);
    }
    let seen = until_chat(&owner, &radar, &s, "moved");
    assert!(scope(&seen).is_empty(), "{seen:?}");
    // Only the marker arrived: region moves send nothing while nobody watches.
    assert_eq!(radar.stats().received - before, 1);
    let _ = target;
}
