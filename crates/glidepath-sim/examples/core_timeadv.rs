//! How fast the time management core alone grants time advances: N federates, all
//! regulating (lookahead 1) and constrained, advance in lock-step inside one thread
//! with an instant in-memory network, so no thread hand-off is measured.
//!
//! `cargo run --release -p glidepath-sim --example core_timeadv -- [FEDERATES] [STEPS] [tar|ner]`

use std::sync::Arc;
use std::time::Instant;

use glidepath_core::instant::InstantNetwork;
use glidepath_core::{Callback, ExecRequest, LocalRti};
use glidepath_sim::sim_fom;

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args
        .next()
        .map_or(8, |a| a.parse().expect("FEDERATES is a number"));
    let steps: u32 = args
        .next()
        .map_or(20_000, |a| a.parse().expect("STEPS is a number"));
    let ner = match args.next().as_deref() {
        None | Some("tar") => false,
        Some("ner") => true,
        Some(other) => panic!("the request kind is tar or ner, not `{other}`"),
    };
    let mut net = InstantNetwork::new();
    net.host.handle(
        ExecRequest::Create {
            name: "bench".into(),
            fom: Arc::new(sim_fom()),
        },
        0,
    );
    let mut feds: Vec<LocalRti> = (0..n)
        .map(|i| net.join(i, "bench", &format!("f{i}")).expect("join"))
        .collect();
    for i in 0..n {
        feds[i]
            .enable_time_regulation(&mut net.link(i), 1.0)
            .expect("regulation");
        net.drain(&mut feds, |_, _| {});
    }
    for fed in feds.iter_mut() {
        fed.enable_time_constrained().expect("constrained");
    }
    net.drain(&mut feds, |_, _| {});
    for f in feds.iter_mut() {
        while f.poll_callback().is_some() {}
    }
    let envelopes_before = net.envelopes;
    let start = Instant::now();
    let mut grants = 0u64;
    for step in 1..=steps {
        for fed in feds.iter_mut() {
            if ner {
                fed.next_message_request(step as f64, false).expect("NER");
            } else {
                fed.time_advance_request(step as f64, false).expect("TAR");
            }
        }
        net.drain(&mut feds, |_, _| {});
        for f in feds.iter_mut() {
            while let Some(cb) = f.poll_callback() {
                if let Callback::TimeAdvanceGrant { .. } = cb {
                    grants += 1;
                }
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    assert_eq!(grants, n as u64 * steps as u64, "every request was granted");
    println!(
        "{n} federates, {steps} lock-step {}s:  {grants} grants in {secs:.3} s = {:.0} grants/s in total ({:.0} per federate), {:.1} envelopes per grant",
        if ner { "NER" } else { "TAR" },
        grants as f64 / secs,
        grants as f64 / secs / n as f64,
        (net.envelopes - envelopes_before) as f64 / grants as f64
    );
}
