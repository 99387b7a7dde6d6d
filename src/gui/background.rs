//! One helper for the app's one-off background tasks (dataset load, file dialogs, triplet
//! generation, evaluation), as rerun's viewer keeps its `background_tasks`: each task is a
//! closure run on its own named thread, its result comes back on a channel as a message, the
//! UI is woken when it arrives, and `logic` drains what has finished without ever blocking.
//!
//! Long-lived, streaming work (a model run) goes through the engine's worker instead; see
//! [`super::run_controller`].

use eframe::egui;
use std::sync::mpsc::{self, Receiver, Sender};

/// Spawns background tasks whose results are messages of type `M`.
pub struct Background<M> {
    tx: Sender<M>,
    rx: Receiver<M>,
    ctx: egui::Context,
}

impl<M: Send + 'static> Background<M> {
    /// Tasks that wake `ctx` when they finish.
    pub fn new(ctx: &egui::Context) -> Self {
        let (tx, rx) = mpsc::channel();
        Self {
            tx,
            rx,
            ctx: ctx.clone(),
        }
    }

    /// Run `task` on a new thread named `nmf-{name}`; its result arrives through
    /// [`Self::drain`], and a repaint is requested as it is sent. The only error is a thread
    /// that could not start; the message names the task.
    pub fn spawn(
        &self,
        name: &str,
        task: impl FnOnce() -> M + Send + 'static,
    ) -> Result<(), String> {
        let tx = self.tx.clone();
        let ctx = self.ctx.clone();
        std::thread::Builder::new()
            .name(format!("nmf-{name}"))
            .spawn(move || {
                let message = task();
                // Sending fails only once the app (the receiver) is gone: nobody to tell.
                let _ = tx.send(message);
                ctx.request_repaint();
            })
            .map(drop)
            .map_err(|e| format!("could not start the {name} thread: {e}"))
    }

    /// Every result that has arrived since the last call, oldest first; never blocks.
    pub fn drain(&self) -> Vec<M> {
        self.rx.try_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// Results arrive as messages, from a thread carrying the task's name, in spawn order
    /// per task; draining an empty queue returns at once.
    #[test]
    fn delivers_results_from_named_threads() {
        let ctx = egui::Context::default();
        let tasks: Background<(u32, Option<String>)> = Background::new(&ctx);
        assert!(tasks.drain().is_empty());
        for k in 0..3 {
            tasks
                .spawn("test-task", move || {
                    (k, std::thread::current().name().map(str::to_owned))
                })
                .expect("spawn");
        }
        let mut got = Vec::new();
        let t0 = Instant::now();
        while got.len() < 3 && t0.elapsed() < Duration::from_secs(10) {
            got.extend(tasks.drain());
            std::thread::sleep(Duration::from_millis(1));
        }
        got.sort();
        let names: Vec<_> = got.iter().map(|(_, n)| n.as_deref()).collect();
        assert_eq!(got.iter().map(|(k, _)| *k).collect::<Vec<_>>(), [0, 1, 2]);
        assert!(
            names.iter().all(|n| *n == Some("nmf-test-task")),
            "{names:?}"
        );
        assert!(tasks.drain().is_empty());
    }
}
