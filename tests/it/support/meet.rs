//! What a fake forge does to a request beyond answering it, for tests that observe how a
//! client's requests meet, without timing them: a hold ([`Meetings::hold_until_together`])
//! keeps each request of a kind waiting until that many of them are there at once, and counts
//! the most that ever were; a hook ([`Meetings::after`]) changes the world once, when the first
//! request of a kind comes (before it is answered), as the forge would change under a client
//! between two of its requests.
//!
//! A client that sends those requests one after another never has two waiting: each waits
//! out the hold's bound ([`HOLD_BOUND`]) alone, and the count says 1.
#![allow(dead_code)] // A support API: each test binary uses a different part of it.

use std::sync::{Condvar, Mutex};
use std::time::Duration;

use super::fake_server::{LoggedRequest, lock};

/// The longest a held request waits for the others.
pub const HOLD_BOUND: Duration = Duration::from_secs(5);

/// A world change waiting for its request.
type Hook<W> = Box<dyn FnOnce(&mut W) + Send>;

/// The holds and hooks of one fake forge over a world `W`.
pub struct Meetings<W> {
    holds: Mutex<Holds>,
    met: Condvar,
    hooks: Mutex<Vec<(String, Hook<W>)>>,
}

/// Requests held by pattern: how many must be there together, how many came, how many wait
/// now, and the most that waited at once.
#[derive(Debug, Default)]
struct Holds {
    by: Vec<Hold>,
}

#[derive(Debug)]
struct Hold {
    pattern: String,
    together: usize,
    came: usize,
    waiting: usize,
    most: usize,
}

impl<W> Default for Meetings<W> {
    fn default() -> Self {
        Meetings {
            holds: Mutex::new(Holds::default()),
            met: Condvar::new(),
            hooks: Mutex::new(Vec::new()),
        }
    }
}

impl<W> std::fmt::Debug for Meetings<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Meetings")
            .field("holds", &*lock(&self.holds))
            .field("hooks", &lock(&self.hooks).len())
            .finish_non_exhaustive()
    }
}

impl<W> Meetings<W> {
    /// Each request matching `pattern` (see [`super::fake_server::RequestLog::count`]) waits
    /// until `together` of them have come, or [`HOLD_BOUND`].
    pub fn hold_until_together(&self, pattern: &str, together: usize) {
        lock(&self.holds).by.push(Hold {
            pattern: pattern.to_owned(),
            together,
            came: 0,
            waiting: 0,
            most: 0,
        });
    }

    /// The most requests matching the held `pattern` that ever waited at once.
    pub fn most_together(&self, pattern: &str) -> usize {
        lock(&self.holds)
            .by
            .iter()
            .find(|h| h.pattern == pattern)
            .map_or(0, |h| h.most)
    }

    /// `change` is made to the world when the first request matching `pattern` comes.
    pub fn after(&self, pattern: &str, change: impl FnOnce(&mut W) + Send + 'static) {
        lock(&self.hooks).push((pattern.to_owned(), Box::new(change)));
    }

    /// The patterns of the hooks no request has fired yet.
    pub fn unfired(&self) -> Vec<String> {
        lock(&self.hooks).iter().map(|(p, _)| p.clone()).collect()
    }

    /// Runs the hooks `entry` fires on `w`, and waits out its hold.
    pub fn meet<K>(&self, entry: &LoggedRequest<K>, w: &Mutex<W>) {
        let fired: Vec<Hook<W>> = {
            let mut hooks = lock(&self.hooks);
            let (fire, keep) = std::mem::take(&mut *hooks)
                .into_iter()
                .partition(|(p, _)| entry.matches(p));
            *hooks = keep;
            fire.into_iter().map(|(_, h)| h).collect()
        };
        for hook in fired {
            hook(&mut lock(w));
        }
        let mut holds = lock(&self.holds);
        let Some(i) = holds.by.iter().position(|h| entry.matches(&h.pattern)) else {
            return;
        };
        let hold = &mut holds.by[i];
        hold.came += 1;
        hold.waiting += 1;
        hold.most = hold.most.max(hold.waiting);
        self.met.notify_all();
        let (mut holds, _) = self
            .met
            .wait_timeout_while(holds, HOLD_BOUND, |h| h.by[i].came < h.by[i].together)
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        holds.by[i].waiting -= 1;
    }
}
