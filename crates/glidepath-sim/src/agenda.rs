//! What the bus simulators (`bus`, `bus_repair`) share: the agenda of a virtual clock
//! (events in time order, ties in the order they were scheduled, so a seed replays
//! exactly) and the notes a failure shows.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

/// Events to happen, by virtual time in nanoseconds.
pub(crate) struct Agenda<E> {
    heap: BinaryHeap<Reverse<(u64, u64)>>,
    events: BTreeMap<u64, E>,
    counter: u64,
}

impl<E> Agenda<E> {
    pub(crate) fn new() -> Agenda<E> {
        Agenda {
            heap: BinaryHeap::new(),
            events: BTreeMap::new(),
            counter: 0,
        }
    }

    /// Schedules `e` at `when`.
    pub(crate) fn at(&mut self, when: u64, e: E) {
        self.counter += 1;
        self.heap.push(Reverse((when, self.counter)));
        self.events.insert(self.counter, e);
    }

    /// The next event and its time.
    pub(crate) fn pop(&mut self) -> Option<(u64, E)> {
        let Reverse((when, id)) = self.heap.pop()?;
        let e = self
            .events
            .remove(&id)
            .expect("every scheduled event is stored");
        Some((when, e))
    }
}

/// The last things a run did, in words: printed as they happen with `--verbose`, and
/// the last of them with a failure.
pub(crate) struct Notes {
    lines: Vec<String>,
    verbose: bool,
}

impl Notes {
    pub(crate) fn new(verbose: bool) -> Notes {
        Notes {
            lines: Vec::new(),
            verbose,
        }
    }

    /// Notes `what` happening at `now` (virtual nanoseconds).
    pub(crate) fn note(&mut self, now: u64, what: String) {
        if self.verbose {
            println!("{:>12.3} ms  {what}", now as f64 / 1e6);
        }
        self.lines.push(what);
        if self.lines.len() > 200 {
            self.lines.drain(..100);
        }
    }

    /// The last `n` notes, oldest first.
    pub(crate) fn last(&self, n: usize) -> Vec<String> {
        let skip = self.lines.len().saturating_sub(n);
        self.lines[skip..].to_vec()
    }
}
