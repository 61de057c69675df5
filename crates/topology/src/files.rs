//! Reading small kernel text files with errors that name the file.

use std::io::ErrorKind;
use std::path::Path;

use crate::error::TopologyError;

/// The file's text; a missing or unreadable file is an error naming it.
pub(crate) fn read_required(path: &Path) -> Result<String, TopologyError> {
    std::fs::read_to_string(path).map_err(|e| TopologyError::io(path, e))
}

/// The file's text, or `None` when it does not exist; other failures are errors.
pub(crate) fn read_optional(path: &Path) -> Result<Option<String>, TopologyError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(TopologyError::io(path, e)),
    }
}
