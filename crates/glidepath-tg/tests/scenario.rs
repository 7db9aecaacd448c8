//! Scenario files: the built-ins load, generated flights are seeded and sensible, and
//! every kind of mistake is reported with the file, line and field.

use glidepath_tg::perf::PerformanceTable;
use glidepath_tg::scenario::{self, builtin_names, parse_str, FlightKind, Region};

fn table() -> &'static PerformanceTable {
    PerformanceTable::builtin()
}

#[test]
fn builtins_load_with_their_sizes() {
    let names: Vec<&str> = builtin_names().iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names,
        ["demo", "us-400", "us-1000", "us-10000", "uam-bay-area"]
    );
    for (name, count) in [
        ("demo", 8),
        ("us-400", 400),
        ("us-1000", 1000),
        ("uam-bay-area", 2200),
    ] {
        let s = scenario::load(name, table()).unwrap();
        assert_eq!((s.name.as_str(), s.aircraft.len()), (name, count));
    }
    let demo = scenario::load("demo", table()).unwrap();
    assert_eq!(demo.aircraft[0].callsign, "UAL101");
    assert!((demo.wind.east_mps - 12.0 * 1852.0 / 3600.0).abs() < 1e-12);
}

#[test]
fn generated_flights_are_seeded_and_within_the_region() {
    let a = scenario::random_flights(FlightKind::Airline, Region::West, 300, 5, table()).unwrap();
    let b = scenario::random_flights(FlightKind::Airline, Region::West, 300, 5, table()).unwrap();
    let c = scenario::random_flights(FlightKind::Airline, Region::West, 300, 6, table()).unwrap();
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert_eq!(a.len(), 300);
    for f in &a {
        let w = f.plan.waypoints();
        assert!(
            w[0].lon_deg < -104.0 && w[w.len() - 1].lon_deg < -104.0,
            "{}",
            f.callsign
        );
        let alt = f.published().alt_ft;
        assert!(
            (1_000.0..=45_000.0).contains(&alt),
            "{}: {alt} ft",
            f.callsign
        );
    }
    let uam = scenario::random_flights(FlightKind::Uam, Region::NewYork, 500, 1, table()).unwrap();
    assert_eq!(uam.len(), 500);
    for f in &uam {
        let p = f.published();
        assert!(
            (p.lat_deg - 40.73).abs() < 0.5 && (p.lon_deg + 73.93).abs() < 0.6,
            "{p:?}"
        );
        assert!(p.alt_ft <= 2_500.0);
    }
}

fn error_of(text: &str) -> String {
    parse_str("s.toml", text, table()).unwrap_err().to_string()
}

#[test]
fn mistakes_name_the_file_line_and_field() {
    let head = "name = \"t\"\n";
    assert_eq!(
        error_of(&format!(
            "{head}[[aircraft]]\ncallsign = \"A1\"\ntype = \"C172\"\nroute = [\"KSFO\"]\n"
        )),
        format!(
            "s.toml:4: aircraft[0].type: unknown type `C172` (known: {})",
            table()
                .types()
                .iter()
                .map(|p| p.type_code.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    );
    assert_eq!(
        error_of(&format!(
            "{head}[[aircraft]]\ncallsign = \"A1\"\ntype = \"A320\"\n"
        )),
        "s.toml:2: aircraft[0].route: missing"
    );
    assert_eq!(
        error_of(&format!("{head}[[aircraft]]\ncallsign = \"A1\"\ntype = \"A320\"\nroute = [\"KXYZ\"]\n")),
        "s.toml:5: aircraft[0].route[0]: unknown airport `KXYZ` (ICAO codes of data/airports-us.csv)"
    );
    assert_eq!(
        error_of(&format!("{head}[[aircraft]]\ncallsign = \"A1\"\ntype = \"A320\"\nalt_ft = 50000\nroute = [\"KSFO\"]\n")),
        "s.toml:5: aircraft[0].alt_ft: 50000 is outside 0–41010 ft"
    );
    let twice = format!("{head}[[aircraft]]\ncallsign = \"A1\"\ntype = \"A320\"\nroute = [\"KSFO\"]\n\n[[aircraft]]\ncallsign = \"A1\"\ntype = \"A320\"\nroute = [\"KLAX\"]\n");
    assert_eq!(
        error_of(&twice),
        "s.toml:7: aircraft[1].callsign: A1 is already used on line 3"
    );
    assert_eq!(
        error_of(&format!("{head}[[generate]]\nkind = \"airline\"\ncount = 10\nregion = \"mars\"\n")),
        "s.toml:5: generate[0].region: `mars` is not one of us, west, central, east, bay-area, new-york, dallas"
    );
    assert_eq!(
        error_of(&format!(
            "{head}[[generate]]\nkind = \"glider\"\ncount = 10\n"
        )),
        "s.toml:3: generate[0].kind: `glider` is not airline or uam"
    );
    // Unknown keys and TOML syntax come from the parser, still with the line.
    let e = error_of(&format!(
        "{head}[[aircraft]]\ncallsign = \"A1\"\ncolour = \"red\"\n"
    ));
    assert!(
        e.starts_with("s.toml:4: toml: unknown field `colour`"),
        "{e}"
    );
    let e = error_of("name = \"t\"\n\nspeed = = 3\n");
    assert!(e.starts_with("s.toml:3: toml:"), "{e}");
    assert_eq!(
        error_of("name = \"t\"\n"),
        "s.toml:1: aircraft: the scenario has no aircraft (no [[aircraft]] and no [[generate]])"
    );
    let e = scenario::load("/nonexistent/x.toml", table()).unwrap_err();
    assert_eq!((e.line, e.field.as_str()), (0, "file"));
    assert!(
        e.reason
            .contains("not a built-in scenario either: demo, us-400"),
        "{e}"
    );
}

#[test]
fn a_waypoint_mistake_points_at_the_waypoint_line() {
    let text = "name = \"t\"\n[[aircraft]]\ncallsign = \"A1\"\ntype = \"A320\"\nroute = [\n  \"KSFO\",\n  { name = \"X\", lat_deg = 95.0, lon_deg = 1.0 },\n]\n";
    assert_eq!(
        error_of(text),
        "s.toml:7: aircraft[0].route[1].lat_deg: 95 is outside -90–90 °"
    );
    let text = "name = \"t\"\n[[aircraft]]\ncallsign = \"A1\"\ntype = \"A320\"\nroute = [{ name = \"X\", lat_deg = 5.0 }]\n";
    assert_eq!(
        error_of(text),
        "s.toml:5: aircraft[0].route[0].lon_deg: missing"
    );
}
