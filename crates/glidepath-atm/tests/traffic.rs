//! The traffic day: determinism, plausible tracks of the report's lengths, validation,
//! and the busiest two hours against the report's figures.

use glidepath_atm::track::Track;
use glidepath_atm::{message_len, TrafficConfig, TrafficDay, TrafficError, DAY_S};

fn window(seed: u64, start_s: u32, end_s: u32, density: f64) -> Vec<Vec<Track>> {
    let mut day = TrafficDay::new(TrafficConfig {
        seed,
        start_s,
        end_s,
        density,
        ..TrafficConfig::default()
    })
    .unwrap();
    (start_s..end_s)
        .map(|t| {
            let mut out = Vec::new();
            day.second(t, &mut out);
            out
        })
        .collect()
}

#[test]
fn same_seed_same_tracks_other_seed_other_tracks() {
    let a = window(7, 72_000, 72_300, 0.1);
    let b = window(7, 72_000, 72_300, 0.1);
    let c = window(8, 72_000, 72_300, 0.1);
    assert!(a.iter().map(Vec::len).sum::<usize>() > 1_000);
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn an_hour_of_tracks_is_plausible_and_has_the_reports_lengths() {
    let start = 18 * 3600;
    let seconds = window(1, start, start + 3600, 0.1);
    let mut scratch = Vec::new();
    let mut count = 0usize;
    let mut last_time = i64::MIN;
    for (i, tracks) in seconds.iter().enumerate() {
        let t = (start as usize + i) as i64;
        for track in tracks {
            count += 1;
            let second_ms = TrafficConfig::default().epoch_ms + t * 1000;
            assert!(
                (second_ms..second_ms + 1000).contains(&track.time),
                "{track:?} outside second {t}"
            );
            assert!(track.time / 1000 >= last_time / 1000, "time goes back");
            last_time = track.time;
            assert!(!track.vid.is_empty() && track.vid.len() <= 7, "{track:?}");
            assert!((18.0..72.0).contains(&track.lat_deg), "{track:?}");
            assert!((-180.0..-60.0).contains(&track.lon_deg), "{track:?}");
            assert!((-300.0..=45_000.0).contains(&track.alt_ft), "{track:?}");
            assert!((30.0..700.0).contains(&track.gs_kt), "{track:?}");
            assert!((0.0..360.0).contains(&track.crs_deg), "{track:?}");
            assert!(
                track.vs_fpm.is_nan() || track.vs_fpm.abs() <= 4_000.0,
                "{track:?}"
            );
            assert_eq!(
                (
                    track.meta.src.as_str(),
                    track.meta.ver.as_str(),
                    track.meta.run.as_str(),
                    track.meta.tpub
                ),
                ("ATAC Data.1", "2.3", "1A", 0)
            );
            // The length the report counts: key plus payload, with a publication time
            // stamped (13 digits, as in Table 4.1).
            let mut stamped = track.clone();
            stamped.meta.tpub = track.time + 15;
            let len = message_len(&stamped, &mut scratch);
            assert!(
                (193..=219).contains(&len),
                "{len} bytes: {}",
                stamped.to_sndem_json()
            );
            // And it reads back.
            assert_eq!(Track::from_sndem_json(&scratch).unwrap(), stamped);
        }
    }
    // A tenth of the day's flights at 18Z: roughly a tenth of ~770 messages a second.
    let per_second = count as f64 / 3600.0;
    assert!(
        (50.0..110.0).contains(&per_second),
        "{per_second} messages per second"
    );
}

#[test]
fn the_busiest_two_hours_match_the_report() {
    // 19:00Z to 21:00Z holds the report's peaks (4,744 flights at 20:44:43Z, 1,779
    // messages at 20:35:47Z). Bounds are loose: the window is not the whole day.
    let (start, end) = (19 * 3600, 21 * 3600);
    let mut day = TrafficDay::new(TrafficConfig {
        start_s: start,
        end_s: end,
        ..TrafficConfig::default()
    })
    .unwrap();
    let mut out = Vec::new();
    let mut counts = Vec::new();
    let mut peak_airborne = 0;
    for t in start..end {
        out.clear();
        day.second(t, &mut out);
        counts.push(out.len() as f64);
        peak_airborne = peak_airborne.max(day.airborne());
    }
    let mean = counts.iter().sum::<f64>() / counts.len() as f64;
    let max = counts.iter().cloned().fold(0.0, f64::max);
    assert!(
        (4_744.0 * 0.9..=4_744.0 * 1.1).contains(&(peak_airborne as f64)),
        "peak airborne {peak_airborne}"
    );
    // The report's daytime seconds: P75 704 over the whole day, so the busiest hours
    // run well above it; the busiest second is 1,779.
    assert!(
        (650.0..1_000.0).contains(&mean),
        "mean {mean} messages per second"
    );
    assert!(
        (1_779.0 * 0.8..=1_779.0 * 1.2).contains(&max),
        "busiest second {max}"
    );
}

#[test]
fn bad_configurations_are_refused_with_a_reason() {
    let bad = |c: TrafficConfig| TrafficDay::new(c).unwrap_err();
    let d = TrafficConfig::default;
    assert_eq!(
        bad(TrafficConfig {
            start_s: 10,
            end_s: 10,
            ..d()
        }),
        TrafficError::EmptyWindow {
            start_s: 10,
            end_s: 10
        }
    );
    assert_eq!(
        bad(TrafficConfig {
            end_s: DAY_S + 1,
            ..d()
        }),
        TrafficError::PastEndOfDay { end_s: DAY_S + 1 }
    );
    assert!(matches!(
        bad(TrafficConfig {
            density: 0.0,
            ..d()
        }),
        TrafficError::BadDensity { .. }
    ));
    assert!(matches!(
        bad(TrafficConfig {
            density: f64::NAN,
            ..d()
        }),
        TrafficError::BadDensity { .. }
    ));
    assert!(bad(TrafficConfig {
        density: -1.0,
        ..d()
    })
    .to_string()
    .contains("density"));
}

#[test]
fn defaults_and_accessors() {
    let c = TrafficConfig::default();
    assert_eq!((c.seed, c.start_s, c.end_s, c.density), (1, 0, DAY_S, 1.0));
    assert_eq!(c.epoch_ms, 1_767_225_600_000, "2026-01-01T00:00:00Z");
    let mut day = TrafficDay::new(TrafficConfig {
        start_s: 3600,
        end_s: 3700,
        density: 0.05,
        ..c
    })
    .unwrap();
    assert_eq!(day.config().start_s, 3600);
    let mut out = Vec::new();
    // Out of the window or going back: nothing, no panic.
    day.second(10, &mut out);
    day.second(3650, &mut out);
    let n = out.len();
    day.second(3649, &mut out);
    day.second(3700, &mut out);
    assert_eq!(out.len(), n);
    assert!(day.airborne() > 0);
}

#[test]
fn recycling_the_buffer_gives_the_same_tracks() {
    let config = TrafficConfig {
        start_s: 50_000,
        end_s: 50_120,
        density: 0.2,
        ..TrafficConfig::default()
    };
    let mut a = TrafficDay::new(config.clone()).unwrap();
    let mut b = TrafficDay::new(config).unwrap();
    let mut recycled = Vec::new();
    for t in 50_000..50_120 {
        let mut fresh = Vec::new();
        a.second(t, &mut fresh);
        b.second_reusing(t, &mut recycled);
        assert_eq!(fresh, recycled, "second {t}");
        assert_eq!(a.airborne(), b.airborne());
    }
}
