//! The status page written at the end of every run (`report.html_path`, rendered by
//! [`crate::view::status_page`]; the metrics file is [`crate::tick::metrics`]). Rendering is pure; writing
//! is atomic (a temporary file renamed into place), so a reader never sees half a page.

use std::path::Path;

use anyhow::{Context, Result};

use crate::model::Instant;
use crate::model::watch::Watch;
use crate::store::OutboxRow;

/// The status page of what the store holds (see [`crate::view::status_page`]).
pub fn html(
    watches: &[Watch],
    branches: &[crate::model::branch::BranchWatch],
    undelivered: &[OutboxRow],
    history: &std::collections::BTreeMap<i64, Vec<crate::model::watch::HistoryEntry>>,
    web: &crate::model::web::WebRoots,
    now: Instant,
) -> String {
    crate::view::status_page::render(&crate::view::status_page::PageInput {
        watches,
        branches,
        undelivered,
        history,
        web,
        now,
    })
}

/// Writes `text` to `path` atomically, with file `mode` (a missing folder is made owner-only).
pub fn write_atomically(path: &Path, text: &str, mode: u32) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        crate::private::create_dir_all(dir)
            .with_context(|| format!("cannot create `{}`", dir.display()))?;
    }
    let tmp = path.with_extension("tmp");
    let text = crate::secrets::masked(text);
    crate::private::write(&tmp, text.as_bytes(), mode)
        .with_context(|| format!("cannot write `{}`", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write `{}`", path.display()))
}

/// Writes the page of `watches` (every watch the store holds) if the config asks for one.
pub fn write(
    config: &crate::config::Config,
    store: &crate::store::Store,
    watches: &[Watch],
    now: Instant,
) -> Result<()> {
    let Some(path) = &config.report.html_path else {
        return Ok(());
    };
    write_atomically(
        path,
        &text_of(config, store, watches, now)?,
        config.report.file_mode(),
    )
}

/// The status page of what the store holds at `now`: the file [`write`] writes, and what the
/// daemon serves at `/`.
pub fn text(
    config: &crate::config::Config,
    store: &crate::store::Store,
    now: Instant,
) -> Result<String> {
    text_of(config, store, &store.watches()?, now)
}

/// The status page of `watches` (every watch the store holds) at `now`.
fn text_of(
    config: &crate::config::Config,
    store: &crate::store::Store,
    watches: &[Watch],
    now: Instant,
) -> Result<String> {
    let undelivered = store.outbox_problems()?;
    let prs: Vec<&crate::model::PrRef> = watches.iter().map(|w| &w.pr).collect();
    let history = watches
        .iter()
        .map(|w| w.id)
        .zip(store.recent_history(&prs, crate::view::status_page::LAST_ACTIONS)?)
        .collect();
    let web = config.web_roots();
    let branches = store.branch_watches()?;
    Ok(html(watches, &branches, &undelivered, &history, &web, now))
}
