//! How fast the time management core alone grants time advances: N federates, all
//! regulating (lookahead 1) and constrained, advance in lock-step inside one thread
//! with an instant in-memory network, so no thread hand-off is measured.
//!
//! `cargo run --release -p glidepath-sim --example core_timeadv -- [FEDERATES] [STEPS] [tar|ner]`

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;
use std::time::Instant;

use glidepath_core::{
    Callback, Envelope, ExecReply, ExecRequest, Executive, FederateHandle, FederationId, Link,
    LocalRti, Output, RtiError, Topic,
};
use glidepath_sim::sim_fom;

#[derive(Default)]
struct Net {
    subs: BTreeMap<(FederationId, Topic), BTreeSet<usize>>,
    inbox: Vec<VecDeque<Envelope>>,
    exec_seq: u64,
    envelopes: u64,
    spare: Vec<Output>,
}

struct L<'a> {
    me: usize,
    net: &'a mut Net,
    exec: &'a mut Executive,
}

impl L<'_> {
    fn send(&mut self, from: usize, fed: FederationId, topic: Topic, env: Envelope) {
        if let Some(s) = self.net.subs.get(&(fed, topic)) {
            for &to in s {
                if to != from {
                    self.net.inbox[to].push_back(env.clone());
                    self.net.envelopes += 1;
                }
            }
        }
    }
}

impl L<'_> {
    /// Carries out what a federate queued, in order.
    fn carry_out(&mut self, queued: &mut Vec<Output>) {
        for output in queued.drain(..) {
            match output {
                Output::Publish {
                    federation,
                    topic,
                    envelope,
                } => {
                    let me = self.me;
                    self.send(me, federation, topic, envelope);
                }
                Output::Subscribe { federation, topic } => {
                    self.net
                        .subs
                        .entry((federation, topic))
                        .or_default()
                        .insert(self.me);
                }
                Output::Unsubscribe { federation, topic } => {
                    if let Some(s) = self.net.subs.get_mut(&(federation, topic)) {
                        s.remove(&self.me);
                    }
                }
            }
        }
    }

    /// Carries out what `fed` queued, reusing the network's buffer.
    fn flush(&mut self, fed: &mut LocalRti) -> bool {
        let mut queued = std::mem::take(&mut self.net.spare);
        fed.take_outputs(&mut queued);
        let any = !queued.is_empty();
        self.carry_out(&mut queued);
        self.net.spare = queued;
        any
    }
}

impl Link for L<'_> {
    fn request(
        &mut self,
        queued: &mut Vec<Output>,
        req: ExecRequest,
    ) -> Result<ExecReply, RtiError> {
        self.carry_out(queued);
        let (reply, fed, notes) = self.exec.handle(req);
        if let Some(fed) = fed {
            for n in notes {
                self.net.exec_seq += 1;
                let env = Envelope {
                    sender: FederateHandle::EXECUTIVE,
                    seq: self.net.exec_seq,
                    publish_time_ns: 0,
                    body: glidepath_core::Body::Exec(n),
                };
                self.send(usize::MAX, fed, Topic::Federation, env);
            }
        }
        Ok(reply)
    }
}

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
    let mut exec = Executive::new();
    exec.handle(ExecRequest::Create {
        name: "bench".into(),
        fom: Arc::new(sim_fom()),
    });
    let mut net = Net {
        inbox: vec![VecDeque::new(); n],
        ..Net::default()
    };
    let mut feds: Vec<LocalRti> = Vec::new();
    for i in 0..n {
        let mut l = L {
            me: i,
            net: &mut net,
            exec: &mut exec,
        };
        let mut fed =
            LocalRti::join(&mut l, "bench", Some(&format!("f{i}")), "bench").expect("join");
        l.flush(&mut fed);
        feds.push(fed);
    }
    let drain = |feds: &mut Vec<LocalRti>, net: &mut Net, exec: &mut Executive| loop {
        let mut moved = false;
        for (i, fed) in feds.iter_mut().enumerate() {
            moved |= L { me: i, net, exec }.flush(fed);
            while let Some(env) = net.inbox[i].pop_front() {
                fed.handle_envelope(env);
                L { me: i, net, exec }.flush(fed);
                moved = true;
            }
        }
        if !moved {
            break;
        }
    };
    for i in 0..n {
        let mut l = L {
            me: i,
            net: &mut net,
            exec: &mut exec,
        };
        feds[i]
            .enable_time_regulation(&mut l, 1.0)
            .expect("regulation");
        drain(&mut feds, &mut net, &mut exec);
    }
    for fed in feds.iter_mut() {
        fed.enable_time_constrained().expect("constrained");
    }
    drain(&mut feds, &mut net, &mut exec);
    for f in feds.iter_mut() {
        while f.poll_callback().is_some() {}
    }
    let envelopes_before = net.envelopes;
    let start = Instant::now();
    let mut grants = 0u64;
    for step in 1..=steps {
        for (i, fed) in feds.iter_mut().enumerate() {
            let mut l = L {
                me: i,
                net: &mut net,
                exec: &mut exec,
            };
            if ner {
                fed.next_message_request(step as f64, false).expect("NER");
            } else {
                fed.time_advance_request(step as f64, false).expect("TAR");
            }
            l.flush(fed);
        }
        drain(&mut feds, &mut net, &mut exec);
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
