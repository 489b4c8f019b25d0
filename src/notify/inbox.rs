//! Folder inboxes, maildir-style: a message is written to `tmp/` and renamed into `new/`, so a
//! reader never sees half a file; `inbox done` moves it from `new/` to `cur/`.

use std::fs;
use std::io::Write;
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
        fs::create_dir_all(dir.join(sub)).map_err(|e| fail("cannot create folders", e))?;
    }
    if dir.join("cur").join(&name).exists() {
        return Ok(());
    }
    let tmp = dir.join("tmp").join(&name);
    let mut f = fs::File::create(&tmp).map_err(|e| fail("cannot write", e))?;
    f.write_all(payload.as_bytes())
        .and_then(|()| f.sync_all())
        .map_err(|e| fail("cannot write", e))?;
    fs::rename(&tmp, dir.join("new").join(&name)).map_err(|e| fail("cannot deliver", e))?;
    Ok(())
}

/// Moves message `id` from `new/` to `cur/`. Returns the new path.
pub fn mark_done(dir: &Path, id: &str) -> Result<PathBuf, DeliveryError> {
    let name = file_name(id)?;
    let from = dir.join("new").join(&name);
    let to = dir.join("cur").join(&name);
    if to.exists() && !from.exists() {
        return Ok(to);
    }
    fs::create_dir_all(dir.join("cur")).map_err(|e| DeliveryError::temporary(e.to_string()))?;
    fs::rename(&from, &to).map_err(|e| {
        DeliveryError::permanent(format!(
            "no message `{id}` in `{}`: {e}",
            dir.join("new").display()
        ))
    })?;
    Ok(to)
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
}
