//! How long a forge may hold a run: each request ends within the forge's `timeout_sec`, and a
//! client stops asking its forge for the rest of the run once two requests have timed out (a
//! hanging forge) or once the run has spent `run_budget_sec` on it. Its remaining PRs then fail
//! at once, as unreachable, and the run goes on with the other forge, the outbox, the page and
//! the metrics. The longest a run can spend on one forge is therefore its budget plus the wait
//! under way when the budget ran out: one request's timeout, or a rate-limit wait (at most
//! 60 s, see [`crate::forge::wait`]).

use std::time::{Duration, Instant};

use crate::forge::ForgeError;
use crate::locked::Locked;

/// A request's timeout when the config names none.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// A run's time on one forge when the config names none.
pub const DEFAULT_RUN_BUDGET: Duration = Duration::from_secs(120);
/// Requests that timed out after which a forge is not asked again this run.
pub const HANGS_TO_GIVE_UP: u32 = 2;

/// A forge's limits: one request's timeout, and one run's time on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub timeout: Duration,
    pub run_budget: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            timeout: DEFAULT_TIMEOUT,
            run_budget: DEFAULT_RUN_BUDGET,
        }
    }
}

impl Limits {
    /// From the config's `timeout_sec` and `run_budget_sec` (each at least a second).
    pub fn from_secs(timeout_sec: Option<u64>, run_budget_sec: Option<u64>) -> Self {
        let secs = |v: Option<u64>, default: Duration| {
            v.map_or(default, |s| Duration::from_secs(s.max(1)))
        };
        Limits {
            timeout: secs(timeout_sec, DEFAULT_TIMEOUT),
            run_budget: secs(run_budget_sec, DEFAULT_RUN_BUDGET),
        }
    }
}

/// Why a forge is not asked again this run, or `None` while it may be: `spent` is the time
/// since the client was made, `hangs` the requests that timed out.
pub fn gave_up(limits: Limits, spent: Duration, hangs: u32) -> Option<String> {
    if hangs >= HANGS_TO_GIVE_UP {
        return Some(format!(
            "it did not answer within {} s, {hangs} times this run: not asked again until the next run",
            limits.timeout.as_secs()
        ));
    }
    (spent >= limits.run_budget).then(|| {
        format!(
            "this run's {} s for it are spent: not asked again until the next run",
            limits.run_budget.as_secs()
        )
    })
}

/// One client's clock against its limits.
#[derive(Debug)]
pub struct Deadline {
    limits: Limits,
    started: Instant,
    hangs: Locked<u32>,
}

impl Deadline {
    pub fn new(limits: Limits) -> Self {
        Deadline {
            limits,
            started: Instant::now(),
            hangs: Locked::new(0),
        }
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The error a request to `host` gets instead of being sent, once the forge is given up.
    pub fn refusal(&self, host: &str) -> Option<ForgeError> {
        gave_up(self.limits, self.started.elapsed(), self.hangs.get())
            .map(|why| ForgeError::Unreachable(format!("`{host}`: {why}")))
    }

    /// A request timed out.
    pub fn note_hang(&self) {
        self.hangs.update(|n| *n += 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forge_is_given_up_after_two_hangs_or_its_budget() {
        let limits = Limits::from_secs(Some(5), Some(60));
        let s = Duration::from_secs;
        let cases = [
            (s(0), 0, None),
            (s(59), 1, None),
            (s(10), 2, Some("did not answer within 5 s, 2 times")),
            (s(60), 0, Some("this run's 60 s for it are spent")),
            (s(600), 3, Some("did not answer within 5 s, 3 times")),
        ];
        for (spent, hangs, want) in cases {
            let got = gave_up(limits, spent, hangs);
            match want {
                None => assert_eq!(got, None, "{spent:?} {hangs}"),
                Some(want) => assert!(
                    got.as_deref().is_some_and(|g| g.contains(want)),
                    "{spent:?} {hangs}: {got:?}"
                ),
            }
        }
        assert_eq!(Limits::from_secs(None, None), Limits::default());
        assert_eq!(Limits::from_secs(Some(0), None).timeout, s(1));
    }
}
