//! Regions of data distribution management (IEEE 1516.1-2010 chapter 9): range
//! bounds, what a region covers once committed ([`Extent`]), sets of regions, and the
//! standard's overlap rule.
//!
//! Bounds are normalized values: a dimension of upper bound `u` has values in
//! `[0, u]`, and a range is half-open, `[lower, upper)` with `lower <= upper <= u`.
//! Two ranges overlap when their lower bounds are equal or each starts before the
//! other ends; two regions overlap when their ranges overlap in every dimension both
//! have; two region sets overlap when some region of one overlaps some region of the
//! other. A message sent without regions, and a subscription made without them, use
//! the *default region*, which overlaps every region.

use std::fmt;
use std::sync::Arc;

use glidepath_fom::DimensionHandle;

use crate::types::FederateHandle;

/// A region, as created by one federate (`create_region`). The creating federate's
/// handle and its own serial number make it unique in the federation; only its
/// creator may use it.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct RegionHandle {
    /// The federate that created it.
    pub federate: FederateHandle,
    /// Its number among that federate's regions, from 1.
    pub serial: u32,
}

impl fmt::Display for RegionHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "region#{}.{}", self.federate.0, self.serial)
    }
}

/// A half-open range of normalized values, `[lower, upper)`.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct RangeBounds {
    /// The first value in the range.
    pub lower: u64,
    /// The first value after the range.
    pub upper: u64,
}

impl RangeBounds {
    /// `[lower, upper)`.
    pub const fn new(lower: u64, upper: u64) -> RangeBounds {
        RangeBounds { lower, upper }
    }

    /// The standard's range overlap: equal lower bounds, or each range starts before
    /// the other ends. (So `[3, 3)` overlaps `[3, 5)`: a point at a range's start.)
    #[inline]
    pub fn overlaps(&self, other: &RangeBounds) -> bool {
        self.lower == other.lower || (self.lower < other.upper && other.lower < self.upper)
    }
}

impl fmt::Display for RangeBounds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}, {})", self.lower, self.upper)
    }
}

/// What one region covers: a range on each of its dimensions, sorted by dimension.
/// This is what travels with a message and what filters compare.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Extent(Arc<[(DimensionHandle, RangeBounds)]>);

impl Extent {
    /// An extent from ranges in any order; a dimension given twice keeps its last range.
    pub fn new(ranges: impl IntoIterator<Item = (DimensionHandle, RangeBounds)>) -> Extent {
        let mut v: Vec<(DimensionHandle, RangeBounds)> = ranges.into_iter().collect();
        // Stable: equal dimensions keep their order, so the last one given wins below.
        v.sort_by_key(|(d, _)| *d);
        let mut out: Vec<(DimensionHandle, RangeBounds)> = Vec::with_capacity(v.len());
        for (d, r) in v {
            match out.last_mut() {
                Some((last, range)) if *last == d => *range = r,
                _ => out.push((d, r)),
            }
        }
        Extent(out.into())
    }

    /// An extent from ranges already sorted by strictly increasing dimension with
    /// `lower <= upper` each, as a decoder reads them; `None` otherwise.
    pub fn from_sorted(ranges: Vec<(DimensionHandle, RangeBounds)>) -> Option<Extent> {
        let sorted = ranges.windows(2).all(|w| w[0].0 < w[1].0);
        let ordered = ranges.iter().all(|(_, r)| r.lower <= r.upper);
        (sorted && ordered).then(|| Extent(ranges.into()))
    }

    /// The ranges, sorted by dimension.
    pub fn ranges(&self) -> &[(DimensionHandle, RangeBounds)] {
        &self.0
    }

    /// The range on dimension `d`, if the extent has it.
    pub fn range(&self, d: DimensionHandle) -> Option<RangeBounds> {
        self.0
            .binary_search_by_key(&d, |(h, _)| *h)
            .ok()
            .map(|i| self.0[i].1)
    }

    /// The dimensions, in increasing order.
    pub fn dimensions(&self) -> impl Iterator<Item = DimensionHandle> + '_ {
        self.0.iter().map(|(d, _)| *d)
    }

    /// True when the ranges overlap in every dimension both extents have (extents
    /// with no dimension in common overlap).
    pub fn overlaps(&self, other: &Extent) -> bool {
        let (mut a, mut b) = (self.0.iter().peekable(), other.0.iter().peekable());
        while let (Some((da, ra)), Some((db, rb))) = (a.peek(), b.peek()) {
            match da.cmp(db) {
                std::cmp::Ordering::Less => {
                    a.next();
                }
                std::cmp::Ordering::Greater => {
                    b.next();
                }
                std::cmp::Ordering::Equal => {
                    if !ra.overlaps(rb) {
                        return false;
                    }
                    a.next();
                    b.next();
                }
            }
        }
        true
    }
}

impl fmt::Debug for Extent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        for (i, (d, r)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "d{}: {r}", d.0)?;
        }
        f.write_str("}")
    }
}

/// A set of regions as extents: the regions an update or interaction was sent with,
/// or the regions of a subscription. Never empty: "no regions" is the default region,
/// written `None` wherever a `RegionSet` is optional.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct RegionSet(Arc<[Extent]>);

impl RegionSet {
    /// A set of the given extents; `None` when there are none (the default region).
    pub fn new(extents: Vec<Extent>) -> Option<RegionSet> {
        (!extents.is_empty()).then(|| RegionSet(extents.into()))
    }

    /// The extents, in the order given.
    pub fn extents(&self) -> &[Extent] {
        &self.0
    }

    /// True when some extent of one set overlaps some extent of the other.
    pub fn overlaps(&self, other: &RegionSet) -> bool {
        self.0.iter().any(|a| other.0.iter().any(|b| a.overlaps(b)))
    }

    /// The extents of both sets.
    pub fn union(&self, other: &RegionSet) -> RegionSet {
        RegionSet(self.0.iter().chain(other.0.iter()).cloned().collect())
    }
}

impl fmt::Debug for RegionSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0.iter()).finish()
    }
}

/// Whether two optional region sets overlap, `None` being the default region (which
/// overlaps everything).
#[inline]
pub fn regions_overlap(a: Option<&RegionSet>, b: Option<&RegionSet>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.overlaps(b),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(n: u32) -> DimensionHandle {
        DimensionHandle(n)
    }
    fn r(lower: u64, upper: u64) -> RangeBounds {
        RangeBounds::new(lower, upper)
    }

    #[test]
    fn ranges_are_half_open_and_equal_lower_bounds_overlap() {
        assert!(r(0, 10).overlaps(&r(9, 20)));
        assert!(
            !r(0, 10).overlaps(&r(10, 20)),
            "touching is not overlapping"
        );
        assert!(!r(10, 20).overlaps(&r(0, 10)));
        assert!(
            r(3, 3).overlaps(&r(3, 5)),
            "a point at the start of a range"
        );
        assert!(r(3, 3).overlaps(&r(3, 3)));
        assert!(!r(4, 4).overlaps(&r(3, 4)), "a point at the end of a range");
        assert!(r(4, 4).overlaps(&r(3, 5)));
        assert!(!r(0, 0).overlaps(&r(1, 1)));
    }

    #[test]
    fn extents_overlap_in_every_dimension_both_have() {
        let a = Extent::new([(d(1), r(0, 10)), (d(2), r(0, 10))]);
        let b = Extent::new([(d(2), r(5, 15)), (d(3), r(100, 200))]);
        assert!(
            a.overlaps(&b),
            "only dimension 2 is shared, and it overlaps"
        );
        let c = Extent::new([(d(1), r(10, 20)), (d(2), r(5, 15))]);
        assert!(!a.overlaps(&c), "dimension 1 does not overlap");
        assert!(a.overlaps(&Extent::new([])), "nothing in common");
        assert!(Extent::new([(d(9), r(0, 1))]).overlaps(&a));
    }

    #[test]
    fn an_extent_sorts_its_dimensions_and_keeps_the_last_range_given() {
        let e = Extent::new([(d(3), r(1, 2)), (d(1), r(5, 6)), (d(3), r(7, 8))]);
        assert_eq!(e.ranges(), &[(d(1), r(5, 6)), (d(3), r(7, 8))]);
        assert_eq!(e.range(d(3)), Some(r(7, 8)));
        assert_eq!(e.range(d(2)), None);
        assert!(Extent::from_sorted(vec![(d(2), r(0, 1)), (d(1), r(0, 1))]).is_none());
        assert!(Extent::from_sorted(vec![(d(1), r(0, 1)), (d(1), r(0, 1))]).is_none());
        assert!(Extent::from_sorted(vec![(d(1), r(2, 1))]).is_none());
        assert!(Extent::from_sorted(vec![(d(1), r(1, 1)), (d(4), r(0, 9))]).is_some());
    }

    #[test]
    fn sets_overlap_when_any_pair_does_and_the_default_region_overlaps_all() {
        let left = RegionSet::new(vec![Extent::new([(d(1), r(0, 10))])]).unwrap();
        let right = RegionSet::new(vec![Extent::new([(d(1), r(20, 30))])]).unwrap();
        let both = left.union(&right);
        let far = RegionSet::new(vec![Extent::new([(d(1), r(40, 50))])]).unwrap();
        assert!(!left.overlaps(&right));
        assert!(both.overlaps(&right));
        assert!(!both.overlaps(&far));
        assert!(regions_overlap(None, Some(&far)));
        assert!(regions_overlap(Some(&far), None));
        assert!(!regions_overlap(Some(&left), Some(&far)));
        assert_eq!(RegionSet::new(vec![]), None);
    }
}
