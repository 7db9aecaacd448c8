//! Generating the day's flights: the seeded generator, airport weights, airline and
//! general-aviation schedules, callsigns, and the feeds that report each flight.

use std::collections::HashMap;

use crate::airports::{Airport, HUB_DEPARTURES};

use super::{central_angle, dot, unit_vector, Flight, TrafficConfig, DAY_S, EARTH_RADIUS_NM};

/// Flights in the calibrated day (density 1.0), including the ones still airborne from
/// the day before. Tuned so that the peak airborne count is the report's 4,744.
const FLIGHTS_PER_DAY: f64 = 30_100.0;

/// Share of the flights that are general aviation (N-number callsigns, small airports,
/// low and slow, daytime).
const GA_SHARE: f64 = 0.22;

/// SplitMix64: a tiny, fast generator whose output is fixed forever for a seed, so a
/// day is reproducible across platforms and dependency upgrades.
#[derive(Clone, Debug)]
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5851_F42D_4C95_7F2D)
    }
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }
    fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
}

/// Picks an index with probability proportional to its weight (binary search in the
/// cumulative sums).
#[derive(Clone, Debug)]
struct Weighted(Vec<f64>);

impl Weighted {
    fn new(weights: impl IntoIterator<Item = f64>) -> Weighted {
        let mut acc = 0.0;
        Weighted(
            weights
                .into_iter()
                .map(|w| {
                    acc += w.max(0.0);
                    acc
                })
                .collect(),
        )
    }
    fn pick(&self, rng: &mut Rng) -> usize {
        let total = *self.0.last().expect("weights are not empty");
        let x = rng.unit() * total;
        self.0.partition_point(|&c| c <= x).min(self.0.len() - 1)
    }
}

/// Relative departure rate per local hour for airline flights: nearly nothing between
/// midnight and five, a morning bank, a long plateau, an evening decline.
const AIRLINE_LOCAL_HOURS: [f64; 24] = [
    0.14, 0.08, 0.06, 0.06, 0.12, 0.45, 1.10, 1.30, 1.30, 1.20, 1.15, 1.15, 1.15, 1.15, 1.20, 1.25,
    1.25, 1.20, 1.10, 0.95, 0.80, 0.60, 0.40, 0.25,
];
/// General aviation flies by day.
const GA_LOCAL_HOURS: [f64; 24] = [
    0.02, 0.01, 0.01, 0.01, 0.02, 0.05, 0.30, 0.80, 1.20, 1.40, 1.50, 1.50, 1.50, 1.50, 1.50, 1.40,
    1.30, 1.10, 0.90, 0.60, 0.40, 0.20, 0.08, 0.04,
];

/// Airline callsign prefixes and their shares.
const AIRLINES: &[(&str, f64)] = &[
    ("AAL", 14.0),
    ("DAL", 14.0),
    ("UAL", 11.0),
    ("SWA", 16.0),
    ("SKW", 9.0),
    ("ENY", 4.0),
    ("RPA", 4.0),
    ("JBU", 4.0),
    ("ASA", 3.0),
    ("NKS", 2.5),
    ("FFT", 1.5),
    ("EDV", 3.0),
    ("JIA", 2.5),
    ("ASH", 2.0),
    ("AAY", 1.2),
    ("FDX", 2.5),
    ("UPS", 2.0),
    ("GJS", 1.5),
    ("PDT", 1.5),
    ("QXE", 1.5),
    ("HAL", 1.0),
    ("SCX", 0.5),
    ("CPZ", 1.2),
    ("EJA", 2.0),
];

/// The reporting feeds. Surveillance data arrives in sweeps: every flight a feed
/// tracks is reported in the same second, once per period. A feed's flights are those
/// departing from its region, so a second in which several large feeds sweep together
/// carries a burst (the report's maximum of 1,779 messages in one second, against a
/// daytime mean near 1,000), and one in which only small feeds sweep is quiet.
#[derive(Clone, Copy, Debug)]
struct Feed {
    period_s: u32,
    phase_s: u32,
}

/// Periods of the feeds, seconds: terminal radars sweep in 4–5 s, en-route radars in
/// 10–12 s, fused feeds in between.
const FEED_PERIODS_S: [u32; 5] = [3, 4, 4, 5, 5];
/// Share of the flights tracked by ADS-B instead of radar: each reports on its own
/// (own period, own phase), with finer numbers (so longer messages) and a vertical
/// rate.
const ADSB_SHARE: f64 = 0.40;
/// Report periods of ADS-B tracked flights (the feed thins the 1 Hz squitters).
const ADSB_PERIODS_S: [u32; 5] = [4, 5, 5, 6, 6];
/// The largest feeds (en-route radars covering many airports) sweep every 12 s.
const LARGE_FEEDS: usize = 3;
/// Share of the radar-tracked flights that come from one-minute track data (the report
/// mentions ATAC's one-minute granularity): all of them are reported in the same second
/// of every minute, which makes the bursts of Figure 4.1(b) (the busiest second, 1,779
/// messages, is more than twice its hour's mean).
const MINUTE_SHARE: f64 = 0.33;
const LARGE_FEED_PERIOD_S: u32 = 12;
/// Feed sizes fall off as 1/k^this.
const FEED_SIZE_EXPONENT: f64 = 0.8;
/// Number of regional feeds.
const FEEDS: usize = 40;

/// Airport weights for airline traffic: listed hubs by their departures, other airports
/// with an "International" name a little, the rest very little.
fn airline_weights(airports: &[Airport]) -> Vec<f64> {
    airports
        .iter()
        .map(|a| {
            if let Some((_, w)) = HUB_DEPARTURES.iter().find(|(code, _)| *code == a.iata) {
                *w
            } else if a.name.contains("International") {
                12.0
            } else {
                2.0
            }
        })
        .collect()
}

/// General aviation leaves from anywhere, Alaska's bush strips a little less often
/// (they are many in the table).
fn ga_weights(airports: &[Airport]) -> Vec<f64> {
    airports
        .iter()
        .map(|a| if a.state == "Alaska" { 0.4 } else { 1.0 })
        .collect()
}

/// Relative preference of airline routes by length: few under 150 nm, most between
/// 250 and 1,200 nm, fewer transcontinental.
fn airline_distance_preference(nm: f64) -> f64 {
    ((nm - 60.0) / 240.0).clamp(0.0, 1.0) * (1200.0 / nm).powf(1.2).min(1.0)
}

fn local_hour_pick(profile: &Weighted, rng: &mut Rng) -> f64 {
    profile.pick(rng) as f64 * 3600.0 + rng.range(0.0, 3600.0)
}

fn airline_callsign(rng: &mut Rng, prefixes: &Weighted) -> String {
    let prefix = AIRLINES[prefixes.pick(rng)].0;
    format!("{prefix}{}", flight_number(rng))
}

/// An airline flight number of 1 to 4 digits (5 %, 20 %, 51 %, 24 %). Short numbers
/// clash most and get a new, usually longer, one ([`separate_callsigns`]); these shares
/// keep the mean message length of Table 4.2 where it was before callsigns were
/// separated (210.05 bytes against 210.04).
fn flight_number(rng: &mut Rng) -> u64 {
    let digits = match rng.unit() {
        x if x < 0.05 => 1,
        x if x < 0.25 => 2,
        x if x < 0.76 => 3,
        _ => 4,
    };
    let lo = [1, 10, 100, 1000][digits - 1];
    lo + rng.below(lo * 9)
}

fn ga_callsign(rng: &mut Rng) -> String {
    const LETTERS: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZ";
    let letter = |rng: &mut Rng| LETTERS[rng.below(LETTERS.len() as u64) as usize] as char;
    let first = char::from(b'1' + rng.below(9) as u8);
    let mut s = String::with_capacity(6);
    s.push('N');
    s.push(first);
    let (digits, letters) = match rng.unit() {
        x if x < 0.35 => (3, 0),
        x if x < 0.65 => (2, 2),
        x if x < 0.80 => (3, 1),
        x if x < 0.93 => (2, 1),
        _ => (1, 2),
    };
    for _ in 0..digits {
        s.push(char::from(b'0' + rng.below(10) as u8));
    }
    for _ in 0..letters {
        s.push(letter(rng));
    }
    s
}

pub(super) fn generate_flights(airports: &[Airport], config: &TrafficConfig) -> Vec<Flight> {
    let mut rng = Rng::new(config.seed);
    let airline_w = Weighted::new(airline_weights(airports));
    let ga_w = Weighted::new(ga_weights(airports));
    let prefixes = Weighted::new(AIRLINES.iter().map(|(_, w)| *w));
    let airline_hours = Weighted::new(AIRLINE_LOCAL_HOURS);
    let ga_hours = Weighted::new(GA_LOCAL_HOURS);
    // A few large en-route feeds with long sweeps, many small terminal ones.
    let feeds: Vec<Feed> = (0..FEEDS)
        .map(|k| {
            let period_s = if k < LARGE_FEEDS {
                LARGE_FEED_PERIOD_S
            } else {
                FEED_PERIODS_S[rng.below(FEED_PERIODS_S.len() as u64) as usize]
            };
            Feed {
                period_s,
                phase_s: rng.below(period_s as u64) as u32,
            }
        })
        .collect();
    let minute_feed = Feed {
        period_s: 60,
        phase_s: rng.below(60) as u32,
    };
    // Each airport belongs to one feed, the large ones taking more airports.
    let feed_w = Weighted::new((0..FEEDS).map(|k| 1.0 / ((k + 1) as f64).powf(FEED_SIZE_EXPONENT)));
    let airport_feed: Vec<usize> = airports.iter().map(|_| feed_w.pick(&mut rng)).collect();

    let count = (FLIGHTS_PER_DAY * config.density).round().max(1.0) as usize;
    let mut flights = Vec::with_capacity(count + count / 8);
    for _ in 0..count {
        let ga = rng.chance(GA_SHARE);
        let (o, d) = if ga {
            let o = ga_w.pick(&mut rng);
            let mut d = ga_w.pick(&mut rng);
            for _ in 0..200 {
                let nm = central_angle(&airports[o], &airports[d]) * EARTH_RADIUS_NM;
                if (40.0..400.0).contains(&nm) {
                    break;
                }
                d = ga_w.pick(&mut rng);
            }
            (o, d)
        } else {
            let o = airline_w.pick(&mut rng);
            let mut d = airline_w.pick(&mut rng);
            for _ in 0..200 {
                let nm = central_angle(&airports[o], &airports[d]) * EARTH_RADIUS_NM;
                if rng.unit() < airline_distance_preference(nm) {
                    break;
                }
                d = airline_w.pick(&mut rng);
            }
            (o, d)
        };
        let (ao, ad) = (&airports[o], &airports[d]);
        let angle = central_angle(ao, ad);
        let route_nm = (angle * EARTH_RADIUS_NM).max(20.0);

        let (v0_kt, vc_kt, alt_cap_ft, climb_fpm, descent_fpm) = if ga {
            (
                rng.range(70.0, 90.0),
                rng.range(110.0, 240.0),
                rng.range(4_500.0, 17_500.0),
                rng.range(600.0, 1_400.0),
                rng.range(500.0, 900.0),
            )
        } else {
            (
                rng.range(150.0, 180.0),
                rng.range(400.0, 500.0),
                rng.range(31_000.0, 40_000.0),
                rng.range(1_800.0, 2_600.0),
                rng.range(1_500.0, 2_200.0),
            )
        };
        // A wind component along the route changes the ground speed.
        let wind_kt = rng.range(-40.0, 40.0);
        let (v0, vc) = (
            (v0_kt + wind_kt * 0.3) / 3600.0,
            ((vc_kt + wind_kt).max(v0_kt + 10.0)) / 3600.0,
        );
        let elev_o = ao.elevation_ft;
        let elev_d = ad.elevation_ft;
        let (climb_ft_s, descent_ft_s) = (climb_fpm / 60.0, descent_fpm / 60.0);
        // Cruise as high as the cap allows while climb and descent take at most 85 %
        // of the route (nautical miles flown per foot of climb and of descent).
        let nm_per_ft = (v0 + vc) / 2.0 / climb_ft_s + (v0 + vc) / 2.0 / descent_ft_s;
        let top = elev_o.max(elev_d);
        let alt_fit = top
            + (0.85 * route_nm
                - (elev_o - elev_d).abs() * (v0 + vc) / 2.0 / climb_ft_s.min(descent_ft_s))
                / nm_per_ft;
        let alt_c = alt_cap_ft.min(alt_fit).max(top + 1_500.0).round();
        let climb_s = (alt_c - elev_o) / climb_ft_s;
        let descent_s = (alt_c - elev_d) / descent_ft_s;
        let climb_nm = (v0 + vc) / 2.0 * climb_s;
        let descent_nm = (v0 + vc) / 2.0 * descent_s;
        let cruise_nm = (route_nm - climb_nm - descent_nm).max(0.0);
        let cruise_s = cruise_nm / vc;
        let duration_s = climb_s + cruise_s + descent_s;

        // Departure at a local hour of the origin, converted to UTC.
        let local_s = local_hour_pick(if ga { &ga_hours } else { &airline_hours }, &mut rng);
        let dep_s = (local_s - ao.utc_offset_dst_h() * 3600.0).rem_euclid(DAY_S as f64);

        let a = unit_vector(ao.lat_deg, ao.lon_deg);
        let b = unit_vector(ad.lat_deg, ad.lon_deg);
        // Unit tangent at a toward b: the part of b orthogonal to a, normalised.
        let c = dot(a, b);
        let mut u = [b[0] - c * a[0], b[1] - c * a[1], b[2] - c * a[2]];
        let n = dot(u, u).sqrt();
        if n > 1e-12 {
            u = [u[0] / n, u[1] / n, u[2] / n];
        } else {
            // Origin and destination coincide: fly north.
            let (sl, cl) = ao.lat_deg.to_radians().sin_cos();
            let (so, co) = ao.lon_deg.to_radians().sin_cos();
            u = [-sl * co, -sl * so, cl];
        }
        let adsb = rng.chance(ADSB_SHARE);
        let feed = if adsb {
            let period_s = ADSB_PERIODS_S[rng.below(ADSB_PERIODS_S.len() as u64) as usize];
            Feed {
                period_s,
                phase_s: rng.below(period_s as u64) as u32,
            }
        } else if rng.chance(MINUTE_SHARE) {
            minute_feed
        } else {
            feeds[airport_feed[o]]
        };
        let callsign = if ga {
            ga_callsign(&mut rng)
        } else {
            airline_callsign(&mut rng, &prefixes)
        };
        let flight = Flight {
            dep_s,
            arr_s: dep_s + duration_s,
            a,
            u,
            elev_o_ft: elev_o,
            alt_cruise_ft: alt_c,
            v0_nm_s: v0,
            vc_nm_s: vc,
            climb_s,
            cruise_s,
            descent_s,
            climb_nm,
            cruise_nm,
            climb_ft_s,
            descent_ft_s,
            report_vs: adsb,
            fine: adsb && rng.chance(0.5),
            period_s: feed.period_s,
            phase_s: feed.phase_s,
            offset_ms: rng.below(1000) as u32,
            callsign,
        };
        // A flight still in the air at midnight also flew yesterday at the same time:
        // its copy shifted by a day is airborne at 00:00Z.
        if flight.arr_s > DAY_S as f64 {
            let mut yesterday = flight.clone();
            yesterday.dep_s -= DAY_S as f64;
            yesterday.arr_s -= DAY_S as f64;
            flights.push(yesterday);
        }
        flights.push(flight);
    }
    separate_callsigns(&mut flights, config.seed);
    flights
}

/// How long a callsign stays taken after its flight lands (and before it departs):
/// the performance monitor counts a flight from its first to its last message and
/// takes a vehicle silent for longer than this as a new flight
/// (`run/flights.rs`, `FLIGHT_GAP_S`), so two flights of one callsign must be
/// further apart than this to be counted as two.
const CALLSIGN_REUSE_S: f64 = 1_800.0;

/// Gives every flight a callsign no other flight uses at the same time, as air
/// traffic control requires: drawn independently, two airline flights in a day share
/// a callsign often (there are only 216 one-digit flight numbers across the
/// airlines), and a count of flights by callsign would then take them for one.
///
/// Flights are visited by departure; one whose callsign another flight holds within
/// [`CALLSIGN_REUSE_S`] of its own flight time gets a new number of the same airline
/// (a new N-number for general aviation), drawn from a stream of its own so that
/// nothing else about the day changes.
fn separate_callsigns(flights: &mut [Flight], seed: u64) {
    let mut rng = Rng::new(seed ^ 0xCA11_5161_0000_0001);
    let mut order: Vec<usize> = (0..flights.len()).collect();
    order.sort_by(|&a, &b| flights[a].dep_s.total_cmp(&flights[b].dep_s));
    let mut taken: HashMap<String, Vec<(f64, f64)>> = HashMap::with_capacity(flights.len());
    for i in order {
        let busy = (
            flights[i].dep_s - CALLSIGN_REUSE_S,
            flights[i].arr_s + CALLSIGN_REUSE_S,
        );
        let clash = |taken: &HashMap<String, Vec<(f64, f64)>>, c: &str| {
            taken
                .get(c)
                .is_some_and(|spans| spans.iter().any(|s| s.0 < busy.1 && busy.0 < s.1))
        };
        let mut callsign = std::mem::take(&mut flights[i].callsign);
        while clash(&taken, &callsign) {
            // General aviation flies N-numbers ("N" and a digit); airlines keep their
            // three-letter prefix and take another flight number.
            callsign = if callsign.as_bytes().get(1).is_some_and(u8::is_ascii_digit) {
                ga_callsign(&mut rng)
            } else {
                format!("{}{}", &callsign[..3], flight_number(&mut rng))
            };
        }
        taken.entry(callsign.clone()).or_default().push(busy);
        flights[i].callsign = callsign;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::airports::us_airports;

    /// Whole seconds a flight is in the air: from the second of its departure to the
    /// second of its arrival.
    fn in_the_air_s(f: &Flight) -> (i64, i64) {
        (f.dep_s.floor() as i64, f.arr_s.ceil() as i64)
    }

    /// The whole calibrated day (about 34,000 flights, yesterday's still airborne at
    /// 00:00Z included), for the layout's seed and another: no two flights in the air
    /// in the same second share a callsign, and two legs of one callsign are further
    /// apart than the monitor's flight gap, so it counts them as two flights.
    #[test]
    fn no_two_flights_in_the_air_share_a_callsign() {
        let airports = us_airports().unwrap();
        for seed in [1, 20_160_323] {
            let config = TrafficConfig {
                seed,
                ..TrafficConfig::default()
            };
            let flights = generate_flights(airports, &config);
            assert!(flights.len() > 30_000, "{}", flights.len());
            let mut legs: HashMap<&str, Vec<&Flight>> = HashMap::new();
            for f in &flights {
                legs.entry(f.callsign.as_str()).or_default().push(f);
            }
            let mut reused = 0;
            for (callsign, legs) in &mut legs {
                legs.sort_by(|a, b| a.dep_s.total_cmp(&b.dep_s));
                for pair in legs.windows(2) {
                    reused += 1;
                    let (earlier, later) = (in_the_air_s(pair[0]), in_the_air_s(pair[1]));
                    assert!(
                        earlier.1 < later.0,
                        "seed {seed}: two flights {callsign} in the air at once, \
                         seconds {earlier:?} and {later:?}"
                    );
                    let silence = pair[1].dep_s - pair[0].arr_s;
                    assert!(
                        silence > f64::from(crate::run::FLIGHT_GAP_S),
                        "seed {seed}: {callsign} lands at {} and departs again {silence} s \
                         later, within the monitor's flight gap",
                        pair[0].arr_s
                    );
                }
            }
            // Callsigns do come back in a day (short flight numbers are few), so the
            // assertions above had legs to compare.
            assert!(
                reused > 1_000,
                "seed {seed}: only {reused} callsigns flew again"
            );
        }
    }
}
