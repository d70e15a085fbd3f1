//! Where an export lands. A regular file is replaced atomically (a temporary file beside it,
//! synced, renamed over it), so a reader never sees half of one, even after Ctrl-C. A rename
//! over anything else would replace the node itself: `/dev/null` would become a file, a FIFO
//! its reader waits on would vanish. So a FIFO or a character device is written through, as a
//! shell's `>` would; a symlink is followed and its target replaced; other kinds are refused.

use serde::Serialize;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// Where the bytes of an export go, once links are followed.
pub(super) enum Dest {
    /// An existing regular file or a new one: replaced by a rename.
    File(PathBuf),
    /// A FIFO or a character device: written into.
    Stream(PathBuf),
}

/// Links nested deeper than this are a loop (Linux gives up at 40 as well).
const MAX_LINKS: usize = 40;

fn refused(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("is {what}; an export goes to a regular file, a FIFO or a character device"),
    )
}

/// Follows `path`'s symlinks one by one: the rename must land on the final target, or the
/// link would be replaced by a file.
pub(super) fn resolve(path: &Path) -> io::Result<Dest> {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        let meta = match std::fs::symlink_metadata(&p) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Dest::File(p)),
            other => other?,
        };
        let t = meta.file_type();
        if t.is_symlink() {
            let to = std::fs::read_link(&p)?;
            // A relative target is relative to the link's folder; an absolute one replaces it.
            p = p.parent().map_or_else(|| to.clone(), |dir| dir.join(&to));
        } else if t.is_file() {
            return Ok(Dest::File(p));
        } else if t.is_fifo() || t.is_char_device() {
            return Ok(Dest::Stream(p));
        } else if t.is_dir() {
            return Err(io::Error::other("is a directory"));
        } else if t.is_block_device() {
            return Err(refused("a block device"));
        } else {
            return Err(refused("a socket"));
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

fn dir_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// A new temporary file beside `path`. Created exclusively: a name left by an earlier
/// process, or a link planted there, is never opened, and two writers of this process
/// (a second Ctrl-C during the last write) never share one.
pub(super) fn temp_beside(path: &Path) -> io::Result<(PathBuf, File)> {
    static SERIAL: AtomicU32 = AtomicU32::new(0);
    let name = path
        .file_name()
        .map_or_else(|| "export".into(), |n| n.to_string_lossy().into_owned());
    let mut last = io::Error::other("no temporary file name left");
    for _ in 0..100 {
        let serial = SERIAL.fetch_add(1, Ordering::Relaxed);
        let tmp = dir_of(path).join(format!(".{name}.{}.{serial}.tmp", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = e,
            Err(e) => return Err(e),
        }
    }
    Err(last)
}

/// Checks before the run that `write_atomic` will be able to write `path`: a run of an
/// hour must not end with results that cannot be saved. A FIFO is not opened: its reader
/// would see the end of the stream. Whether a FIFO or a device may be written is asked of
/// `may_write` instead: access(2), which std does not offer, is the binary's to call.
pub fn check_writable(
    path: &Path,
    may_write: impl FnOnce(&Path) -> io::Result<()>,
) -> io::Result<()> {
    match resolve(path)? {
        Dest::File(p) => {
            let (tmp, _) = temp_beside(&p)?;
            std::fs::remove_file(&tmp)?;
            check_replaceable(&p)
        }
        Dest::Stream(p) => may_write(&p),
    }
}

/// std folds EPERM into `PermissionDenied` with EACCES, the case that must pass: the number
/// tells them apart, 1 on Linux, macOS and the BSDs.
const EPERM: i32 = 1;

/// An existing file that is immutable or append-only (`chattr +i`, `+a`) cannot be renamed
/// over, though its folder takes new files: opening it for writing (never truncating it)
/// is refused for exactly those, even to root.
fn check_replaceable(path: &Path) -> io::Result<()> {
    match OpenOptions::new().write(true).open(path) {
        Err(e) if e.raw_os_error() == Some(EPERM) => Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "the file may not be changed (immutable or append-only? lsattr shows it), so it cannot be replaced",
        )),
        // Without write permission (0444) the rename still replaces it, as before.
        _ => Ok(()),
    }
}

fn write_json<T: Serialize>(f: File, value: &T) -> io::Result<File> {
    // Buffered: straight into the file it was one write(2) per JSON token, and a whole
    // serialized copy first would raise the run's peak memory by the export's size.
    let mut w = io::BufWriter::new(f);
    serde_json::to_writer_pretty(&mut w, value)?;
    w.write_all(b"\n")?;
    w.into_inner().map_err(io::IntoInnerError::into_error)
}

/// Replaces `path` by a file that `fill` writes, renamed over it once synced.
fn replace(path: &Path, fill: impl FnOnce(File) -> io::Result<File>) -> io::Result<()> {
    let (tmp, f) = temp_beside(path)?;
    match fill(f) {
        Ok(f) => rename_over(&tmp, &f, path),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// Puts the filled temporary file `tmp` in `path`'s place, or removes it when that fails:
/// a half-written file never stays beside the results.
pub(super) fn rename_over(tmp: &Path, f: &File, path: &Path) -> io::Result<()> {
    let result = (|| {
        // The old file's mode stays: a rename must not widen who can read the results.
        if let Ok(old) = std::fs::metadata(path) {
            f.set_permissions(old.permissions())?;
        }
        f.sync_all()?;
        std::fs::rename(tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(tmp);
    }
    result
}

/// What `fill` writes, atomically into a regular file, through a FIFO or character device.
fn write_with(path: &Path, fill: impl FnOnce(File) -> io::Result<File>) -> io::Result<()> {
    match resolve(path)? {
        Dest::File(p) => replace(&p, fill),
        Dest::Stream(p) => {
            drop(fill(OpenOptions::new().write(true).open(&p)?)?);
            Ok(())
        }
    }
}

/// Writes `value` as pretty JSON to `path`: atomically when it is (or will be) a regular
/// file, through it when it is a FIFO or a character device.
pub fn write_atomic<T: Serialize>(path: &Path, value: &T) -> io::Result<()> {
    write_with(path, |f| write_json(f, value))
}

/// Writes `text` (an HTML report) to `path` as [`write_atomic`] writes an export.
pub fn write_text_atomic(path: &Path, text: &str) -> io::Result<()> {
    write_with(path, |mut f| {
        f.write_all(text.as_bytes())?;
        Ok(f)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("encbench-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp_file() {
        let dir = dir("export");
        let path = dir.join("r.json");
        write_atomic(&path, &serde_json::json!({"a": 1})).unwrap();
        write_atomic(&path, &serde_json::json!({"a": 2})).unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v["a"], 2);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        assert!(write_atomic(&dir.join("missing/x.json"), &1).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_link_is_followed_and_temp_names_are_never_shared() {
        let dir = dir("export-link");
        let (target, link) = (dir.join("t.json"), dir.join("l.json"));
        std::fs::write(&target, "old").unwrap();
        std::os::unix::fs::symlink("t.json", &link).unwrap();
        write_atomic(&link, &1).unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "1\n");
        let (tmp, _) = temp_beside(&target).unwrap();
        let (other, _) = temp_beside(&target).unwrap();
        assert_ne!(tmp, other);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
