//! `run` on SIGTERM or SIGINT (a CronJob's pod being stopped, systemd stopping the unit, ^C):
//! a flag the tick reads between PRs, so the PR in hand is finished and recorded, the leases of
//! the PRs not yet started are released for the next run, and the outbox and reports are
//! written as after any run. The signals are caught by a small runtime on a thread of its own
//! (the tick itself is synchronous); a second signal changes nothing.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::signal::unix::{SignalKind, signal};

/// A flag set once SIGTERM or SIGINT arrives; `None` when the handlers could not be installed
/// (the signals then end the process as they would anyway).
pub fn stop_flag() -> Option<Arc<AtomicBool>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .ok()?;
    // Installed now, before the run starts, so a signal that comes early is not missed.
    let (mut term, mut int) = runtime.block_on(async {
        Some((
            signal(SignalKind::terminate()).ok()?,
            signal(SignalKind::interrupt()).ok()?,
        ))
    })?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            runtime.block_on(async {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            });
            flag.store(true, Ordering::SeqCst);
            tracing::info!("stopping: finishing the PR in hand, releasing the rest");
        })
        .ok()?;
    Some(stop)
}
