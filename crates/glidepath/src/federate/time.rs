//! Time management on the [`Federate`] facade: regulation, constraint, lookahead,
//! the advance requests and the time queries. Times are given as `f64`, `i64` or
//! `LogicalTime` and converted to the federation's representation by the core.

use super::*;

impl Federate {
    /// Asks to become time-regulating with `lookahead`; enabled by the
    /// `time_regulation_enabled` callback.
    pub fn enable_time_regulation(&self, lookahead: impl IntoLogicalTime) -> Result<(), RtiError> {
        let lookahead = lookahead.into_time_value();
        self.shared()
            .call(|r, l| r.enable_time_regulation(l, lookahead))
    }
    /// Stops regulating.
    pub fn disable_time_regulation(&self) -> Result<(), RtiError> {
        self.shared().call(|r, l| r.disable_time_regulation(l))
    }
    /// Asks to become time-constrained; enabled by the `time_constrained_enabled` callback.
    pub fn enable_time_constrained(&self) -> Result<(), RtiError> {
        self.shared().call(|r, _| r.enable_time_constrained())
    }
    /// Stops being constrained; queued time-stamped messages arrive in receive order.
    pub fn disable_time_constrained(&self) -> Result<(), RtiError> {
        self.shared().call(|r, _| r.disable_time_constrained())
    }
    /// Changes the lookahead of a regulating federate.
    pub fn modify_lookahead(&self, lookahead: impl IntoLogicalTime) -> Result<(), RtiError> {
        let lookahead = lookahead.into_time_value();
        self.shared().call(|r, _| r.modify_lookahead(lookahead))
    }
    /// Time advance request (TAR): granted exactly at `time` once no earlier
    /// time-stamped message can arrive; messages up to and including `time` first.
    pub fn time_advance_request(&self, time: impl IntoLogicalTime) -> Result<(), RtiError> {
        self.shared()
            .call(|r, _| r.time_advance_request(time.into_time_value(), false))?;
        self.flush()
    }
    /// Time advance request available (TARA): like TAR, but granted when messages at
    /// `time` itself may still arrive; needed for progress with zero lookahead.
    pub fn time_advance_request_available(
        &self,
        time: impl IntoLogicalTime,
    ) -> Result<(), RtiError> {
        self.shared()
            .call(|r, _| r.time_advance_request(time.into_time_value(), true))?;
        self.flush()
    }
    /// Next message request (NER): granted at the earlier of `time` and the next
    /// time-stamped message, after delivering the messages at that time.
    pub fn next_message_request(&self, time: impl IntoLogicalTime) -> Result<(), RtiError> {
        self.shared()
            .call(|r, _| r.next_message_request(time.into_time_value(), false))?;
        self.flush()
    }
    /// Next message request available (NERA): NER that may grant while messages at
    /// the granted time can still arrive.
    pub fn next_message_request_available(
        &self,
        time: impl IntoLogicalTime,
    ) -> Result<(), RtiError> {
        self.shared()
            .call(|r, _| r.next_message_request(time.into_time_value(), true))?;
        self.flush()
    }
    /// Flush queue request (FQR): delivers every queued time-stamped message now and
    /// grants at the earliest of `time`, GALT and the first delivered time stamp.
    pub fn flush_queue_request(&self, time: impl IntoLogicalTime) -> Result<(), RtiError> {
        self.shared()
            .call(|r, _| r.flush_queue_request(time.into_time_value()))?;
        self.flush()
    }
    /// Greatest Available Logical Time, `None` when no other federate regulates.
    pub fn query_galt(&self) -> Option<LogicalTime> {
        self.shared().read(|r| r.query_galt())
    }
    /// Least Incoming Time Stamp, `None` when nothing can arrive.
    pub fn query_lits(&self) -> Option<LogicalTime> {
        self.shared().read(|r| r.query_lits())
    }
    /// The federate's logical time.
    pub fn query_logical_time(&self) -> LogicalTime {
        self.shared().read(|r| r.logical_time())
    }
    /// The federate's lookahead.
    pub fn query_lookahead(&self) -> LogicalTimeInterval {
        self.shared().read(|r| r.lookahead())
    }
    /// True when time regulation is enabled (not merely requested).
    pub fn is_time_regulating(&self) -> bool {
        self.shared().read(|r| r.is_regulating())
    }
    /// True when time constrained is enabled (not merely requested).
    pub fn is_time_constrained(&self) -> bool {
        self.shared().read(|r| r.is_constrained())
    }
    /// True while a time advance waits for its grant.
    pub fn is_time_advancing(&self) -> bool {
        self.shared().read(|r| r.is_advancing())
    }
}
