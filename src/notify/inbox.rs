//! Folder inboxes, maildir-style: a message is written to `tmp/` and renamed into `new/`, so a
//! reader never sees half a file; `inbox done` moves it from `new/` to `cur/`. A maildir client
//! that marks a message seen renames it to `cur/<id>.json:2,S`; any such info suffix counts as
//! the same message.

use std::fs;
use std::path::{Path, PathBuf};

use super::DeliveryError;

fn file_name(id: &str) -> Result<String, DeliveryError> {
    let ok = !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        && !id.starts_with('.');
    if ok {
        Ok(format!("{id}.json"))
    } else {
        Err(DeliveryError::permanent(format!(
            "`{id}` is not a valid message id"
        )))
    }
}

/// Writes message `id` into `dir/new/` atomically. Writing the same id again replaces the
/// file, so a resend after a crash never makes a second message.
pub fn write(dir: &Path, id: &str, payload: &str) -> Result<(), DeliveryError> {
    let name = file_name(id)?;
    let fail = |what: &str, e: std::io::Error| {
        DeliveryError::temporary(format!("inbox `{}`: {what}: {e}", dir.display()))
    };
    for sub in ["tmp", "new", "cur"] {
        crate::private::create_dir_all(&dir.join(sub))
            .map_err(|e| fail("cannot create folders", e))?;
    }
    if in_cur(dir, &name).is_some() {
        return Ok(());
    }
    let tmp = dir.join("tmp").join(&name);
    crate::private::write(&tmp, payload.as_bytes(), crate::private::FILE)
        .map_err(|e| fail("cannot write", e))?;
    fs::rename(&tmp, dir.join("new").join(&name)).map_err(|e| fail("cannot deliver", e))?;
    Ok(())
}

/// `cur/<name>`, or `cur/<name>:<info>` as a maildir client leaves it (`:2,S` once seen).
fn in_cur(dir: &Path, name: &str) -> Option<PathBuf> {
    let plain = dir.join("cur").join(name);
    if plain.exists() {
        return Some(plain);
    }
    let prefix = format!("{name}:");
    fs::read_dir(dir.join("cur"))
        .ok()?
        .flatten()
        .find(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|f| f.starts_with(&prefix))
        })
        .map(|e| e.path())
}

/// Whether message `id` is in this inbox, waiting in `new/` or handled in `cur/`.
pub fn holds(dir: &Path, id: &str) -> bool {
    file_name(id)
        .is_ok_and(|name| dir.join("new").join(&name).exists() || in_cur(dir, &name).is_some())
}

/// Moves message `id` from `new/` to `cur/`. Returns the new path.
pub fn mark_done(dir: &Path, id: &str) -> Result<PathBuf, DeliveryError> {
    let name = file_name(id)?;
    let from = dir.join("new").join(&name);
    let to = dir.join("cur").join(&name);
    if !from.exists()
        && let Some(done) = in_cur(dir, &name)
    {
        return Ok(done);
    }
    crate::private::create_dir_all(&dir.join("cur"))
        .map_err(|e| DeliveryError::temporary(e.to_string()))?;
    fs::rename(&from, &to).map_err(|e| {
        DeliveryError::permanent(format!(
            "no message `{id}` in `{}`: {e}",
            dir.join("new").display()
        ))
    })?;
    Ok(to)
}

/// The ids of the messages waiting in `new/`, sorted (an inbox never written to has none).
pub fn unread(dir: &Path) -> Vec<String> {
    let mut ids: Vec<String> = fs::read_dir(dir.join("new"))
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| {
                    e.file_name()
                        .to_str()
                        .and_then(|f| f.strip_suffix(".json"))
                        .filter(|id| file_name(id).is_ok())
                        .map(str::to_owned)
                })
                .collect()
        })
        .unwrap_or_default();
    ids.sort();
    ids
}

/// The text of message `id` waiting in `new/`.
pub fn read_unread(dir: &Path, id: &str) -> Result<String, DeliveryError> {
    let path = dir.join("new").join(file_name(id)?);
    fs::read_to_string(&path)
        .map_err(|_| DeliveryError::permanent(format!("no unread message `{id}`")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_atomically_once_and_moves_to_cur() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "m-1", "{}").unwrap();
        write(dir.path(), "m-1", "{}").unwrap();
        assert_eq!(fs::read_dir(dir.path().join("new")).unwrap().count(), 1);
        assert_eq!(fs::read_dir(dir.path().join("tmp")).unwrap().count(), 0);
        let done = mark_done(dir.path(), "m-1").unwrap();
        assert!(done.ends_with("cur/m-1.json"));
        write(dir.path(), "m-1", "{}").unwrap();
        assert_eq!(
            fs::read_dir(dir.path().join("new")).unwrap().count(),
            0,
            "a handled message is not redelivered"
        );
        assert!(write(dir.path(), "../x", "{}").unwrap_err().permanent);
    }

    #[test]
    fn unread_messages_are_the_ones_waiting_in_new() {
        let dir = tempfile::tempdir().unwrap();
        assert!(unread(dir.path()).is_empty(), "no folders yet");
        write(dir.path(), "m-2", "{\"n\":2}").unwrap();
        write(dir.path(), "m-1", "{\"n\":1}").unwrap();
        fs::write(dir.path().join("new/.hidden.json"), "{}").unwrap();
        assert_eq!(unread(dir.path()), ["m-1", "m-2"]);
        assert_eq!(read_unread(dir.path(), "m-2").unwrap(), "{\"n\":2}");
        mark_done(dir.path(), "m-1").unwrap();
        assert_eq!(unread(dir.path()), ["m-2"]);
        assert!(
            read_unread(dir.path(), "m-1").is_err(),
            "done is no longer unread"
        );
        assert!(read_unread(dir.path(), "../m-2").is_err());
    }

    #[test]
    fn a_message_a_maildir_client_marked_seen_is_still_the_message() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "m-2", "{}").unwrap();
        let seen = dir.path().join("cur/m-2.json:2,S");
        fs::rename(dir.path().join("new/m-2.json"), &seen).unwrap();
        assert!(holds(dir.path(), "m-2"));
        assert_eq!(mark_done(dir.path(), "m-2").unwrap(), seen);
        write(dir.path(), "m-2", "{}").unwrap();
        assert_eq!(
            fs::read_dir(dir.path().join("new")).unwrap().count(),
            0,
            "not resent"
        );
        assert!(!holds(dir.path(), "m-3"));
    }
}
