//! A set of federate handles kept as disjoint ranges.
//!
//! Handles are handed out in increasing order and federates that have left are never
//! seen again, so the handles a federate is done with (those that resigned before it
//! joined, and those whose last envelope it has processed) gather into a few long runs.
//! Kept as ranges, that knowledge costs a few words however many federates came and
//! went over a long run with churn, where a set of handles would grow with each one.

use crate::types::FederateHandle;

/// Disjoint, non-adjacent half-open ranges `[start, end)` of handle numbers, sorted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct HandleRanges {
    ranges: Vec<(u32, u32)>,
}

impl HandleRanges {
    /// The handles in `1..end` that `keep` does not list.
    pub(crate) fn below_except(end: u32, keep: impl IntoIterator<Item = u32>) -> Self {
        let mut keep: Vec<u32> = keep.into_iter().filter(|h| *h >= 1 && *h < end).collect();
        keep.sort_unstable();
        keep.dedup();
        let mut set = Self::default();
        let mut from = 1;
        for k in keep.into_iter().chain(std::iter::once(end)) {
            if from < k {
                set.ranges.push((from, k));
            }
            from = k + 1;
        }
        set
    }

    /// The index of the first range that ends after `h`.
    fn first_ending_after(&self, h: u32) -> usize {
        self.ranges.partition_point(|(_, end)| *end <= h)
    }

    pub(crate) fn contains(&self, h: FederateHandle) -> bool {
        let i = self.first_ending_after(h.0);
        self.ranges.get(i).is_some_and(|(start, _)| *start <= h.0)
    }

    pub(crate) fn insert(&mut self, h: FederateHandle) {
        let h = h.0;
        if h == u32::MAX {
            return; // the executive's handle is never a peer
        }
        let i = self.first_ending_after(h);
        if self.ranges.get(i).is_some_and(|(start, _)| *start <= h) {
            return;
        }
        // Joins the range ending at h (i - 1) and/or the one starting at h + 1 (i).
        let joins_left = i > 0 && self.ranges[i - 1].1 == h;
        let joins_right = self.ranges.get(i).is_some_and(|(start, _)| *start == h + 1);
        match (joins_left, joins_right) {
            (true, true) => {
                self.ranges[i - 1].1 = self.ranges[i].1;
                self.ranges.remove(i);
            }
            (true, false) => self.ranges[i - 1].1 = h + 1,
            (false, true) => self.ranges[i].0 = h,
            (false, false) => self.ranges.insert(i, (h, h + 1)),
        }
    }

    /// The end of the run that starts at `from` (`from` itself when it is not in the set).
    pub(crate) fn run_end(&self, from: u32) -> u32 {
        let i = self.first_ending_after(from);
        match self.ranges.get(i) {
            Some(&(start, end)) if start <= from => end,
            _ => from,
        }
    }

    /// Every handle in the set, in order.
    #[cfg(test)]
    pub(crate) fn iter(&self) -> impl Iterator<Item = FederateHandle> + '_ {
        self.ranges
            .iter()
            .flat_map(|&(start, end)| (start..end).map(FederateHandle))
    }

    /// The ranges, in order.
    pub(crate) fn ranges(&self) -> &[(u32, u32)] {
        &self.ranges
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(hs: &[u32]) -> HandleRanges {
        let mut s = HandleRanges::default();
        for h in hs {
            s.insert(FederateHandle(*h));
        }
        s
    }

    #[test]
    fn inserts_merge_into_runs() {
        let mut s = set(&[5, 3, 4, 9, 1]);
        assert_eq!(s.ranges(), &[(1, 2), (3, 6), (9, 10)]);
        s.insert(FederateHandle(2));
        assert_eq!(s.ranges(), &[(1, 6), (9, 10)]);
        assert!(s.contains(FederateHandle(4)) && !s.contains(FederateHandle(7)));
        assert_eq!(s.run_end(4), 6);
        assert_eq!(s.run_end(6), 6);
        assert_eq!(
            s.iter().map(|h| h.0).collect::<Vec<_>>(),
            vec![1, 2, 3, 4, 5, 9]
        );
    }

    #[test]
    fn below_except_is_the_complement_of_the_kept_handles() {
        let s = HandleRanges::below_except(10, [3, 4, 8, 12]);
        assert_eq!(s.ranges(), &[(1, 3), (5, 8), (9, 10)]);
        assert!(HandleRanges::below_except(1, []).ranges().is_empty());
    }

    #[test]
    fn agrees_with_a_plain_set_on_random_operations() {
        let mut plain = std::collections::BTreeSet::new();
        let mut s = HandleRanges::default();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..200 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let h = (x % 64) as u32 + 1;
            plain.insert(h);
            s.insert(FederateHandle(h));
            assert_eq!(
                s.iter().map(|h| h.0).collect::<Vec<_>>(),
                plain.iter().copied().collect::<Vec<_>>()
            );
            for w in s.ranges().windows(2) {
                assert!(w[0].1 < w[1].0, "ranges touch or overlap: {:?}", s.ranges());
            }
        }
    }
}
