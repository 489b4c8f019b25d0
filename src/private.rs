//! Files and folders pr-monitor writes that hold what it read (log tails, review bodies, PR
//! state): created owner-only (0600 files, 0700 folders) whatever the umask, or with the mode
//! the config asks for (`report.mode`, for a web server that serves the page).

use std::fs::{DirBuilder, OpenOptions, Permissions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// A file only its owner may read and write.
pub(crate) const FILE: u32 = 0o600;
/// A folder only its owner may enter.
pub(crate) const DIR: u32 = 0o700;

/// Creates `dir` and any missing parents as owner-only folders (existing ones are left alone).
pub(crate) fn create_dir_all(dir: &Path) -> std::io::Result<()> {
    DirBuilder::new().recursive(true).mode(DIR).create(dir)
}

/// Creates or truncates `path`, with exactly `mode`.
fn create(path: &Path, mode: u32) -> std::io::Result<std::fs::File> {
    let f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(mode)
        .open(path)?;
    // The umask may have narrowed `mode`, and an existing file keeps its old one: set it.
    f.set_permissions(Permissions::from_mode(mode))?;
    Ok(f)
}

/// Writes `bytes` to `path` (created or truncated) with exactly `mode`, synced to disk.
pub(crate) fn write(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    let mut f = create(path, mode)?;
    f.write_all(bytes)?;
    f.sync_all()
}

/// Writes to `path` (created or truncated) with exactly `mode` what `write` writes to it
/// through a buffer, then syncs it to disk.
pub(crate) fn write_with(
    path: &Path,
    mode: u32,
    write: impl FnOnce(&mut dyn Write) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut out = std::io::BufWriter::new(create(path, mode)?);
    write(&mut out)?;
    out.into_inner()
        .map_err(std::io::IntoInnerError::into_error)?
        .sync_all()?;
    Ok(())
}

/// Creates `path` empty and owner-only when it does not exist yet (a database, before SQLite
/// opens it: SQLite gives its `-wal` and `-shm` files the database's mode).
pub(crate) fn create_file(path: &Path) -> std::io::Result<()> {
    match OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(FILE)
        .open(path)
    {
        Ok(f) => f.set_permissions(Permissions::from_mode(FILE)),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn files_and_folders_are_owner_only_or_as_asked() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("a/b");
        create_dir_all(&dir).unwrap();
        assert_eq!((mode(&tmp.path().join("a")), mode(&dir)), (DIR, DIR));
        let file = dir.join("f");
        std::fs::write(&file, "old").unwrap();
        std::fs::set_permissions(&file, Permissions::from_mode(0o666)).unwrap();
        write(&file, b"new", FILE).unwrap();
        assert_eq!(
            (mode(&file), std::fs::read(&file).unwrap()),
            (FILE, b"new".to_vec())
        );
        write(&file, b"x", 0o640).unwrap();
        assert_eq!(mode(&file), 0o640);
        write_with(&file, FILE, |out| {
            out.write_all(b"in ")?;
            Ok(out.write_all(b"pieces")?)
        })
        .unwrap();
        assert_eq!(
            (mode(&file), std::fs::read(&file).unwrap()),
            (FILE, b"in pieces".to_vec())
        );
        let db = dir.join("db");
        create_file(&db).unwrap();
        assert_eq!(mode(&db), FILE);
        create_file(&db).unwrap();
    }
}
