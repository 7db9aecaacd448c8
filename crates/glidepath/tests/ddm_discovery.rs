//! Data distribution management and discovery: a federate that subscribes a class
//! with regions only discovers an instance when an update of it overlaps one of its
//! subscription regions, not when it is registered; with the default region it
//! discovers at registration, as without regions. Request attribute value update
//! with regions asks only for what overlaps.

mod common;

use common::sectors::*;
use common::*;
use glidepath::{Callback, DdmError, ObjectInstanceHandle, RtiError};

fn discoveries(callbacks: &[Callback]) -> Vec<ObjectInstanceHandle> {
    callbacks
        .iter()
        .filter_map(|c| match c {
            Callback::DiscoverObjectInstance { instance, .. } => Some(*instance),
            _ => None,
        })
        .collect()
}

#[test]
fn an_instance_is_discovered_when_an_update_overlaps_the_subscription_regions() {
    let rti = sectors("discovery");
    let owner = join(&rti, "discovery", "owner");
    let radar = join(&rti, "discovery", "radar");
    let s = Sectors::of(&owner);
    owner
        .publish_object_class_attributes(s.target, &[s.name, s.position])
        .unwrap();
    owner.publish_interaction_class(s.chat).unwrap();
    radar.subscribe_interaction_class(s.chat).unwrap();
    // The radar wants positions in [0, 100) x [0, 100), and nothing else.
    let sector = region_xy(&radar, &s, r(0, 100), Some(r(0, 100)));
    radar
        .subscribe_object_class_attributes_with_regions(s.target, &[(&[s.position], &[sector])])
        .unwrap();

    // Registered far away: not discovered, neither then nor by a far update.
    let at = region_xy(&owner, &s, r(500, 501), Some(r(500, 501)));
    let target = owner
        .register_object_instance_with_regions(s.target, &[(&[s.position], &[at])], None)
        .unwrap();
    let seen = until_chat(&owner, &radar, &s, "registered");
    assert!(discoveries(&seen).is_empty(), "{seen:?}");
    owner
        .update_attribute_values(target, [(s.position, b("far"))], "")
        .unwrap();
    let seen = until_chat(&owner, &radar, &s, "far");
    assert!(seen.is_empty(), "nothing of a far update: {seen:?}");
    assert_eq!(radar.stats().unknown_instance, 0, "waiting is not unknown");

    // An update carrying only the name (not subscribed) does not discover it either.
    owner.set_range_bounds(at, s.x, r(50, 51)).unwrap();
    owner.set_range_bounds(at, s.y, r(50, 51)).unwrap();
    owner.commit_region_modifications(&[at]).unwrap();
    owner
        .update_attribute_values(target, [(s.name, b("a name"))], "")
        .unwrap();
    let seen = until_chat(&owner, &radar, &s, "name only");
    assert!(seen.is_empty(), "{seen:?}");

    // Into the sector: discovered, then reflected, in that order.
    owner
        .update_attribute_values(target, [(s.position, b("near"))], "")
        .unwrap();
    let seen = until_chat(&owner, &radar, &s, "near");
    assert_eq!(discoveries(&seen), [target]);
    assert!(
        matches!(&seen[0], Callback::DiscoverObjectInstance { instance, class, .. }
            if *instance == target && *class == s.target)
    );
    assert_eq!(reflected(&seen, s.position), ["near"]);
    assert_eq!(seen.len(), 2, "{seen:?}");

    // Out again: known, it stays known (and reflects nothing out of the sector).
    owner.set_range_bounds(at, s.x, r(500, 501)).unwrap();
    owner.commit_region_modifications(&[at]).unwrap();
    owner
        .update_attribute_values(target, [(s.position, b("far again"))], "")
        .unwrap();
    let seen = until_chat(&owner, &radar, &s, "far again");
    assert!(seen.is_empty(), "{seen:?}");
    owner.delete_object_instance(target, "gone").unwrap();
    let (removed, _) = wait_for(&radar, "the removal", |c| {
        matches!(c, Callback::RemoveObjectInstance { .. })
    });
    assert!(
        matches!(removed, Callback::RemoveObjectInstance { instance, .. } if instance == target)
    );
}

#[test]
fn an_instance_never_discovered_is_removed_silently_and_the_default_region_discovers_at_once() {
    let rti = sectors("silent");
    let owner = join(&rti, "silent", "owner");
    let radar = join(&rti, "silent", "radar");
    let s = Sectors::of(&owner);
    owner
        .publish_object_class_attributes(s.target, &[s.name, s.position])
        .unwrap();
    owner.publish_interaction_class(s.chat).unwrap();
    radar.subscribe_interaction_class(s.chat).unwrap();
    let sector = region_xy(&radar, &s, r(0, 100), Some(r(0, 100)));
    radar
        .subscribe_object_class_attributes_with_regions(s.target, &[(&[s.position], &[sector])])
        .unwrap();
    let far = region_xy(&owner, &s, r(500, 501), Some(r(500, 501)));
    let waiting = owner
        .register_object_instance_with_regions(s.target, &[(&[s.position], &[far])], None)
        .unwrap();
    let doomed = owner.register_object_instance(s.target).unwrap();
    owner.delete_object_instance(doomed, "").unwrap();
    let seen = until_chat(&owner, &radar, &s, "deleted");
    assert!(seen.is_empty(), "never discovered, never removed: {seen:?}");
    assert_eq!(radar.stats().unknown_instance, 0);

    // Subscribing the name with the default region: the instance still registered
    // is discovered now, as any instance is when its class is subscribed.
    radar
        .subscribe_object_class_attributes(s.target, &[s.name])
        .unwrap();
    let (found, _) = wait_for(&radar, "the discovery", |c| {
        matches!(c, Callback::DiscoverObjectInstance { .. })
    });
    assert!(
        matches!(found, Callback::DiscoverObjectInstance { instance, .. } if instance == waiting)
    );
    // And a later registration is discovered at once.
    let next = owner.register_object_instance(s.target).unwrap();
    let seen = until_chat(&owner, &radar, &s, "registered");
    assert_eq!(discoveries(&seen), [next]);
}

#[test]
fn a_request_with_regions_is_answered_only_for_attributes_whose_update_regions_overlap() {
    let rti = sectors("request");
    let owner = join(&rti, "request", "owner");
    let radar = join(&rti, "request", "radar");
    let s = Sectors::of(&owner);
    owner
        .publish_object_class_attributes(s.target, &[s.name, s.position])
        .unwrap();
    owner.subscribe_interaction_class(s.chat).unwrap();
    radar.publish_interaction_class(s.chat).unwrap();
    let near_region = region_xy(&owner, &s, r(50, 51), Some(r(50, 51)));
    let far_region = region_xy(&owner, &s, r(500, 501), Some(r(500, 501)));
    let near = owner
        .register_object_instance_with_regions(s.target, &[(&[s.position], &[near_region])], None)
        .unwrap();
    owner
        .register_object_instance_with_regions(s.target, &[(&[s.position], &[far_region])], None)
        .unwrap();
    let plain = owner.register_object_instance(s.target).unwrap();

    let ask = region_xy(&radar, &s, r(0, 100), Some(r(0, 100)));
    radar
        .request_attribute_value_update_with_regions(s.target, &[(&[s.position], &[ask])], "now")
        .unwrap();
    let seen = until_chat(&radar, &owner, &s, "asked");
    let mut provided: Vec<(ObjectInstanceHandle, Vec<glidepath::AttributeHandle>)> = seen
        .iter()
        .filter_map(|c| match c {
            Callback::ProvideAttributeValueUpdate {
                instance,
                attributes,
                tag,
            } if tag == "now" => Some((*instance, attributes.clone())),
            _ => None,
        })
        .collect();
    provided.sort();
    // The near instance's region overlaps; the plain one's updates use the default
    // region, which overlaps every region; the far one is not asked.
    assert_eq!(
        provided,
        [(near, vec![s.position]), (plain, vec![s.position])],
        "{seen:?}"
    );

    // A region with a dimension the attribute lacks is refused, and nothing is sent.
    let level_only = radar.create_region(&[s.level]).unwrap();
    assert!(matches!(
        radar.request_attribute_value_update_with_regions(
            s.target,
            &[(&[s.position], &[level_only])],
            "bad",
        ),
        Err(RtiError::Ddm(DdmError::InvalidRegionContext { .. }))
    ));
    let seen = until_chat(&radar, &owner, &s, "refused");
    assert!(seen.is_empty(), "{seen:?}");
}
