//! Values shared by threads: a [`Locked`] value stands where a `Cell` or a `RefCell` would in
//! code used from one thread (a forge client's rate-limit state, counters and caches serving
//! a run's parallel reads, the tick pool's job queue, the secrets to mask), and a [`Gate`]
//! bounds how many requests are under way at once. A lock poisoned by a panicking thread is
//! used as it is, everywhere, in this one place.

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// A value behind a mutex, with the calls of `Cell` (`get`, `set`) and `RefCell` (`borrow`,
/// to read or change it). A lock poisoned by a panicking thread is used as it is.
#[derive(Debug, Default)]
pub struct Locked<T>(Mutex<T>);

impl<T> Locked<T> {
    pub const fn new(value: T) -> Self {
        Locked(Mutex::new(value))
    }

    /// The value, to read or change, locked until the guard is dropped.
    pub fn borrow(&self) -> MutexGuard<'_, T> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn set(&self, value: T) {
        *self.borrow() = value;
    }

    /// Changes the value in one locked step (a counter shared by threads).
    pub fn update(&self, f: impl FnOnce(&mut T)) {
        f(&mut self.borrow());
    }
}

impl<T: Copy> Locked<T> {
    pub fn get(&self) -> T {
        *self.borrow()
    }
}

/// A counting gate: at most `size` holders of [`Gate::enter`]'s guard at once; the others wait.
#[derive(Debug)]
pub(crate) struct Gate {
    free: Mutex<usize>,
    freed: Condvar,
}

/// A place taken in a [`Gate`], given back when dropped.
#[derive(Debug)]
pub(crate) struct Entered<'a>(&'a Gate);

impl Gate {
    pub(crate) fn new(size: usize) -> Self {
        Gate {
            free: Mutex::new(size.max(1)),
            freed: Condvar::new(),
        }
    }

    /// Takes a place, waiting for one to be given back when all are taken.
    pub(crate) fn enter(&self) -> Entered<'_> {
        let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        while *free == 0 {
            free = self
                .freed
                .wait(free)
                .unwrap_or_else(PoisonError::into_inner);
        }
        *free -= 1;
        Entered(self)
    }
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        *self.0.free.lock().unwrap_or_else(PoisonError::into_inner) += 1;
        self.0.freed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gate_lets_no_more_than_its_size_through_at_once() {
        let gate = Gate::new(3);
        let (inside, most) = (Locked::new(0_usize), Locked::new(0_usize));
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    for _ in 0..50 {
                        let _place = gate.enter();
                        inside.update(|n| *n += 1);
                        let now = inside.get();
                        most.update(|m| *m = (*m).max(now));
                        std::thread::yield_now();
                        inside.update(|n| *n -= 1);
                    }
                });
            }
        });
        assert!(most.get() <= 3, "{}", most.get());
        assert_eq!(inside.get(), 0);
    }

    #[test]
    fn counts_from_many_threads_add_up() {
        let n = Locked::new(0_u64);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..1000 {
                        n.update(|n| *n += 1);
                    }
                });
            }
        });
        assert_eq!(n.get(), 4000);
    }
}
