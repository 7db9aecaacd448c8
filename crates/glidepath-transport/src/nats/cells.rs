//! Data distribution management on the wire: updates and interactions sent with
//! regions travel on the subjects of the grid cells they cover, so a receiver's
//! connection reads little more than what overlaps its own regions
//! (`docs/wire-format.md`, "Cells").
//!
//! # The grid
//!
//! [`CellGrid`] cuts the space of up to [`GRID_AXES_MAX`] dimensions (chosen by name
//! in [`NatsOptions::ddm_dimensions`], else the federation's first non-`HLA`
//! dimensions) into [`NatsOptions::ddm_cells`] slices each. A value `v` of a
//! dimension with upper bound `U` falls in slice `⌊v · n / U⌋` (the last slice takes
//! `U` itself), a range `[l, u)` covers the slices of `l` through `u − 1` (a point
//! `[v, v)` that of `v`), and an extent covers the product of its axes' slices (all
//! of an axis it does not name). Two extents that overlap (the standard's rule) then
//! always share a cell, so a subscriber that reads every cell its regions cover
//! misses nothing, and the exact test at delivery removes what shares a cell without
//! overlapping. Every member computes the same grid from the FOM and the options;
//! its 16-bit id ([`CellGrid::id`]) is in every cell subject, so members configured
//! differently never read each other's cells (they still get everything, below).
//!
//! # Sending
//!
//! An envelope with regions whose cells number at most [`SEND_CELLS_MAX`] is
//! published once on each of its cells' subjects instead of the topic's subject. It
//! keeps its sender's `seq`, so the sender's numbering stays one sequence over all
//! subjects and reliable delivery ([`super::flow`]) keeps it, retransmits it and
//! counts the window as before. Receivers reading only some cells would see the
//! others' `seq`s as holes; the sender accounts for them in a *cell account* on the
//! federation's `cells` subject, which every receiver reads in order with the
//! sender's other envelopes: for a range `(from, upto]` of `seq`s that all went to
//! cells, how many envelopes went to each (topic, cell). One is published before the
//! next envelope that goes to the federation's subjects, after
//! [`ACCOUNT_EVERY`] cell envelopes, and once the sender has been idle for
//! [`ACCOUNT_IDLE`].
//!
//! # Receiving
//!
//! A receiver subscribes, for each data topic it reads, the cells its interest covers
//! (all of them, one wildcard, without regions or beyond [`RECEIVE_CELLS_MAX`]). An
//! envelope arriving on a cell may follow holes that are other cells' envelopes, so
//! it does not NACK them at once ([`glidepath_flow::Arrival::deferred`]). When an
//! account arrives, the reader first takes in everything already waiting on its cell
//! subscriptions (the NATS server writes one publisher's messages to a connection in
//! order, and the client hands them to the subscriptions' channels in that order, so
//! every cell envelope sent before the account is then in hand unless it was lost).
//! If, for every (topic, cell) of the account that it reads, it holds as many
//! envelopes of the range as the account says, the rest of the range was not for it
//! and is skipped ([`glidepath_flow::Receiver::handle_skip`]); otherwise something
//! was lost and the holes are NACKed at once: the sender retransmits the whole range
//! to this receiver, which filters it at delivery. A lost account, a receiver on a
//! different grid or one that does not know accounts at all ends the same way: the
//! holes are asked for and everything arrives, only less economically.
//!
//! [`NatsOptions::ddm_dimensions`]: super::NatsOptions::ddm_dimensions
//! [`NatsOptions::ddm_cells`]: super::NatsOptions::ddm_cells

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use glidepath_core::{
    DimensionHandle, FederateHandle, InteractionClassHandle, ObjectClassHandle, RegionSet, Topic,
};
use glidepath_wire::varint;

/// At most this many dimensions make a grid.
pub const GRID_AXES_MAX: usize = 3;
/// An envelope covering more cells than this goes to the topic's subject (everyone).
pub const SEND_CELLS_MAX: usize = 16;
/// A receiver whose interest covers more cells than this reads the topic's every cell.
pub const RECEIVE_CELLS_MAX: usize = 256;
/// A cell account is published after this many cell envelopes at the latest.
pub const ACCOUNT_EVERY: u32 = 512;
/// ... and once the sender has published no cell envelope for this long.
pub const ACCOUNT_IDLE: Duration = Duration::from_millis(1);
/// The version byte that starts an account.
const ACCOUNT_VERSION: u8 = 1;
/// An account naming more (topic, cell) pairs than this is refused as malformed.
const ACCOUNT_ENTRIES_MAX: u64 = 1 << 16;

/// One axis of a grid: a dimension, its upper bound, how many slices.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Axis {
    dimension: DimensionHandle,
    upper: u64,
    slices: u32,
}

impl Axis {
    fn slice(&self, v: u64) -> u32 {
        if self.upper == 0 {
            return 0;
        }
        let s = (u128::from(v) * u128::from(self.slices) / u128::from(self.upper)) as u64;
        s.min(u64::from(self.slices) - 1) as u32
    }

    /// The slices `[lower, upper)` covers (that of `lower` for a point).
    fn slices_of(&self, lower: u64, upper: u64) -> (u32, u32) {
        let last = if upper > lower { upper - 1 } else { lower };
        (self.slice(lower), self.slice(last))
    }
}

/// The cells of one federation's routing space (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CellGrid {
    id: u16,
    axes: Vec<Axis>,
}

impl CellGrid {
    /// A grid over `axes` (dimension, upper bound), `slices` each; `None` without axes
    /// or slices. Only the first [`GRID_AXES_MAX`] axes are used.
    pub fn new(axes: &[(DimensionHandle, u64)], slices: u32) -> Option<CellGrid> {
        if axes.is_empty() || slices == 0 {
            return None;
        }
        let axes: Vec<Axis> = axes
            .iter()
            .take(GRID_AXES_MAX)
            .map(|&(dimension, upper)| Axis {
                dimension,
                upper,
                slices,
            })
            .collect();
        // FNV-1a over what decides the cells, folded to 16 bits.
        let mut h: u32 = 0x811c_9dc5;
        let mut eat = |bytes: &[u8]| {
            for b in bytes {
                h ^= u32::from(*b);
                h = h.wrapping_mul(0x0100_0193);
            }
        };
        for a in &axes {
            eat(&a.dimension.0.to_le_bytes());
            eat(&a.upper.to_le_bytes());
            eat(&a.slices.to_le_bytes());
        }
        let id = ((h >> 16) ^ (h & 0xffff)) as u16;
        Some(CellGrid { id, axes })
    }

    /// The id in every cell subject of this grid.
    pub fn id(&self) -> u16 {
        self.id
    }

    /// How many cells the grid has.
    pub fn cell_count(&self) -> u64 {
        self.axes.iter().map(|a| u64::from(a.slices)).product()
    }

    /// The cells `regions` cover, sorted; `None` when more than `max`.
    pub fn cells(&self, regions: &RegionSet, max: usize) -> Option<Vec<u32>> {
        let mut out: Vec<u32> = Vec::new();
        for extent in regions.extents() {
            // At most GRID_AXES_MAX axes: no allocation on the publish path.
            let mut spans = [(0u32, 0u32); GRID_AXES_MAX];
            for (span, a) in spans.iter_mut().zip(&self.axes) {
                *span = match extent.range(a.dimension) {
                    Some(r) => a.slices_of(r.lower, r.upper),
                    None => (0, a.slices - 1),
                };
            }
            let spans = &spans[..self.axes.len()];
            let count: u64 = spans.iter().map(|(l, u)| u64::from(u - l + 1)).product();
            if count > max as u64 {
                return None;
            }
            for k in 0..count {
                // The k-th cell of the product; the first axis varies fastest.
                let (mut rest, mut cell, mut stride) = (k, 0u64, 1u64);
                for (a, (l, u)) in self.axes.iter().zip(spans) {
                    let width = u64::from(u - l + 1);
                    cell += (u64::from(*l) + rest % width) * stride;
                    rest /= width;
                    stride *= u64::from(a.slices);
                }
                out.push(cell as u32);
            }
            if out.len() > 4 * max {
                out.sort_unstable();
                out.dedup();
                if out.len() > max {
                    return None;
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        (out.len() <= max).then_some(out)
    }
}

/// Picks a federation's grid axes: the dimensions named in `names` (in that order;
/// unknown names are reported in the error), else the first non-`HLA` dimensions.
pub fn grid_axes(
    dimensions: &[(DimensionHandle, String, u64)],
    names: &[String],
) -> Result<Vec<(DimensionHandle, u64)>, String> {
    if names.is_empty() {
        return Ok(dimensions
            .iter()
            .filter(|(_, n, _)| !n.starts_with("HLA"))
            .take(2)
            .map(|(h, _, u)| (*h, *u))
            .collect());
    }
    names
        .iter()
        .map(|name| {
            dimensions
                .iter()
                .find(|(_, n, _)| n == name)
                .map(|(h, _, u)| (*h, *u))
                .ok_or_else(|| format!("the FOM has no dimension `{name}` to cut into cells"))
        })
        .collect()
}

/// A sender's account of the `seq`s `(from, upto]`, which all went to cells: how many
/// envelopes each (topic, cell) got.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Account {
    /// The sender's grid ([`CellGrid::id`]).
    pub grid: u16,
    /// Whose `seq`s these are.
    pub sender: FederateHandle,
    /// The range starts after this `seq` ...
    pub from: u64,
    /// ... and ends with this one.
    pub upto: u64,
    /// Envelopes per (topic, cell) in the range.
    pub counts: BTreeMap<(Topic, u32), u32>,
}

fn topic_code(topic: Topic) -> Option<(u8, u32)> {
    match topic {
        Topic::ObjectClass(c) => Some((0, c.0)),
        Topic::InteractionClass(c) => Some((1, c.0)),
        _ => None,
    }
}

impl Account {
    /// The binary form (`docs/wire-format.md`, "Cells").
    pub fn encode(&self) -> Bytes {
        let mut b = BytesMut::with_capacity(16 + self.counts.len() * 6);
        b.put_u8(ACCOUNT_VERSION);
        b.put_u16_le(self.grid);
        varint::put(&mut b, u64::from(self.sender.0));
        varint::put(&mut b, self.from);
        varint::put(&mut b, self.upto - self.from);
        let entries: Vec<_> = self
            .counts
            .iter()
            .filter_map(|((t, c), n)| topic_code(*t).map(|tc| (tc, *c, *n)))
            .collect();
        varint::put(&mut b, entries.len() as u64);
        for ((kind, class), cell, n) in entries {
            b.put_u8(kind);
            varint::put(&mut b, u64::from(class));
            varint::put(&mut b, u64::from(cell));
            varint::put(&mut b, u64::from(n));
        }
        b.freeze()
    }

    /// Reads an account; the error says what is wrong and where.
    pub fn decode(bytes: &[u8]) -> Result<Account, String> {
        let mut at = 0usize;
        let byte = |at: &mut usize| -> Result<u8, String> {
            let b = *bytes
                .get(*at)
                .ok_or_else(|| format!("cell account truncated at byte {at}"))?;
            *at += 1;
            Ok(b)
        };
        let var = |at: &mut usize, what: &str| -> Result<u64, String> {
            let (v, n) = varint::get(&bytes[(*at).min(bytes.len())..])
                .map_err(|e| format!("cell account: {what} at byte {at}: {e:?}"))?;
            *at += n;
            Ok(v)
        };
        let version = byte(&mut at)?;
        if version != ACCOUNT_VERSION {
            return Err(format!(
                "cell account version {version} (this build reads {ACCOUNT_VERSION})"
            ));
        }
        let grid = u16::from_le_bytes([byte(&mut at)?, byte(&mut at)?]);
        let sender = u32::try_from(var(&mut at, "sender")?)
            .map_err(|_| "cell account: sender handle beyond 32 bits".to_string())?;
        let from = var(&mut at, "from")?;
        let span = var(&mut at, "span")?;
        let upto = from
            .checked_add(span)
            .ok_or_else(|| "cell account: range beyond 64 bits".to_string())?;
        let n = var(&mut at, "entry count")?;
        if n > ACCOUNT_ENTRIES_MAX {
            return Err(format!(
                "cell account names {n} cells (at most {ACCOUNT_ENTRIES_MAX})"
            ));
        }
        let mut counts = BTreeMap::new();
        for _ in 0..n {
            let kind = byte(&mut at)?;
            let class = u32::try_from(var(&mut at, "class")?)
                .map_err(|_| "cell account: class handle beyond 32 bits".to_string())?;
            let cell = u32::try_from(var(&mut at, "cell")?)
                .map_err(|_| "cell account: cell beyond 32 bits".to_string())?;
            let count = u32::try_from(var(&mut at, "count")?)
                .map_err(|_| "cell account: count beyond 32 bits".to_string())?;
            let topic = match kind {
                0 => Topic::ObjectClass(ObjectClassHandle(class)),
                1 => Topic::InteractionClass(InteractionClassHandle(class)),
                k => return Err(format!("cell account: topic kind {k} at byte {}", at - 1)),
            };
            counts.insert((topic, cell), count);
        }
        if at != bytes.len() {
            return Err(format!(
                "cell account: {} bytes after the end",
                bytes.len() - at
            ));
        }
        if u64::from(counts.values().copied().max().unwrap_or(0)) > span {
            return Err("cell account: a cell has more envelopes than its range".to_string());
        }
        Ok(Account {
            grid,
            sender: FederateHandle(sender),
            from,
            upto,
            counts,
        })
    }
}

/// What a sender has sent to cells and not yet accounted for, per (federation, sender).
#[derive(Default)]
pub(super) struct OpenAccounts {
    open: HashMap<(glidepath_core::FederationId, FederateHandle), (Account, u32)>,
}

impl OpenAccounts {
    /// Records envelope `seq` of `sender`, sent to `cells` of `topic`; true when the
    /// account is due ([`ACCOUNT_EVERY`]).
    pub(super) fn record(
        &mut self,
        federation: glidepath_core::FederationId,
        grid: u16,
        sender: FederateHandle,
        seq: u64,
        topic: Topic,
        cells: &[u32],
    ) -> bool {
        let (account, n) = self.open.entry((federation, sender)).or_insert_with(|| {
            (
                Account {
                    grid,
                    sender,
                    from: seq.saturating_sub(1),
                    upto: seq,
                    counts: BTreeMap::new(),
                },
                0,
            )
        });
        account.upto = seq;
        for cell in cells {
            *account.counts.entry((topic, *cell)).or_insert(0) += 1;
        }
        *n += 1;
        *n >= ACCOUNT_EVERY
    }

    /// Takes the open account of one sender, if any.
    pub(super) fn take(
        &mut self,
        federation: glidepath_core::FederationId,
        sender: FederateHandle,
    ) -> Option<Account> {
        self.open.remove(&(federation, sender)).map(|(a, _)| a)
    }

    /// Takes every open account.
    pub(super) fn take_all(&mut self) -> Vec<(glidepath_core::FederationId, Account)> {
        self.open.drain().map(|((f, _), (a, _))| (f, a)).collect()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.open.is_empty()
    }
}

/// What a receiver reads of one data topic through cells.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum CellInterest {
    /// Every cell (one wildcard).
    All,
    /// These cells.
    Cells(HashSet<u32>),
}

impl CellInterest {
    pub(super) fn covers(&self, cell: u32) -> bool {
        match self {
            CellInterest::All => true,
            CellInterest::Cells(c) => c.contains(&cell),
        }
    }
}

/// The cells a receiver reads in one federation: the grid, and per data topic what
/// its subscriptions are in place for. Written by the endpoint (before a change
/// returns), read by the federation's reader.
#[derive(Default)]
pub(super) struct CellView {
    pub(super) grid: Option<u16>,
    pub(super) interest: HashMap<Topic, CellInterest>,
}

/// Cell envelopes a reader holds, per sender, that no account has covered yet: the
/// (topic, cell) they arrived on, by `seq`.
#[derive(Default)]
pub(super) struct Arrivals {
    by_sender: HashMap<FederateHandle, BTreeMap<u64, Vec<(Topic, u32)>>>,
}

impl Arrivals {
    /// An envelope arrived on a cell.
    pub(super) fn record(&mut self, sender: FederateHandle, seq: u64, topic: Topic, cell: u32) {
        let seqs = self.by_sender.entry(sender).or_default();
        // Counted once per (seq, cell), however often it came (two subscriptions
        // matching one subject while they are being swapped): a count inflated by a
        // copy could hide a missing envelope of the same cell.
        let on = seqs.entry(seq).or_default();
        if !on.contains(&(topic, cell)) {
            on.push((topic, cell));
        }
        // Bounded: an account that never comes leaves nothing behind for long.
        while seqs.len() > 1 << 16 {
            seqs.pop_first();
        }
    }

    /// Whether this reader holds every envelope of `account` it reads, by `view`, and
    /// whether the account is about topics it wants at all (`wanted`); forgets what
    /// the account covers.
    pub(super) fn complete(
        &mut self,
        account: &Account,
        view: &CellView,
        wanted: impl Fn(Topic) -> bool,
    ) -> bool {
        let seqs = self.by_sender.entry(account.sender).or_default();
        let mut held: HashMap<(Topic, u32), u32> = HashMap::new();
        for (_, on) in seqs.range(account.from + 1..=account.upto) {
            for k in on {
                *held.entry(*k).or_insert(0) += 1;
            }
        }
        let same_grid = view.grid == Some(account.grid);
        let complete = account.counts.iter().all(|((topic, cell), n)| {
            if !wanted(*topic) {
                return true;
            }
            match view.interest.get(topic) {
                // Cells of a topic it wants but reads through no cell of this grid:
                // only a retransmission brings them.
                _ if !same_grid => false,
                None => false,
                Some(i) if !i.covers(*cell) => true,
                Some(_) => held.get(&(*topic, *cell)).copied().unwrap_or(0) >= *n,
            }
        });
        let keep = seqs.split_off(&(account.upto + 1));
        if keep.is_empty() {
            // Nothing held: nothing kept per sender (a departed one leaves nothing).
            self.by_sender.remove(&account.sender);
        } else {
            *seqs = keep;
        }
        complete
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glidepath_core::{Extent, RangeBounds};

    const LAT: DimensionHandle = DimensionHandle(4);
    const LON: DimensionHandle = DimensionHandle(5);

    fn region(lat: (u64, u64), lon: (u64, u64)) -> RegionSet {
        RegionSet::new(vec![Extent::new([
            (LAT, RangeBounds::new(lat.0, lat.1)),
            (LON, RangeBounds::new(lon.0, lon.1)),
        ])])
        .unwrap()
    }

    #[test]
    fn overlapping_extents_always_share_a_cell() {
        let grid = CellGrid::new(&[(LAT, 1000), (LON, 360)], 8).unwrap();
        assert_eq!(grid.cell_count(), 64);
        let mut rng = 0x1234_5678_9abc_def0u64;
        let mut next = |m: u64| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % m
        };
        for _ in 0..20_000 {
            let mut range = |upper: u64| {
                let a = next(upper + 1);
                let b = next(upper + 1);
                let (l, u) = (a.min(b), a.max(b));
                if next(4) == 0 {
                    (l, l)
                } else {
                    (l, u)
                }
            };
            let a = region(range(1000), range(360));
            let b = region(range(1000), range(360));
            let ca = grid.cells(&a, 64).unwrap();
            let cb = grid.cells(&b, 64).unwrap();
            if a.overlaps(&b) {
                assert!(
                    ca.iter().any(|c| cb.contains(c)),
                    "{a:?} {b:?} {ca:?} {cb:?}"
                );
            }
        }
    }

    #[test]
    fn cells_of_boxes_points_and_missing_axes() {
        let grid = CellGrid::new(&[(LAT, 800), (LON, 800)], 8).unwrap();
        assert_eq!(grid.cells(&region((0, 0), (0, 0)), 64), Some(vec![0]));
        assert_eq!(grid.cells(&region((100, 200), (0, 100)), 64), Some(vec![1]));
        assert_eq!(
            grid.cells(&region((0, 200), (0, 100)), 64),
            Some(vec![0, 1])
        );
        assert_eq!(
            grid.cells(&region((800, 800), (800, 800)), 64),
            Some(vec![63])
        );
        assert_eq!(grid.cells(&region((0, 800), (0, 800)), 16), None);
        // An extent without the second axis covers it all.
        let lat_only = RegionSet::new(vec![Extent::new([(LAT, RangeBounds::new(0, 50))])]).unwrap();
        assert_eq!(
            grid.cells(&lat_only, 64),
            Some((0..8).map(|r| r * 8).collect())
        );
    }

    #[test]
    fn grids_differ_by_id_when_their_cells_do() {
        let a = CellGrid::new(&[(LAT, 800), (LON, 800)], 8).unwrap();
        let b = CellGrid::new(&[(LAT, 800), (LON, 800)], 16).unwrap();
        let c = CellGrid::new(&[(LON, 800), (LAT, 800)], 8).unwrap();
        assert_ne!(a.id(), b.id());
        assert_ne!(a.id(), c.id());
        assert_eq!(a, CellGrid::new(&[(LAT, 800), (LON, 800)], 8).unwrap());
        assert!(CellGrid::new(&[], 8).is_none());
    }

    #[test]
    fn accounts_round_trip_and_garbage_is_refused_with_a_reason() {
        let o = Topic::ObjectClass(ObjectClassHandle(3));
        let i = Topic::InteractionClass(InteractionClassHandle(9));
        let a = Account {
            grid: 0xbeef,
            sender: FederateHandle(12),
            from: 1000,
            upto: 1005,
            counts: BTreeMap::from([((o, 7), 3), ((i, 2), 2)]),
        };
        let b = a.encode();
        assert_eq!(Account::decode(&b).unwrap(), a);
        for cut in 0..b.len() {
            assert!(Account::decode(&b[..cut]).is_err(), "cut at {cut}");
        }
        let mut extra = b.to_vec();
        extra.push(0);
        assert!(Account::decode(&extra)
            .unwrap_err()
            .contains("after the end"));
        let mut version = b.to_vec();
        version[0] = 9;
        assert!(Account::decode(&version).unwrap_err().contains("version 9"));
    }

    #[test]
    fn an_account_is_complete_only_with_every_envelope_of_the_cells_read() {
        let o = Topic::ObjectClass(ObjectClassHandle(3));
        let account = Account {
            grid: 1,
            sender: FederateHandle(2),
            from: 10,
            upto: 14,
            counts: BTreeMap::from([((o, 1), 2), ((o, 2), 3)]),
        };
        let view = CellView {
            grid: Some(1),
            interest: HashMap::from([(o, CellInterest::Cells(HashSet::from([1])))]),
        };
        let mut arrivals = Arrivals::default();
        arrivals.record(FederateHandle(2), 11, o, 1);
        // A second copy of the same envelope on the same cell counts once.
        arrivals.record(FederateHandle(2), 11, o, 1);
        assert!(!arrivals.complete(&account, &view, |_| true));
        arrivals.record(FederateHandle(2), 11, o, 1);
        arrivals.record(FederateHandle(2), 13, o, 1);
        arrivals.record(FederateHandle(2), 15, o, 1);
        assert!(arrivals.complete(&account, &view, |_| true));
        // What it covered is forgotten; what came after is kept.
        assert_eq!(arrivals.by_sender[&FederateHandle(2)].len(), 1);
        // A topic not wanted needs nothing; another grid needs a retransmission.
        assert!(Arrivals::default().complete(&account, &view, |_| false));
        let other = CellView {
            grid: Some(2),
            interest: view.interest.clone(),
        };
        assert!(!Arrivals::default().complete(&account, &other, |_| true));
    }
}
