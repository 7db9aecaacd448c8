//! Hash maps for the per-message path. Their keys are small integers (handles,
//! topics), for which std's SipHash costs more than the lookup: measured with
//! callgrind, about 450 of 6,200 instructions per in-process message went to
//! hashing (`docs/benchmarks.md`, "Where the in-process P99 went"). foldhash is
//! seeded per map, as std's `RandomState` is, so no code can come to rely on an
//! iteration order either.

/// A `HashMap` with foldhash's fast hasher. Make one with `FastMap::default()`.
pub type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
/// A `HashSet` with foldhash's fast hasher. Make one with `FastSet::default()`.
pub type FastSet<T> = std::collections::HashSet<T, foldhash::fast::RandomState>;
