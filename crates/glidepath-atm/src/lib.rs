//! ATM TestBed traffic: a deterministic, seeded day of US air traffic as SNDEM track
//! messages, calibrated to the ATM TestBed report's Table 4.2 (report `000_...`,
//! section 4.1), and a reader for recorded ADS-B state vectors in CSV ([`adsb_csv`]).
//!
//! # The model ([`traffic`])
//!
//! About 30,000 flights a day (plus yesterday's still airborne at 00:00Z) fly between
//! the 1,900 real US airports of `data/airports-us.csv` ([`airports`]):
//!
//! - **Airline flights** (78 %) leave the busiest airports most (the Core 30 and the
//!   next tier weighted by their daily departures), to destinations chosen by weight
//!   and a distance preference (few hops under 150 nm, most 250–1,200 nm); **general
//!   aviation** (22 %) flies 40–400 nm between any airports, low and slow, by day.
//! - Departures follow a **local-time** profile of the origin (quiet from midnight to
//!   five, a morning bank, a long plateau), converted with the airport's time zone on a
//!   daylight-saving day like the report's 23 March 2016. So the count of flights in
//!   the air is a diurnal curve, lowest near 09Z and highest in the afternoon UTC
//!   (Figure 4.1(a): 4,744 at 20:44Z).
//! - Each flight is a great circle flown with a climb (600–2,600 ft/min, speed rising
//!   to cruise), a cruise at an altitude that depends on the distance, and a descent.
//! - No two flights in the air share a callsign (nor within 30 minutes of each other),
//!   as air traffic control requires, so the performance monitor, which counts a
//!   flight from its callsign's first message to its last as the memorandum's Figure
//!   4.1(a) does, counts the flights the day has: 4,742 at the peak.
//! - **Reporting** reproduces the texture of surveillance data. 40 % of the flights are
//!   tracked by ADS-B: each reports every 4–6 s at its own phase, with 5 or 6 decimals
//!   of a degree, course to 0.01°, and a vertical rate in 64 ft/min steps. The others
//!   are radar tracks (5 decimals, whole knots and degrees, vertical rate NaN as in
//!   Table 4.1) reported in sweeps: every flight of a feed in the same second, once per
//!   period (40 regional feeds of 3–5 s and a few 12-s en-route feeds, sizes falling
//!   off as 1/k^0.8), and a third of them come from one-minute track data, all
//!   reported in the same second of each minute.
//!
//! # Why it matches Table 4.2
//!
//! - The **count** (43.3 million) and the **mean per second** (501) follow from the
//!   number of flights (set by the peak airborne count, 4,744) and the mean report
//!   period.
//! - The **per-second distribution** is the diurnal curve (P25 and the median come from
//!   the night trough and the day plateau) times the sweep texture: feeds that sweep
//!   together make seconds above the hour's mean and quiet seconds below it, and the
//!   one-minute data adds a burst each minute, which at the afternoon peak reaches the
//!   report's busiest second (1,779, more than twice the hour's mean).
//! - The **message length** (key plus JSON payload with a 13-digit publication time,
//!   [`traffic::message_len`]) is 160 fixed bytes plus the variable fields: the
//!   callsign twice (key and `vid`; airline callsigns of 4–7 characters, N-numbers of
//!   4–6), latitude and longitude (7–11), altitude, speed and course (3–7 each) and the
//!   vertical rate (`NaN` or up to 7). The mix of radar and ADS-B precision and of
//!   callsign lengths spreads them over 198–219 bytes around 210, as the report's
//!   193–219 around 209.63.
//!
//! `cargo run --release -p glidepath-atm --example calibrate` prints the full day's
//! figures beside the report's.
#![warn(missing_docs)]

pub mod adsb_csv;
pub mod airports;
pub mod layout;
pub mod report;
pub mod run;
pub mod track;
pub mod traffic;

pub use adsb_csv::{
    read_adsb_csv, AdsbError, AdsbFile, AdsbReader, AdsbRow, CsvRowError, TimestampUnit,
};
pub use airports::{us_airports, Airport, AirportsError};
pub use traffic::{
    message_len, TrafficConfig, TrafficDay, TrafficError, DAY_S, EPOCH_2026_MS, SNDEM_VERSION,
};
