//! A small pool of threads for a run's forge reads: jobs go in, answers come out in the order
//! they finish. The pool owns no state of its own; a job carries what it needs (its forge
//! client), and the thread that sends the jobs keeps the database and does everything else.

use std::sync::mpsc::{Receiver, Sender, channel};

use crate::locked::Locked;

/// How many forge reads of one run may be under way at once, on both forges: eight, as many
/// requests as one forge client lets through at once ([`crate::forge::http::MAX_IN_FLIGHT`]).
/// GitHub allows at most 100 concurrent requests per user and asks for few; its own client's
/// throttling sends up to ten reads at once, and writes one at a time (a chunk's armings are
/// one request, sent one chunk's at a time). GitLab documents no bound on concurrency, only
/// requests per minute. Measured side by side at 1,000 PRs and 50 ms of latency, a first look
/// took 13.5 s with four and 7.9 s with eight; each read holds its answer while it is parsed,
/// so the peak memory grew by about 3 MiB (the README's Performance section has the figures).
pub const READS_IN_FLIGHT: usize = 8;

/// The sending side of a running pool.
#[derive(Debug)]
pub struct Pool<J, A> {
    jobs: Option<Sender<J>>,
    answers: Receiver<A>,
    in_flight: usize,
}

impl<J, A> Pool<J, A> {
    /// Hands `job` to the next free thread.
    pub fn send(&mut self, job: J) {
        if let Some(jobs) = &self.jobs
            && jobs.send(job).is_ok()
        {
            self.in_flight += 1;
        }
    }

    /// Jobs sent whose answer has not been taken yet.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// The next finished job's answer, waiting for it; `None` when nothing is under way.
    pub fn recv(&mut self) -> Option<A> {
        if self.in_flight == 0 {
            return None;
        }
        let answer = self.answers.recv().ok()?;
        self.in_flight -= 1;
        Some(answer)
    }
}

/// Runs `body` with a pool of `threads` threads, each running `work` on the jobs `body`
/// sends. The threads end when `body` returns (a job under way is finished and its answer
/// dropped).
pub fn with_pool<J, A, R>(
    threads: usize,
    work: impl Fn(J) -> A + Sync,
    body: impl FnOnce(&mut Pool<J, A>) -> R,
) -> R
where
    J: Send,
    A: Send,
{
    let (job_tx, job_rx) = channel::<J>();
    let (answer_tx, answer_rx) = channel::<A>();
    let job_rx = Locked::new(job_rx);
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            let (job_rx, answer_tx, work) = (&job_rx, answer_tx.clone(), &work);
            scope.spawn(move || {
                loop {
                    let job = job_rx.borrow().recv();
                    let Ok(job) = job else { break };
                    if answer_tx.send(work(job)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(answer_tx);
        let mut pool = Pool {
            jobs: Some(job_tx),
            answers: answer_rx,
            in_flight: 0,
        };
        let out = body(&mut pool);
        // Closing the job channel ends the threads.
        pool.jobs = None;
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_come_back_for_every_job_sent_whatever_the_order() {
        let mut got = with_pool(
            3,
            |n: u64| n * 2,
            |pool| {
                for n in 1..=10 {
                    pool.send(n);
                }
                let mut got = Vec::new();
                while let Some(a) = pool.recv() {
                    got.push(a);
                }
                assert_eq!(pool.in_flight(), 0);
                got
            },
        );
        got.sort_unstable();
        assert_eq!(got, (1..=10).map(|n| n * 2).collect::<Vec<_>>());
    }

    /// A run's pool has eight reads under way at once: each job waits until eight are running
    /// together (or a bound no passing run reaches), and the most that ran at once is eight.
    #[test]
    fn eight_reads_are_under_way_at_once() {
        use std::sync::{Condvar, Mutex, PoisonError};
        use std::time::Duration;
        let running = Mutex::new((0_usize, 0_usize));
        let changed = Condvar::new();
        let work = |_: usize| {
            let mut counts = running.lock().unwrap_or_else(PoisonError::into_inner);
            counts.0 += 1;
            counts.1 = counts.1.max(counts.0);
            changed.notify_all();
            let (mut counts, _) = changed
                .wait_timeout_while(counts, Duration::from_secs(5), |c| c.1 < 8)
                .unwrap_or_else(PoisonError::into_inner);
            counts.0 -= 1;
        };
        with_pool(READS_IN_FLIGHT, work, |pool| {
            for n in 0..2 * READS_IN_FLIGHT {
                pool.send(n);
            }
            while pool.recv().is_some() {}
        });
        let most = running.lock().unwrap_or_else(PoisonError::into_inner).1;
        assert_eq!(most, 8);
    }
}
