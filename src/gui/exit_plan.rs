//! What the app does when its window closes, when a caller asked for it on the command line:
//! save the session to a file (`--save-on-exit FILE`: `nmf_playground.show()` reads the
//! triplets and labels the user clicked back from it), and close as soon as the data has
//! loaded (`--close-when-loaded`: drives `show()` headless under a virtual display in tests).

use crate::gui::state::Session;
use eframe::egui;
use std::path::PathBuf;

/// The command line's requests about closing.
#[derive(Clone, Debug, Default)]
pub struct ExitPlan {
    /// Save the session here when the window closes.
    pub save_session: Option<PathBuf>,
    /// Close the window once the data (and a session's constraints) have loaded.
    pub close_when_loaded: bool,
}

impl ExitPlan {
    /// Ask the window to close when `close_when_loaded` holds and nothing is loading.
    pub fn close_if_loaded(&self, ctx: &egui::Context, session: &Session) {
        let loaded =
            session.dataset.is_some() && session.loading.is_none() && session.opening.is_none();
        if self.close_when_loaded && (loaded || session.load_error.is_some()) {
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
        }
    }
}
