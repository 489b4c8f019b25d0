//! `pr-monitor check PR`: reads the forge, keeps `check`'s own seen state (the database, a
//! JSON state file, or none), prints the focused payload ([`crate::core::focus`]), and in watch mode
//! polls until something is actionable or the PR is ready, merged or closed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant as Clock};

use anyhow::{Context, Result};
use serde_json::{Value, json};

use crate::app::{App, ClientFailure};
use crate::cli::CheckArgs;
use crate::core::checks;
use crate::core::focus::{Criteria, Marks, Payload, Seen, apply_marks, human, payload};
use crate::forge::Forge;
use crate::model::issue_event::IssueEvent;
use crate::model::plan::SeenSource;
use crate::model::stamp_or_empty as stamp;
use crate::model::{Instant, PrRef};

/// Where the seen state lives.
enum State {
    Db,
    File(PathBuf),
    None,
}

fn load_file(path: &Path) -> Result<Seen> {
    if !path.exists() {
        return Ok(Seen::default());
    }
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the state file `{}`", path.display()))?;
    let v: Value = serde_json::from_str(&text)
        .with_context(|| format!("the state file `{}` is not JSON", path.display()))?;
    let mut seen = Seen {
        head: v["headSha"].as_str().map(str::to_owned),
        ..Seen::default()
    };
    for (source, ids) in v["seen"].as_object().into_iter().flatten() {
        for (id, updated) in ids.as_object().into_iter().flatten() {
            seen.items.insert(
                (source.clone(), id.clone()),
                updated.as_str().unwrap_or("").to_owned(),
            );
        }
    }
    Ok(seen)
}

fn save_file(path: &Path, seen: &Seen, now: Instant) -> Result<()> {
    let mut by_source: BTreeMap<&str, BTreeMap<&str, &str>> = BTreeMap::new();
    for ((source, id), updated) in &seen.items {
        by_source.entry(source).or_default().insert(id, updated);
    }
    let v = json!({ "seen": by_source, "headSha": seen.head, "lastPolledAt": stamp(Some(now)) });
    let tmp = path.with_extension("tmp");
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&tmp, serde_json::to_string_pretty(&v)?)?;
    std::fs::rename(&tmp, path)
        .with_context(|| format!("cannot write the state file `{}`", path.display()))?;
    Ok(())
}

fn load(app: &App, state: &State, pr: &PrRef) -> Result<Seen> {
    match state {
        State::None => Ok(Seen::default()),
        State::File(p) => load_file(p),
        State::Db => {
            let mut seen = Seen::default();
            for ((source, id), updated) in app.store.check_seen(pr)? {
                if source == SeenSource::Head.as_str() {
                    seen.head = Some(updated);
                } else {
                    seen.items.insert((source, id), updated);
                }
            }
            Ok(seen)
        }
    }
}

fn save(
    app: &mut App,
    state: &State,
    pr: &PrRef,
    seen: &mut Seen,
    marks: &[crate::model::plan::SeenMark],
) -> Result<()> {
    apply_marks(seen, marks);
    match state {
        State::None => Ok(()),
        State::File(p) => save_file(p, seen, app.now),
        State::Db => app.store.mark_check_seen(pr, marks),
    }
}

/// One poll: read with the owner's client, enrich, build the payload.
fn poll(
    app: &mut App,
    pr: &PrRef,
    seen: &Seen,
    criteria: &Criteria,
    full: bool,
) -> Result<(Payload, Marks)> {
    let forge = app
        .forges
        .shared(pr.forge, &app.config)
        .map_err(ClientFailure::Setup)?;
    poll_with(app, &*forge, pr, seen, criteria, full)
}

/// The focused payload of `pr` read through `forge` (an agent's own client), with no seen
/// state: everything counts as new and nothing is remembered of the look. The criteria are
/// the PR's policy's.
pub fn focused(app: &mut App, forge: &dyn Forge, pr: &PrRef) -> Result<Value> {
    let policy = app.policy_for_pr(app.store.watch(pr)?.as_ref());
    let criteria = Criteria {
        required_labels: policy.required_labels,
        required_approvals_from: policy.required_approvals_from,
    };
    let (payload, _) = poll_with(app, forge, pr, &Seen::default(), &criteria, false)?;
    Ok(payload.to_json()?)
}

/// One poll through `forge`: read, enrich, build the payload.
fn poll_with(
    app: &mut App,
    forge: &dyn Forge,
    pr: &PrRef,
    seen: &Seen,
    criteria: &Criteria,
    full: bool,
) -> Result<(Payload, Marks)> {
    let mut snap = crate::app::read_snapshot(forge, app.snapshot_request(pr)?)?;
    let watch = app.store.watch(pr)?;
    let policy = app.policy_for_pr(watch.as_ref());
    crate::tick::detect::failed_logs(
        forge,
        &mut app.store,
        &mut snap,
        &policy,
        true,
        &crate::tick::detect::Notes::new(),
    );
    // The checks' verdict as the tick gives it, waiting counted from the same instant.
    let unwatched = crate::model::watch::WatchStatus::default();
    let before = watch.as_ref().map_or(&unwatched, |w| &w.status);
    let judged = checks::judged(
        &snap.checks,
        policy.checks == crate::config::ChecksScope::Required,
    );
    let verdict = checks::verdict(
        &judged,
        crate::core::decide::waiting_since(before, &snap, app.now),
        app.now,
        policy.no_checks_grace_sec,
        policy.pending_timeout_sec,
    );
    let conflict_files = crate::tick::detect::conflict_files(forge, &snap);
    // The PR's events are a raw list only: read for `--full-payload` alone.
    let events = full.then(|| events(forge, pr));
    Ok(payload(
        &snap,
        seen,
        criteria,
        (&verdict, conflict_files.as_deref()),
        events.as_deref(),
    ))
}

/// The PR's events for `--full-payload`. The contract gives the payload no place to say a list
/// is incomplete, so stderr says it: a read that failed leaves `issue_events` empty, a history
/// cut short (GitHub's REST budget running low) leaves its oldest part.
fn events(forge: &dyn Forge, pr: &PrRef) -> Vec<IssueEvent> {
    match forge.issue_events(pr) {
        Ok(read) => {
            if let Some(cut) = &read.cut {
                tracing::warn!(pr = %pr, "issue_events is cut short: {cut}");
            }
            read.events
        }
        Err(e) => {
            tracing::warn!(pr = %pr, error = %e, "the PR's events could not be read: issue_events is empty");
            Vec::new()
        }
    }
}

/// `check PR [--full-payload] [--state-file P | --no-state] [--watch …]`.
pub fn command(app: &mut App, args: &CheckArgs) -> Result<u8> {
    let pr = app.pr(&args.pr)?;
    let state = match (&args.state_file, args.no_state) {
        (_, true) => State::None,
        (Some(p), false) => State::File(p.clone()),
        (None, false) => State::Db,
    };
    let policy = app.policy_for_pr(app.store.watch(&pr)?.as_ref());
    let mut criteria = Criteria {
        required_labels: policy.required_labels.clone(),
        required_approvals_from: policy.required_approvals_from.clone(),
    };
    criteria
        .required_labels
        .extend(args.require_labels.iter().cloned());
    criteria
        .required_approvals_from
        .extend(args.require_approvals_from.iter().cloned());
    let mut seen = load(app, &state, &pr)?;
    if !args.watch {
        // Nothing read (the token refused, the forge unreachable) exits 3, as every command's
        // error does ([`crate::app::nothing_read_if_cut_off`]).
        let (p, marks) = poll(app, &pr, &seen, &criteria, args.full_payload)?;
        save(app, &state, &pr, &mut seen, &marks)?;
        // Comment and review bodies are printed as written, save for the secrets we hold.
        if app.json {
            crate::outln!("{}", crate::secrets::mask(&p.to_json()?.to_string()))?;
        } else {
            crate::out!("{}", crate::secrets::mask(&human(&p)))?;
        }
        return Ok(0);
    }
    watch(app, args, (&pr, &state), &mut seen, &criteria)
}

/// `check --watch`: one NDJSON line a tick until something is actionable, the PR is ready,
/// merged or closed (exit 0), a read fails (2), or `--max-duration` passes (124).
fn watch(
    app: &mut App,
    args: &CheckArgs,
    (pr, state): (&PrRef, &State),
    seen: &mut Seen,
    criteria: &Criteria,
) -> Result<u8> {
    let started = Clock::now();
    let limit = Duration::from_secs(args.max_duration);
    let mut tick = 0u64;
    loop {
        tick += 1;
        match poll(app, pr, seen, criteria, args.full_payload) {
            Ok((mut p, marks)) => {
                save(app, state, pr, seen, &marks)?;
                p.tick = Some(tick);
                crate::outln!("{}", crate::secrets::mask(&p.to_json()?.to_string()))?;
                if let Some(last) = final_line(&p, tick) {
                    crate::outln!("{last}")?;
                    return Ok(0);
                }
            }
            Err(e) => {
                let printed = crate::outln!(
                    "{}",
                    json!({"final": true, "outcome": "error", "tick": tick, "error": crate::secrets::mask(&format!("{e:#}"))})
                );
                return crate::stdout::keep_code(2, printed);
            }
        }
        let interval = Duration::from_secs(args.interval);
        if started.elapsed() + interval > limit {
            let printed = crate::outln!(
                "{}",
                json!({"final": true, "outcome": "timeout", "tick": tick, "elapsedSec": started.elapsed().as_secs()})
            );
            return crate::stdout::keep_code(124, printed);
        }
        std::thread::sleep(interval);
        if !app.clock_fixed {
            app.now = crate::clock::wall_now();
        }
    }
}

/// The watch's last line after this tick's payload, when it ends with it: something is
/// actionable; or the PR is merged or closed (it will not change again) or ready (it met the
/// caller's criteria), said at once, not at timeout.
fn final_line(p: &Payload, tick: u64) -> Option<Value> {
    if p.has_actionable {
        return Some(
            json!({"final": true, "outcome": "actionable", "tick": tick, "actionable": p.actionable, "pr": p.pr.url}),
        );
    }
    let outcome = match p.pr.state {
        state @ ("merged" | "closed") => state,
        _ if p.ready => "ready",
        _ => return None,
    };
    Some(json!({"final": true, "outcome": outcome, "tick": tick, "pr": p.pr.url}))
}
