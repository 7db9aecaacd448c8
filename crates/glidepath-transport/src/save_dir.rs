//! Federation saves kept in a directory: the `inproc` transport's [`SaveStore`].
//!
//! One file per save, `DIR/FEDERATION/LABEL.gpsave`, holding the encoded
//! [`glidepath_core::SavedFederation`] (format in `docs/save-format.md`). A file is
//! written to a temporary name in the same directory and renamed over the final one,
//! so a crash mid-write never leaves a half save where a restore would read it.
//! Federation names and labels are percent-escaped into file names, so any name is
//! stored and none can reach outside the directory.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use glidepath_core::{SaveStore, SaveStoreError};

/// Saves in files under one directory (created on the first save).
#[derive(Clone, Debug)]
pub struct DirSaveStore {
    dir: PathBuf,
}

impl DirSaveStore {
    /// A store under `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> DirSaveStore {
        DirSaveStore { dir: dir.into() }
    }

    /// The directory saves go to.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file a save of `federation` labelled `label` is kept in.
    pub fn path_of(&self, federation: &str, label: &str) -> PathBuf {
        self.dir
            .join(escape(federation))
            .join(format!("{}.gpsave", escape(label)))
    }
}

/// Letters, digits, `-` and `_` stay; every other byte becomes `%XX`.
fn escape(name: &str) -> String {
    escape_save_name(name, '%')
}

/// A federation's or a save's name made safe for a file or object name: letters,
/// digits, `-` and `_` stay; every other byte becomes `marker` and two upper-case
/// hex digits, so different names never meet.
pub(crate) fn escape_save_name(name: &str, marker: char) -> String {
    let mut out = String::with_capacity(name.len());
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' {
            out.push(b as char);
        } else {
            out.push_str(&format!("{marker}{b:02X}"));
        }
    }
    out
}

fn io_error(what: &str, path: &Path, e: std::io::Error) -> SaveStoreError {
    SaveStoreError(format!("{what} {}: {e}", path.display()))
}

impl SaveStore for DirSaveStore {
    fn put(&mut self, federation: &str, label: &str, bytes: &[u8]) -> Result<(), SaveStoreError> {
        let path = self.path_of(federation, label);
        let parent = path.parent().expect("a save path has a directory");
        fs::create_dir_all(parent).map_err(|e| io_error("cannot create", parent, e))?;
        let tmp = path.with_extension("gpsave.tmp");
        let mut file = fs::File::create(&tmp).map_err(|e| io_error("cannot create", &tmp, e))?;
        file.write_all(bytes)
            .and_then(|()| file.sync_all())
            .map_err(|e| io_error("cannot write", &tmp, e))?;
        fs::rename(&tmp, &path).map_err(|e| io_error("cannot rename into", &path, e))
    }

    fn get(&mut self, federation: &str, label: &str) -> Result<Option<Vec<u8>>, SaveStoreError> {
        let path = self.path_of(federation, label);
        match fs::read(&path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_error("cannot read", &path, e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_put_is_read_back_and_names_cannot_escape_the_directory() {
        let dir = std::env::temp_dir().join(format!("glidepath-save-dir-{}", std::process::id()));
        let mut store = DirSaveStore::new(&dir);
        assert_eq!(store.get("fed", "none"), Ok(None));
        store.put("fed/../x", "../l a", b"one").unwrap();
        store.put("fed/../x", "../l a", b"two").unwrap();
        assert_eq!(store.get("fed/../x", "../l a"), Ok(Some(b"two".to_vec())));
        let file = store.path_of("fed/../x", "../l a");
        assert!(file.starts_with(&dir), "{}", file.display());
        assert_eq!(
            file.file_name().unwrap().to_str().unwrap(),
            "%2E%2E%2Fl%20a.gpsave"
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
