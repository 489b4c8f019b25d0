//! The status page written at the end of every run (`report.html_path`, rendered by
//! [`crate::view::status_page`]; the metrics file is [`crate::tick::metrics`]). Rendering is pure; writing
//! is atomic (a temporary file renamed into place), so a reader never sees half a page.
//!
//! The page is written as it is rendered, piece after piece, and never held whole, nor are its
//! watches: its head from every watch's standing (a few columns each), then the cards by need,
//! their watches and last actions loaded [`CHUNK`] at a time, then its foot; all from one
//! snapshot of the database. Each piece is masked as it goes out (a secret is masked within a
//! card; none spans the markup between two).

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};

use crate::model::Instant;
use crate::model::standing::{Placed, Tally};
use crate::store::Store;
use crate::view::status_page;

/// How many watches the page loads at a time.
const CHUNK: usize = 200;

/// Writes the file at `path` atomically, with file `mode` (a missing folder is made
/// owner-only): `write` writes its text to a temporary file, which then replaces `path`.
pub fn write_atomically_with(
    path: &Path,
    mode: u32,
    write: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        crate::private::create_dir_all(dir)
            .with_context(|| format!("cannot create `{}`", dir.display()))?;
    }
    let tmp = path.with_extension("tmp");
    crate::private::write_with(&tmp, mode, write)
        .with_context(|| format!("cannot write `{}`", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write `{}`", path.display()))
}

/// Writes `text` to `path` atomically, masked, with file `mode` (see
/// [`write_atomically_with`]).
pub fn write_atomically(path: &Path, text: &str, mode: u32) -> Result<()> {
    write_atomically_with(path, mode, |out| {
        Ok(out.write_all(crate::secrets::masked(text).as_bytes())?)
    })
}

/// Writes the page of `placed` (every watch's standing) if the config asks for one.
pub fn write(
    config: &crate::config::Config,
    store: &Store,
    placed: &[Placed],
    now: Instant,
) -> Result<()> {
    let Some(path) = &config.report.html_path else {
        return Ok(());
    };
    write_atomically_with(path, config.report.file_mode(), |out| {
        page(config, store, placed, now, CHUNK, out)
    })
}

/// The status page of what the store holds at `now`: the file [`write`] writes, and what the
/// daemon serves at `/`.
pub fn text(config: &crate::config::Config, store: &Store, now: Instant) -> Result<String> {
    let mut out = Vec::new();
    store.snapshot(|store| page(config, store, &store.standings()?, now, CHUNK, &mut out))?;
    Ok(String::from_utf8(out)?)
}

/// Writes the page of `placed` (every watch's standing, as [`Store::standings`] reads them)
/// to `out`, piece after piece, loading `chunk` watches at a time.
fn page(
    config: &crate::config::Config,
    store: &Store,
    placed: &[Placed],
    now: Instant,
    chunk: usize,
    out: &mut dyn Write,
) -> Result<()> {
    let mut piece = String::new();
    let mut emit = |piece: &mut String| -> Result<()> {
        out.write_all(crate::secrets::masked(piece).as_bytes())?;
        piece.clear();
        Ok(())
    };
    let branches = store.branch_watches()?;
    let tally = Tally::of(placed.iter().map(|p| p.standing));
    status_page::head(
        &mut piece,
        &tally,
        placed.is_empty() && branches.is_empty(),
        now,
    );
    emit(&mut piece)?;
    let web = config.web_roots();
    let mut order: Vec<&Placed> = placed.iter().collect();
    order.sort_by_key(|p| crate::view::status_view::place(p.standing.need(), &p.repo, p.number));
    for chunk in order.chunks(chunk) {
        let ids: Vec<i64> = chunk.iter().map(|p| p.id).collect();
        let watches = store.watches_by_ids(&ids)?;
        let prs: Vec<&crate::model::PrRef> = watches.iter().map(|w| &w.pr).collect();
        let history = store.recent_history(&prs, status_page::LAST_ACTIONS)?;
        for (w, history) in watches.iter().zip(&history) {
            status_page::card(&mut piece, w, history, &web, now);
            emit(&mut piece)?;
        }
    }
    status_page::foot(&mut piece, &branches, &store.outbox_problems()?, &web, now);
    emit(&mut piece)
}

#[cfg(test)]
mod tests;
