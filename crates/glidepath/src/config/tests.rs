//! The configuration's unit tests: parsing, the environment and the flags.

use super::*;

#[cfg(feature = "transport-nats")]
#[test]
fn persistence_comes_from_a_flag_and_says_what_is_wrong() {
    let mut config = RtiConfig::default();
    assert_eq!(
        config.persistence,
        glidepath_transport::nats::Persistence::None
    );
    config.apply_args(["--persistence", "jetstream"]).unwrap();
    assert_eq!(config.persistence.name(), "jetstream");
    let e = config.apply_args(["--persistence=disk"]).unwrap_err();
    assert!(
        matches!(
            e,
            ConfigError::InvalidValue {
                setting: "--persistence",
                ..
            }
        ),
        "{e:?}"
    );
}

#[test]
fn to_args_round_trips_through_apply_args() {
    let mut config = RtiConfig::default();
    config
        .apply_args([
            "--transport=nats",
            "--nats-url",
            "nats://127.0.0.1:4999",
            "--compression",
            "zstd:7",
            "--compress-min-bytes",
            "64",
            "--bundle-bytes",
            "16384",
            "--bundle-time-us",
            "250",
        ])
        .unwrap();
    #[cfg(feature = "transport-nats")]
    config
        .apply_args(["--persistence", "jetstream", "--reliable-window", "0"])
        .unwrap();
    let mut copy = RtiConfig::default();
    copy.apply_args(config.to_args()).unwrap();
    assert_eq!(copy, config);
    assert!(!config.to_args().iter().any(|a| a == "--key-file"));
}

#[test]
fn transport_names_parse_case_insensitively() {
    assert_eq!("inproc".parse::<TransportKind>(), Ok(TransportKind::Inproc));
    assert_eq!(
        " InProc ".parse::<TransportKind>(),
        Ok(TransportKind::Inproc)
    );
    assert_eq!(TransportKind::Inproc.to_string(), "inproc");
    assert_eq!(RtiConfig::default().transport, TransportKind::Inproc);
}

#[test]
fn unknown_transport_names_list_the_known_ones() {
    let e = "zmq".parse::<TransportKind>().unwrap_err();
    let known = TransportKind::ALL
        .iter()
        .map(|k| k.name())
        .collect::<Vec<_>>()
        .join(", ");
    assert_eq!(
        e,
        ConfigError::UnknownTransport {
            name: "zmq".into(),
            known: known.clone()
        }
    );
    assert_eq!(
        e.to_string(),
        format!("unknown transport `zmq`; this build knows: {known}")
    );
}

#[cfg(all(feature = "transport-shm", target_os = "linux"))]
#[test]
fn shm_is_known_and_its_name_and_ring_size_are_checked() {
    assert_eq!("shm".parse::<TransportKind>(), Ok(TransportKind::Shm));
    let mut c = RtiConfig::default();
    assert_eq!(
        (c.shm_name.as_str(), c.shm_ring_bytes),
        ("glidepath", 8 << 20)
    );
    c.set("--shm-name", "lab_2").unwrap();
    c.set(SHM_RING_BYTES_ENV, "1048576").unwrap();
    assert_eq!((c.shm_name.as_str(), c.shm_ring_bytes), ("lab_2", 1 << 20));
    for (setting, bad, says) in [
        ("--shm-name", "../x", "letters, digits"),
        ("--shm-name", "", "letters, digits"),
        ("--shm-ring-bytes", "100000", "power of two"),
        ("--shm-ring-bytes", "1024", "power of two"),
        ("--shm-ring-bytes", "lots", "invalid digit"),
    ] {
        let e = c.set(setting, bad).unwrap_err().to_string();
        assert!(e.contains(setting) && e.contains(says), "{e}");
    }
    assert_eq!(c.shm_name, "lab_2", "a refused value changes nothing");
}

#[cfg(feature = "transport-nats")]
#[test]
fn nats_is_known_with_a_default_url() {
    assert_eq!(" NATS".parse::<TransportKind>(), Ok(TransportKind::Nats));
    assert_eq!(TransportKind::Nats.to_string(), "nats");
    assert_eq!(RtiConfig::default().nats_url, "nats://127.0.0.1:4222");
}

#[test]
fn chain_and_bundle_flags_parse_and_bad_values_name_the_flag() {
    let mut config = RtiConfig::default();
    config
        .apply_args([
            "--compression",
            "zstd:5",
            "--bundle-bytes=16384",
            "--bundle-time-us",
            "250",
            "--compress-min-bytes",
            "64",
        ])
        .unwrap();
    assert_eq!(config.chain.compression, Compression::Zstd { level: 5 });
    assert_eq!(config.chain.compress_bytes_min, 64);
    assert_eq!(
        config.bundle,
        BundleConfig {
            bundle_bytes_max: 16384,
            bundle_time_ns_max: 250_000
        }
    );
    let e = config.apply_args(["--compression", "gzip"]).unwrap_err();
    assert!(
        e.to_string().contains("--compression") && e.to_string().contains("gzip"),
        "{e}"
    );
    let e = config.apply_args(["--bundle-bytes", "lots"]).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("invalid value `lots` for --bundle-bytes"),
        "{e}"
    );
    let e = config
        .apply_args(["--key-file", "/nonexistent/key"])
        .unwrap_err();
    assert!(
        e.to_string().contains("--key-file") && e.to_string().contains("/nonexistent/key"),
        "{e}"
    );
    let dir = std::env::temp_dir().join(format!("glidepath-key-test-{}", std::process::id()));
    std::fs::write(&dir, "00".repeat(31)).unwrap();
    let e = config
        .apply_args(["--key-file", dir.to_str().unwrap()])
        .unwrap_err();
    assert!(e.to_string().contains("64 hex digits"), "{e}");
    std::fs::write(&dir, format!("{}\n", "ab".repeat(32))).unwrap();
    config
        .apply_args(["--key-file", dir.to_str().unwrap()])
        .unwrap();
    assert_eq!(
        config.chain.key,
        Some(FederationKey::from_bytes([0xab; 32]))
    );
    let _ = std::fs::remove_file(&dir);
}

#[test]
fn arguments_override_and_others_are_ignored() {
    let mut config = RtiConfig::default();
    config
        .apply_args([
            "--steps",
            "3",
            "--nats-url",
            "nats://h:1",
            "--transport=inproc",
            "x",
        ])
        .unwrap();
    assert_eq!(config.nats_url, "nats://h:1");
    assert_eq!(config.transport, TransportKind::Inproc);
    assert_eq!(
        config.apply_args(["--transport"]),
        Err(ConfigError::MissingValue("--transport"))
    );
    assert!(matches!(
        config.apply_args(["--transport", "pigeon"]),
        Err(ConfigError::UnknownTransport { .. })
    ));
}
