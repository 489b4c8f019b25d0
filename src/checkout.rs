//! Reads where the agent's checkout of a PR stands (`watch add PR --checkout PATH`) with git:
//! `rev-parse HEAD`, `merge-base --is-ancestor` and `rev-list --count`, nothing that writes.
//! The words are [`crate::model::checkout::Standing`]'s.

use std::path::Path;
use std::process::{Command, Output};

use crate::model::Sha;
use crate::model::checkout::Standing;

/// git, read-only, in `dir`: no optional locks (nothing written, not even the index), no
/// filesystem monitor started, no pager, no prompt.
fn git(dir: &Path, args: &[&str]) -> std::io::Result<Output> {
    Command::new("git")
        .arg("--no-optional-locks")
        .args(["-c", "core.fsmonitor=false", "-C"])
        .arg(dir)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .stdin(std::process::Stdio::null())
        .output()
}

/// The first line git wrote on stderr, for a reason.
fn first_line(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    crate::core::text::one_line(text.lines().next().unwrap_or("git failed").trim())
}

/// Whether `ancestor` is an ancestor of `of` in the checkout: `None` when git does not know
/// one of them (the commit was never fetched there).
fn is_ancestor(dir: &Path, ancestor: &str, of: &str) -> std::io::Result<Option<bool>> {
    let out = git(dir, &["merge-base", "--is-ancestor", ancestor, of])?;
    Ok(match out.status.code() {
        Some(0) => Some(true),
        Some(1) => Some(false),
        _ => None,
    })
}

/// How many commits `range` (`a..b`) holds.
fn count(dir: &Path, range: &str) -> std::io::Result<Option<u32>> {
    let out = git(dir, &["rev-list", "--count", range])?;
    Ok(out
        .status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().parse().ok())
        .flatten())
}

/// Where the checkout at `dir` stands against `head`.
pub(crate) fn read(dir: &Path, head: &Sha) -> Standing {
    match standing(dir, head) {
        Ok(s) => s,
        Err(e) => Standing::Unreadable {
            reason: format!("git could not run: {e}"),
        },
    }
}

fn standing(dir: &Path, head: &Sha) -> std::io::Result<Standing> {
    if !dir.is_dir() {
        return Ok(Standing::Unreadable {
            reason: format!("no folder {}", dir.display()),
        });
    }
    let out = git(dir, &["rev-parse", "--verify", "--quiet", "HEAD^{commit}"])?;
    if !out.status.success() {
        let reason = if out.stderr.is_empty() {
            "no commit checked out".to_owned()
        } else {
            first_line(&out.stderr)
        };
        return Ok(Standing::Unreadable { reason });
    }
    let sha = Sha(String::from_utf8_lossy(&out.stdout).trim().to_owned());
    if &sha == head {
        return Ok(Standing::AtHead { sha });
    }
    let (c, h) = (sha.as_str(), head.as_str());
    Ok(match is_ancestor(dir, h, c)? {
        // The head is not in the checkout at all: pushed from elsewhere, not fetched.
        None => Standing::Behind { sha, missing: None },
        Some(true) => Standing::Ahead {
            unpushed: count(dir, &format!("{h}..{c}"))?.unwrap_or(0),
            sha,
        },
        Some(false) if is_ancestor(dir, c, h)? == Some(true) => Standing::Behind {
            missing: count(dir, &format!("{c}..{h}"))?,
            sha,
        },
        Some(false) => Standing::Diverged { sha },
    })
}
