//! A bounded slice of every fuzz target (the long run is `cargo run -p glidepath-fuzz
//! --release -- all`), and every saved crashing input replayed as a regression.

use glidepath_fuzz::{check, files_in, fuzz, regressions_dir, seeds, Target};

/// Cases per target in the test command: seconds each, in the test profile.
fn cases() -> u64 {
    std::env::var("GLIDEPATH_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000)
}

#[test]
fn every_target_has_valid_seeds_that_pass() {
    for target in Target::ALL {
        let seeds = seeds(target);
        assert!(
            seeds.len() >= 3,
            "{}: only {} seeds",
            target.name(),
            seeds.len()
        );
        for (i, s) in seeds.iter().enumerate() {
            check(target, s).unwrap_or_else(|m| panic!("{} seed {i}: {m}", target.name()));
        }
    }
}

macro_rules! fuzz_test {
    ($name:ident, $target:expr) => {
        #[test]
        fn $name() {
            let report = fuzz($target, cases(), 20261125);
            assert_eq!(report.cases, cases());
            assert!(
                report.crashes.is_empty(),
                "{}: {:?}",
                $target.name(),
                report.crashes
            );
        }
    };
}

fuzz_test!(envelope_never_panics, Target::Envelope);
fuzz_test!(bundle_never_panics, Target::Bundle);
fuzz_test!(chain_frame_never_panics, Target::ChainFrame);
fuzz_test!(exec_request_never_panics, Target::ExecRequest);
fuzz_test!(fom_xml_never_panics, Target::FomXml);
fuzz_test!(layout_toml_never_panics, Target::LayoutToml);
fuzz_test!(bus_xml_never_panics, Target::BusXml);
fuzz_test!(bus_binary_never_panics, Target::BusBinary);
fuzz_test!(bus_frame_never_panics, Target::BusFrame);
fuzz_test!(typed_value_never_panics, Target::TypedValue);
fuzz_test!(tg_message_never_panics, Target::TgMessage);
fuzz_test!(cell_account_never_panics, Target::CellAccount);

#[test]
fn saved_crashes_stay_fixed() {
    for target in Target::ALL {
        for (path, input) in files_in(&regressions_dir(target)) {
            check(target, &input).unwrap_or_else(|m| panic!("{}: {m}", path.display()));
        }
    }
}
