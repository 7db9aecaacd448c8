//! Counting flights as the memorandum's Figure 4.1(a) does: a flight is airborne from
//! its first message to its last, a vehicle silent for longer than [`FLIGHT_GAP_S`]
//! starts a new flight, and the peak is the first second with the most flights.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A vehicle silent for longer than this, in simulated seconds, starts a new flight
/// when it reports again: the same callsign flying a later leg is another flight.
/// Thirty minutes is longer than any report period (one-minute track data, 12-s
/// radar sweeps, OpenSky's 10-s state vectors) and shorter than a turnaround plus a
/// flight. The generated day keeps a callsign free this long around each flight
/// (`traffic/generate.rs`, `CALLSIGN_REUSE_S`).
pub(crate) const FLIGHT_GAP_S: u32 = 1_800;

/// A hasher for keys that are hashes already (the flight and minute sets'): passes
/// them through.
#[derive(Default)]
pub(super) struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

/// The flights seen so far, by the hash of their vehicle id.
#[derive(Default)]
pub(super) struct Flights {
    /// Flights in progress: first and last second with a message.
    open: HashMap<u64, (u32, u32), BuildHasherDefault<Prehashed>>,
    /// Flights that ended (their vehicle went silent for longer than
    /// [`FLIGHT_GAP_S`] and then reported again), as (first, last) seconds.
    done: Vec<(u32, u32)>,
}

impl Flights {
    /// A message of `vehicle` in `second`: its flight goes on, or (after a silence
    /// longer than [`FLIGHT_GAP_S`]) a new one begins. Blocks run a few seconds ahead
    /// of each other, so a vehicle's messages may arrive slightly out of order.
    pub(super) fn seen(&mut self, vehicle: u64, second: u32) {
        match self.open.entry(vehicle) {
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert((second, second));
            }
            std::collections::hash_map::Entry::Occupied(mut e) => {
                let (first, last) = e.get_mut();
                if second > *last + FLIGHT_GAP_S {
                    self.done.push((*first, *last));
                    (*first, *last) = (second, second);
                } else {
                    *first = (*first).min(second);
                    *last = (*last).max(second);
                }
            }
        }
    }

    /// Flights airborne in each of the first `seconds` seconds: each from its first
    /// message to its last. Every second given to [`Flights::seen`] is below `seconds`.
    pub(super) fn airborne(&self, seconds: usize) -> Vec<u32> {
        let mut change = vec![0i64; seconds + 1];
        for &(first, last) in self.done.iter().chain(self.open.values()) {
            change[first as usize] += 1;
            change[(last as usize + 1).min(seconds)] -= 1;
        }
        let mut airborne = 0i64;
        change[..seconds]
            .iter()
            .map(|c| {
                airborne += c;
                airborne as u32
            })
            .collect()
    }
}

/// The most flights airborne in one second and the first second with that many (the
/// memorandum names the first of its two: 20:44:43Z); `None` when no flight was ever
/// airborne.
pub(super) fn peak(airborne: impl IntoIterator<Item = u32>) -> Option<(u32, u32)> {
    airborne
        .into_iter()
        .zip(0u32..)
        .fold(None, |best, (flights, t)| match best {
            Some((most, _)) if most >= flights => best,
            _ if flights == 0 => best,
            _ => Some((flights, t)),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flights(messages: &[(u64, u32)]) -> Flights {
        let mut f = Flights::default();
        for &(vehicle, second) in messages {
            f.seen(vehicle, second);
        }
        f
    }

    #[test]
    fn a_flight_is_airborne_from_its_first_message_to_its_last() {
        // Messages at 10, 22 and 70: airborne in every second from 10 to 70, the
        // seconds between reports included, and not before or after.
        let a = flights(&[(7, 10), (7, 22), (7, 70)]).airborne(100);
        assert_eq!(a.len(), 100);
        assert!(a[0..10].iter().all(|&n| n == 0), "{a:?}");
        assert!(a[10..71].iter().all(|&n| n == 1), "{a:?}");
        assert!(a[71..100].iter().all(|&n| n == 0), "{a:?}");

        // A single message is a flight of one second; overlapping flights add up.
        let a = flights(&[(1, 5), (2, 3), (2, 8), (3, 6), (3, 7)]).airborne(10);
        assert_eq!(a, [0, 0, 0, 1, 1, 2, 2, 2, 1, 0]);
    }

    #[test]
    fn a_flight_still_in_the_air_at_the_end_counts_to_the_last_second() {
        let a = flights(&[(1, 2), (1, 9)]).airborne(10);
        assert_eq!(a, [0, 0, 1, 1, 1, 1, 1, 1, 1, 1]);
    }

    #[test]
    fn a_vehicle_silent_for_thirty_minutes_starts_a_new_flight() {
        let gap = FLIGHT_GAP_S;
        // Silent for exactly the gap: the same flight goes on, airborne throughout.
        let a = flights(&[(1, 100), (1, 100 + gap)]).airborne(3_000);
        assert!(a[100..101 + gap as usize].iter().all(|&n| n == 1));
        assert_eq!((a[99], a[101 + gap as usize]), (0, 0));

        // One second longer: two flights, and none in the air in between.
        let second = 100 + gap + 1;
        let f = flights(&[(1, 50), (1, 100), (1, second), (1, second + 10)]);
        assert_eq!(f.done, [(50, 100)]);
        assert_eq!(f.open[&1], (second, second + 10));
        let a = f.airborne(4_000);
        assert!(a[50..101].iter().all(|&n| n == 1));
        assert!(
            a[101..second as usize].iter().all(|&n| n == 0),
            "the silence"
        );
        assert!(a[second as usize..second as usize + 11]
            .iter()
            .all(|&n| n == 1));
        assert_eq!(a[second as usize + 11], 0);

        // Three legs of one callsign in a day are three flights; another vehicle's
        // messages in between change nothing.
        let f = flights(&[
            (1, 0),
            (1, 600),
            (2, 1_000),
            (1, 3_000),
            (2, 2_500),
            (1, 3_600),
            (1, 6_000),
        ]);
        assert_eq!(f.done, [(0, 600), (3_000, 3_600)]);
        assert_eq!((f.open[&1], f.open[&2]), ((6_000, 6_000), (1_000, 2_500)));
    }

    #[test]
    fn out_of_order_seconds_widen_the_flight_they_belong_to() {
        // Blocks run a few seconds apart: 10, 8, 12, 11 is one flight from 8 to 12.
        let f = flights(&[(1, 10), (1, 8), (1, 12), (1, 11)]);
        assert_eq!(f.open[&1], (8, 12));
        assert!(f.done.is_empty());
        assert_eq!(f.airborne(14), [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 0]);

        // A late message right after a new flight began moves that flight's start
        // back; the earlier flight stays as it was.
        let start = 20 + FLIGHT_GAP_S + 5;
        let f = flights(&[(1, 10), (1, 20), (1, start), (1, start - 3), (1, start + 1)]);
        assert_eq!(f.done, [(10, 20)]);
        assert_eq!(f.open[&1], (start - 3, start + 1));
        let a = f.airborne(start as usize + 5);
        assert_eq!(a.iter().map(|&n| u64::from(n)).sum::<u64>(), 11 + 5);
    }

    #[test]
    fn the_peak_is_the_first_second_with_the_most_flights() {
        assert_eq!(peak([0, 2, 3, 1, 3, 0]), Some((3, 2)));
        assert_eq!(peak([4, 1]), Some((4, 0)));
        assert_eq!(peak([0, 0, 0]), None, "no flight, no peak time");
        assert_eq!(peak([]), None);

        // Two flights overlap from 40 to 50 and a third joins them from 45 to 47:
        // three at once first at 45.
        let f = flights(&[(1, 10), (1, 50), (2, 40), (2, 90), (3, 45), (3, 47)]);
        let a = f.airborne(100);
        assert_eq!(peak(a), Some((3, 45)));
    }
}
