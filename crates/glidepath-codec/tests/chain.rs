//! The encoder chain: exact inverses, and hostile input that is rejected, never a panic.
//! (The SNDEM track message's own tests are in `glidepath-atm`'s `tests/track.rs`.)

use glidepath_codec::{ChainConfig, CodecError, Compression, EncoderChain, FederationKey};
use proptest::prelude::*;

/// The SNDEM sample of Table 4.1, a realistic payload.
const TABLE_4_1: &str = r#"{"vid":"UAL1967","latDeg":37.62231,"lonDeg":-122.38169,"altFt":6.0,"time":1458716400000,"gsKt":20.0,"crsDeg":286.0,"vsFpm":NaN,"meta":{"src":"ATAC Data.1","ver":"2.3","run":"1A","tpub":1603483450633}}"#;

fn chain(compression: Compression, key: Option<FederationKey>) -> EncoderChain {
    EncoderChain::new(ChainConfig {
        compression,
        compress_bytes_min: 64,
        key,
        ..ChainConfig::default()
    })
    .unwrap()
}

#[test]
fn every_combination_is_an_exact_inverse() {
    let key = FederationKey::generate().unwrap();
    let compressible = TABLE_4_1.repeat(20);
    for compression in [
        Compression::None,
        Compression::Lz4,
        Compression::Zstd { level: 3 },
    ] {
        for key in [None, Some(key.clone())] {
            let c = chain(compression, key);
            for payload in [&b""[..], b"short", compressible.as_bytes()] {
                let frame = c.encode(payload).unwrap();
                assert_eq!(&c.decode(&frame).unwrap()[..], payload, "{compression:?}");
            }
            if compression != Compression::None {
                let frame = c.encode(compressible.as_bytes()).unwrap();
                assert!(
                    frame.len() < compressible.len() / 2,
                    "{compression:?} compressed to {}",
                    frame.len()
                );
            }
        }
    }
}

#[test]
fn small_messages_are_sent_uncompressed() {
    let c = chain(Compression::Zstd { level: 3 }, None);
    let frame = c.encode(b"0123456789").unwrap();
    assert_eq!(
        frame[1], 0,
        "below the threshold no compression flag is set"
    );
    assert_eq!(&frame[2..], b"0123456789");
}

#[test]
fn wrong_key_tampering_and_missing_key_are_rejected() {
    let sender = chain(Compression::Lz4, Some(FederationKey::generate().unwrap()));
    let stranger = chain(Compression::Lz4, Some(FederationKey::generate().unwrap()));
    let keyless = chain(Compression::Lz4, None);
    let frame = sender.encode(TABLE_4_1.as_bytes()).unwrap();
    assert_eq!(
        stranger.decode(&frame),
        Err(CodecError::AuthenticationFailed)
    );
    assert_eq!(keyless.decode(&frame), Err(CodecError::KeyRequired));
    // A keyless process cannot inject into a keyed federation.
    let injected = keyless.encode(b"forged").unwrap();
    assert_eq!(sender.decode(&injected), Err(CodecError::Unauthenticated));
    // Flipping any single byte breaks authentication (or the frame header).
    for i in 0..frame.len() {
        let mut bad = frame.to_vec();
        bad[i] ^= 0x01;
        assert!(sender.decode(&bad).is_err(), "flip at {i} accepted");
    }
}

#[test]
fn keys_parse_from_hex_and_never_print() {
    let key = FederationKey::generate().unwrap();
    assert_eq!(FederationKey::from_hex(&key.to_hex()).unwrap(), key);
    assert!(FederationKey::from_hex("abc").is_err());
    assert!(FederationKey::from_hex(&"zz".repeat(32)).is_err());
    assert_eq!(format!("{key:?}"), "FederationKey(<redacted>)");
    assert_eq!(
        Compression::parse("zstd:7").unwrap(),
        Compression::Zstd { level: 7 }
    );
    assert!(Compression::parse("gzip").is_err());
}

#[test]
fn decompression_bombs_are_refused() {
    let big = vec![0u8; 1 << 20];
    let sender = EncoderChain::new(ChainConfig {
        compression: Compression::Zstd { level: 1 },
        ..ChainConfig::default()
    })
    .unwrap();
    let receiver = EncoderChain::new(ChainConfig {
        message_bytes_max: 1 << 16,
        ..ChainConfig::default()
    })
    .unwrap();
    let frame = sender.encode(&big).unwrap();
    assert!(matches!(
        receiver.decode(&frame),
        Err(CodecError::TooLarge { .. })
    ));
}

proptest! {
    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let plain = chain(Compression::Lz4, None);
        let keyed = chain(Compression::Zstd { level: 1 }, Some(FederationKey::from_bytes([7; 32])));
        let _ = plain.decode(&bytes);
        let _ = keyed.decode(&bytes);
        // A frame header in front of random bytes reaches the decompressors.
        let mut framed = vec![0xE1, 1];
        framed.extend_from_slice(&bytes);
        let _ = plain.decode(&framed);
        framed[1] = 2;
        let _ = plain.decode(&framed);
    }
}
