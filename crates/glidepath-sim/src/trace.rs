//! The simulator's event trace: the last events of a run, kept cheaply and written
//! out only when a run fails or `--verbose` asks for every event.

use std::collections::VecDeque;
use std::fmt::Write as _;

use glidepath_core::{Body, Callback, Envelope};

/// How many events a failure report shows.
const TRACE_EVENTS: usize = 60;

/// A violated guarantee found by one of the protocol simulators (`flow`, `bus`,
/// `bus-repair`), with the command that replays its seed and the last events.
#[derive(Clone, Debug)]
pub struct ProtocolFailure {
    /// Which simulator: `flow`, `bus` or `bus-repair`.
    pub simulator: &'static str,
    pub seed: u64,
    pub message: String,
    pub replay: String,
    pub trace: Vec<String>,
}

impl std::fmt::Display for ProtocolFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write_failure(
            f,
            format_args!(
                "{} seed {} failed: {}",
                self.simulator, self.seed, self.message
            ),
            format_args!("{}", self.replay),
            &self.trace,
        )
    }
}

/// Writes a failed seed's report: what failed, the command that replays it, and the
/// last events (every simulator's failure prints this way).
pub(crate) fn write_failure(
    f: &mut std::fmt::Formatter<'_>,
    failed: std::fmt::Arguments<'_>,
    replay: std::fmt::Arguments<'_>,
    trace: &[String],
) -> std::fmt::Result {
    writeln!(f, "{failed}")?;
    writeln!(f, "replay: {replay}")?;
    writeln!(f, "last events:")?;
    for t in trace {
        writeln!(f, "  {t}")?;
    }
    Ok(())
}

/// One traced event, kept as data: formatting every event of a long run would cost
/// more than running it.
pub(crate) enum TraceEvent {
    Deliver { to: usize, envelope: Envelope },
    Callback { node: usize, callback: Callback },
    Note(String),
}

pub(crate) struct Trace {
    events: VecDeque<(u64, TraceEvent)>,
    verbose: bool,
}

impl Trace {
    pub(crate) fn new(verbose: bool) -> Trace {
        Trace {
            events: VecDeque::with_capacity(TRACE_EVENTS + 1),
            verbose,
        }
    }

    pub(crate) fn push(&mut self, now: u64, event: TraceEvent) {
        if self.verbose {
            println!("[{now:>12}ns] {}", render(&event));
        }
        self.events.push_back((now, event));
        if self.events.len() > TRACE_EVENTS {
            self.events.pop_front();
        }
    }

    /// The kept events, oldest first, as a failure report shows them.
    pub(crate) fn lines(&self) -> Vec<String> {
        self.events
            .iter()
            .map(|(at, e)| format!("[{at:>12}ns] {}", render(e)))
            .collect()
    }
}

fn render(event: &TraceEvent) -> String {
    match event {
        TraceEvent::Deliver { to, envelope } => format!(
            "deliver to {to}: from {} seq {} {:?}",
            envelope.sender,
            envelope.seq,
            short(envelope)
        ),
        TraceEvent::Callback { node, callback } => format!("{node} <- {}", short_cb(callback)),
        TraceEvent::Note(s) => s.clone(),
    }
}

fn short(env: &Envelope) -> String {
    let mut s = String::new();
    match &env.body {
        Body::TimeStatus(st) => {
            let _ = write!(
                s,
                "status {:?} lt {} promise {} {:?} last_tso {}",
                st.regulation, st.logical_time, st.promise, st.advance, st.last_tso_seq
            );
        }
        b => {
            let d = format!("{b:?}");
            s.push_str(cut(&d, 120));
        }
    }
    s
}

fn short_cb(cb: &Callback) -> String {
    let d = format!("{cb:?}");
    cut(&d, 160).to_string()
}

/// At most `max` bytes of `s`, cut at a character boundary.
fn cut(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}
