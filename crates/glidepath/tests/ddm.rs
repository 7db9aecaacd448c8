//! Data distribution management through the front API: the FOM's dimensions and
//! their queries, and regions (create, set and get range bounds, commit, delete),
//! with the standard's exceptions.

mod common;

use common::sectors::*;
use common::*;
use glidepath::{
    AttributeHandle, DdmError, DimensionHandle, InteractionClassHandle, NameError, NameKind,
    ObjectClassHandle, RegionHandle, RtiError,
};

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

#[test]
fn interactions_reach_only_subscribers_whose_regions_overlap_the_senders() {
    let rti = sectors("interactions");
    let sender = join(&rti, "interactions", "sender");
    let west = join(&rti, "interactions", "west");
    let everywhere = join(&rti, "interactions", "everywhere");
    let s = Sectors::of(&sender);
    let what = sender.parameter_handle(s.contact, "what").unwrap();
    sender.publish_interaction_class(s.contact).unwrap();
    sender.publish_interaction_class(s.chat).unwrap();
    let west_region = region_xy(&west, &s, r(0, 500), None);
    west.subscribe_interaction_class_with_regions(s.contact, &[west_region])
        .unwrap();
    everywhere.subscribe_interaction_class(s.contact).unwrap();
    for f in [&west, &everywhere] {
        f.subscribe_interaction_class(s.chat).unwrap();
    }

    let near = region_xy(&sender, &s, r(400, 600), Some(r(0, 10)));
    let far = region_xy(&sender, &s, r(500, 900), None);
    let edge = region_xy(&sender, &s, r(0, 0), None);
    for (text, regions) in [
        ("near", &[near][..]),
        ("far", &[far]),
        ("far-or-near", &[far, near]),
        ("edge", &[edge]),
        ("default", &[]),
    ] {
        sender
            .send_interaction_with_regions(s.contact, [(what, b(text))], regions, "")
            .unwrap();
    }
    // [500, 900) only touches [0, 500); a point at 0 overlaps it (equal lower bounds).
    assert_eq!(
        contacts(&until_chat(&sender, &west, &s, "1"), &s),
        ["near", "far-or-near", "edge", "default"]
    );
    assert_eq!(
        contacts(&until_chat(&sender, &everywhere, &s, "1"), &s),
        ["near", "far", "far-or-near", "edge", "default"]
    );

    // A commit moves the region for what is sent after it.
    sender.set_range_bounds(far, s.x, r(100, 200)).unwrap();
    sender
        .send_interaction_with_regions(s.contact, [(what, b("before"))], &[far], "")
        .unwrap();
    sender.commit_region_modifications(&[far]).unwrap();
    sender
        .send_interaction_with_regions(s.contact, [(what, b("after"))], &[far], "")
        .unwrap();
    assert_eq!(
        contacts(&until_chat(&sender, &west, &s, "2"), &s),
        ["after"]
    );

    // The subscriber's commit moves its interest the same way.
    west.set_range_bounds(west_region, s.x, r(800, 1000))
        .unwrap();
    west.commit_region_modifications(&[west_region]).unwrap();
    sender
        .send_interaction_with_regions(s.contact, [(what, b("west-moved"))], &[far], "")
        .unwrap();
    assert_eq!(
        contacts(&until_chat(&sender, &west, &s, "3"), &s),
        Vec::<String>::new()
    );
}

#[test]
fn updates_are_reflected_per_attribute_where_the_regions_overlap() {
    let rti = sectors("updates");
    let owner = join(&rti, "updates", "owner");
    let radar = join(&rti, "updates", "radar");
    let s = Sectors::of(&owner);
    owner
        .publish_object_class_attributes(s.target, &[s.name, s.position, s.level_attribute])
        .unwrap();
    owner.publish_interaction_class(s.chat).unwrap();
    radar.subscribe_interaction_class(s.chat).unwrap();
    // The radar watches position in its sector, the name everywhere, and the level
    // in its sector at levels [5, 20).
    let sector = region_xy(&radar, &s, r(0, 100), Some(r(0, 100)));
    let low = radar.create_region(&[s.x, s.y, s.level]).unwrap();
    radar.set_range_bounds(low, s.x, r(0, 100)).unwrap();
    radar.set_range_bounds(low, s.y, r(0, 100)).unwrap();
    radar.set_range_bounds(low, s.level, r(5, 20)).unwrap();
    radar.commit_region_modifications(&[low]).unwrap();
    radar
        .subscribe_object_class_attributes(s.target, &[s.name])
        .unwrap();
    radar
        .subscribe_object_class_attributes_with_regions(
            s.target,
            &[(&[s.position], &[sector]), (&[s.level_attribute], &[low])],
        )
        .unwrap();

    let target = owner.register_object_instance(s.target).unwrap();
    wait_for(
        &radar,
        "the discovery",
        |c| matches!(c, glidepath::Callback::DiscoverObjectInstance { instance, .. } if *instance == target),
    );
    // The target's own region: a point at (50, 50), on X and Y only: its level is
    // unspecified, so it takes Level's value when unspecified, [0, 10).
    let at = region_xy(&owner, &s, r(50, 51), Some(r(50, 51)));
    owner
        .associate_regions_for_updates(target, &[(&[s.position, s.level_attribute], &[at])])
        .unwrap();
    let update = |text: &str| {
        owner
            .update_attribute_values(
                target,
                [
                    (s.name, b(text)),
                    (s.position, b(text)),
                    (s.level_attribute, b(text)),
                ],
                "",
            )
            .unwrap();
    };
    update("inside");
    let seen = until_chat(&owner, &radar, &s, "1");
    assert_eq!(reflected(&seen, s.name), ["inside"]);
    assert_eq!(reflected(&seen, s.position), ["inside"]);
    assert_eq!(
        reflected(&seen, s.level_attribute),
        ["inside"],
        "[0, 10) meets [5, 20)"
    );

    // Out of the sector: only the name (default region) is reflected.
    owner.set_range_bounds(at, s.x, r(500, 501)).unwrap();
    owner.commit_region_modifications(&[at]).unwrap();
    update("outside");
    let seen = until_chat(&owner, &radar, &s, "2");
    assert_eq!(reflected(&seen, s.name), ["outside"]);
    assert!(reflected(&seen, s.position).is_empty(), "{seen:?}");
    assert!(reflected(&seen, s.level_attribute).is_empty(), "{seen:?}");

    // Back in, with the level given explicitly at [30, 40): the position is
    // reflected, the level is not.
    let high = owner.create_region(&[s.x, s.y, s.level]).unwrap();
    owner.set_range_bounds(high, s.x, r(10, 11)).unwrap();
    owner.set_range_bounds(high, s.y, r(10, 11)).unwrap();
    owner.set_range_bounds(high, s.level, r(30, 40)).unwrap();
    owner.commit_region_modifications(&[high]).unwrap();
    owner
        .unassociate_regions_for_updates(target, &[(&[s.position, s.level_attribute], &[at])])
        .unwrap();
    owner
        .associate_regions_for_updates(
            target,
            &[(&[s.position], &[at]), (&[s.level_attribute], &[high])],
        )
        .unwrap();
    owner.set_range_bounds(at, s.x, r(10, 11)).unwrap();
    owner.commit_region_modifications(&[at]).unwrap();
    update("high");
    let seen = until_chat(&owner, &radar, &s, "3");
    assert_eq!(reflected(&seen, s.position), ["high"]);
    assert!(reflected(&seen, s.level_attribute).is_empty(), "{seen:?}");

    // Unassociated, the level goes with the default region again.
    owner
        .unassociate_regions_for_updates(target, &[(&[s.level_attribute], &[high])])
        .unwrap();
    update("default");
    let seen = until_chat(&owner, &radar, &s, "4");
    assert_eq!(reflected(&seen, s.level_attribute), ["default"]);

    // Unsubscribing the sector's region leaves the position unsubscribed.
    radar
        .unsubscribe_object_class_attributes_with_regions(s.target, &[(&[s.position], &[sector])])
        .unwrap();
    update("unsubscribed");
    let seen = until_chat(&owner, &radar, &s, "5");
    assert!(reflected(&seen, s.position).is_empty(), "{seen:?}");
    assert_eq!(reflected(&seen, s.name), ["unsubscribed"]);
}

#[test]
fn a_region_in_use_is_not_deleted_and_regions_must_fit_their_context() {
    let rti = sectors("in-use");
    let f = join(&rti, "in-use", "f");
    let s = Sectors::of(&f);
    f.publish_object_class_attributes(s.target, &[s.position, s.level_attribute])
        .unwrap();
    f.publish_interaction_class(s.chat).unwrap();
    let xy = region_xy(&f, &s, r(0, 10), Some(r(0, 10)));
    let leveled = f.create_region(&[s.x, s.level]).unwrap();
    let in_use = Err(RtiError::Ddm(DdmError::RegionInUseForUpdateOrSubscription(
        xy,
    )));

    // A subscription uses it.
    f.subscribe_object_class_attributes_with_regions(s.target, &[(&[s.position], &[xy])])
        .unwrap();
    assert_eq!(f.delete_region(xy), in_use);
    f.unsubscribe_object_class_attributes_with_regions(s.target, &[(&[s.position], &[xy])])
        .unwrap();
    // So does an interaction subscription.
    f.subscribe_interaction_class_with_regions(s.contact, &[xy])
        .unwrap();
    assert_eq!(f.delete_region(xy), in_use);
    f.unsubscribe_interaction_class(s.contact).unwrap();
    // And an update association.
    let target = f.register_object_instance(s.target).unwrap();
    f.associate_regions_for_updates(target, &[(&[s.position], &[xy])])
        .unwrap();
    assert_eq!(f.delete_region(xy), in_use);
    f.unassociate_regions_for_updates(target, &[(&[s.position], &[xy])])
        .unwrap();
    f.delete_region(xy).unwrap();

    // Level is not available for position, nor any dimension for Chat.
    let context = |context| {
        Err(RtiError::Ddm(DdmError::InvalidRegionContext {
            region: leveled,
            dimension: s.level,
            context,
        }))
    };
    assert_eq!(
        f.associate_regions_for_updates(target, &[(&[s.position], &[leveled])]),
        context(glidepath::RegionContext::Attribute {
            class: s.target,
            attribute: s.position
        })
    );
    f.associate_regions_for_updates(target, &[(&[s.level_attribute], &[leveled])])
        .unwrap();
    assert_eq!(
        f.subscribe_object_class_attributes_with_regions(s.target, &[(&[s.position], &[leveled])]),
        context(glidepath::RegionContext::Attribute {
            class: s.target,
            attribute: s.position
        })
    );
    assert_eq!(
        f.send_interaction_with_regions(s.chat, [], &[leveled], ""),
        Err(RtiError::Ddm(DdmError::InvalidRegionContext {
            region: leveled,
            dimension: s.x,
            context: glidepath::RegionContext::InteractionClass(s.chat)
        }))
    );
    assert_eq!(
        f.subscribe_interaction_class_with_regions(s.contact, &[leveled]),
        context(glidepath::RegionContext::InteractionClass(s.contact))
    );
    // Registering with regions checks them before registering anything, then
    // associates them: the region is in use.
    assert_eq!(
        f.register_object_instance_with_regions(s.target, &[(&[s.position], &[leveled])], None)
            .map(|_| ()),
        context(glidepath::RegionContext::Attribute {
            class: s.target,
            attribute: s.position
        })
    );
    let xy2 = region_xy(&f, &s, r(0, 10), Some(r(0, 10)));
    let second = f
        .register_object_instance_with_regions(s.target, &[(&[s.position], &[xy2])], None)
        .unwrap();
    assert_eq!(
        f.delete_region(xy2),
        Err(RtiError::Ddm(DdmError::RegionInUseForUpdateOrSubscription(
            xy2
        )))
    );
    f.delete_object_instance(second, "").unwrap();
    f.delete_region(xy2).unwrap();
    // A deleted region cannot be used.
    assert_eq!(
        f.subscribe_interaction_class_with_regions(s.contact, &[xy]),
        Err(RtiError::Ddm(DdmError::InvalidRegion(xy)))
    );
    // Deleting the instance ends its associations.
    f.delete_object_instance(target, "").unwrap();
    f.delete_region(leveled).unwrap();
}

#[test]
fn on_inproc_a_message_no_region_of_the_subscriber_overlaps_never_reaches_it() {
    let rti = sectors("source");
    let sender = join(&rti, "source", "sender");
    let west = join(&rti, "source", "west");
    let s = Sectors::of(&sender);
    let what = sender.parameter_handle(s.contact, "what").unwrap();
    sender.publish_interaction_class(s.contact).unwrap();
    sender.publish_interaction_class(s.chat).unwrap();
    let west_region = region_xy(&west, &s, r(0, 500), None);
    west.subscribe_interaction_class_with_regions(s.contact, &[west_region])
        .unwrap();
    west.subscribe_interaction_class(s.chat).unwrap();
    let far = region_xy(&sender, &s, r(600, 700), None);
    let near = region_xy(&sender, &s, r(100, 200), None);
    until_chat(&sender, &west, &s, "settled");

    // Ten far contacts and one near: the far ones are dropped by the bus before they
    // reach west's RTI (received counts what its RTI took in).
    let before = west.stats().received;
    for _ in 0..10 {
        sender
            .send_interaction_with_regions(s.contact, [(what, b("far"))], &[far], "")
            .unwrap();
    }
    sender
        .send_interaction_with_regions(s.contact, [(what, b("near"))], &[near], "")
        .unwrap();
    assert_eq!(contacts(&until_chat(&sender, &west, &s, "1"), &s), ["near"]);
    assert_eq!(
        west.stats().received - before,
        2,
        "the near contact and the marker"
    );

    // West moves its region over the far one: what is sent after the commit arrives.
    west.set_range_bounds(west_region, s.x, r(650, 660))
        .unwrap();
    west.commit_region_modifications(&[west_region]).unwrap();
    sender
        .send_interaction_with_regions(s.contact, [(what, b("far"))], &[far], "")
        .unwrap();
    assert_eq!(contacts(&until_chat(&sender, &west, &s, "2"), &s), ["far"]);
    // Subscribed with the default region as well, west wants everything again.
    west.subscribe_interaction_class(s.contact).unwrap();
    sender
        .send_interaction_with_regions(s.contact, [(what, b("near"))], &[near], "")
        .unwrap();
    assert_eq!(contacts(&until_chat(&sender, &west, &s, "3"), &s), ["near"]);
}

#[test]
fn a_time_stamped_message_filtered_at_the_source_neither_holds_nor_moves_a_grant() {
    let rti = sectors("time");
    let sender = join(&rti, "time", "sender");
    let west = join(&rti, "time", "west");
    let s = Sectors::of(&sender);
    let what = sender.parameter_handle(s.contact, "what").unwrap();
    sender.publish_interaction_class(s.contact).unwrap();
    let west_region = region_xy(&west, &s, r(0, 500), None);
    west.subscribe_interaction_class_with_regions(s.contact, &[west_region])
        .unwrap();
    sender.enable_time_regulation(1.0).unwrap();
    wait_for(&sender, "regulation enabled", |c| {
        matches!(c, glidepath::Callback::TimeRegulationEnabled { .. })
    });
    west.enable_time_constrained().unwrap();
    wait_for(&west, "constrained enabled", |c| {
        matches!(c, glidepath::Callback::TimeConstrainedEnabled { .. })
    });
    let far = region_xy(&sender, &s, r(600, 700), None);
    let near = region_xy(&sender, &s, r(100, 200), None);
    sender
        .send_interaction_with_regions_at(s.contact, [(what, b("far"))], &[far], "", 5.0)
        .unwrap();
    sender
        .send_interaction_with_regions_at(s.contact, [(what, b("near"))], &[near], "", 7.0)
        .unwrap();
    // West asks for the next message up to 10: the far contact at 5 never reaches
    // it, so the grant is at the near one, 7, once the sender promises past it.
    west.next_message_request(10.0).unwrap();
    sender.time_advance_request(20.0).unwrap();
    let (grant, skipped) = wait_for(&west, "a grant", |c| {
        matches!(c, glidepath::Callback::TimeAdvanceGrant { .. })
    });
    assert_eq!(contacts(&skipped, &s), ["near"]);
    assert!(
        matches!(grant, glidepath::Callback::TimeAdvanceGrant { time } if time == t(7.0)),
        "{grant:?}"
    );
    assert_eq!(common::grant(&sender), t(20.0));
    // Nothing else is on its way: the next request goes all the way.
    west.next_message_request(10.0).unwrap();
    assert_eq!(common::grant(&west), t(10.0));
}
