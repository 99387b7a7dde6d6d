//! Messages to stderr that never panic. `eprintln!` panics when stderr is closed (a pipe
//! whose reader went away, `2>&-`), which would turn a warning or a progress line into a
//! crash; here a message that cannot be written is dropped, as a closed stdout ends the
//! output quietly.

use std::io::Write;

/// Write `args` to stderr, then a newline when `newline`; errors are dropped.
pub fn write(args: std::fmt::Arguments<'_>, newline: bool) {
    let mut e = std::io::stderr().lock();
    let _ = e
        .write_fmt(args)
        .and_then(|()| if newline { e.write_all(b"\n") } else { Ok(()) })
        .and_then(|()| e.flush());
}
