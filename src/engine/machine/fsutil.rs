//! File-system helpers shared by the engine and the front ends.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Write `bytes` to `path` atomically: a temporary file in the same directory (created
/// exclusively), flushed and fsynced, then renamed over `path`, and the directory fsynced where
/// supported. A crash never leaves a half-written file under the final name. Missing parent
/// folders are created first, so that every save (constraints, sessions, tables, figures)
/// treats a typed `results/new/x.json` alike.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir)?;
    let name = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into());
    let mut k = 0u32;
    let (tmp, mut file) = loop {
        let tmp = dir.join(format!(".{name}.tmp-{}-{k}", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(f) => break (tmp, f),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && k < 1000 => k += 1,
            Err(e) => return Err(e),
        }
    };
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    if let Ok(d) = std::fs::File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("a.json");
        write_atomic(&p, b"one").expect("write");
        write_atomic(&p, b"two").expect("write");
        assert_eq!(std::fs::read(&p).expect("read"), b"two");
        let names: Vec<_> = std::fs::read_dir(dir.path()).expect("ls").collect();
        assert_eq!(names.len(), 1, "a temporary file was left behind");
    }
}

/// A CSV field, quoted when it holds a comma, a quote or a line break (RFC 4180): the one
/// quoter of the CSV files the GUI and the CLI write.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

#[cfg(test)]
mod csv_tests {
    use super::csv_field;

    #[test]
    fn csv_fields_are_quoted_when_needed() {
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"x\""), "\"say \"\"x\"\"\"");
        assert_eq!(csv_field("two\nlines"), "\"two\nlines\"");
        assert_eq!(csv_field("plain"), "plain");
    }
}
