//! One helper for the app's one-off background tasks (dataset load, file dialogs, triplet
//! generation, evaluation), as rerun's viewer keeps its `background_tasks`: each task is a
//! closure run on its own named thread, its result comes back on a channel as a message, the
//! UI is woken when it arrives, and `logic` drains what has finished without ever blocking.
//!
//! Long-lived, streaming work (a model run) goes through the engine's worker instead; see
//! [`super::run_controller`].
//!
//! A task that panics still answers: its panic becomes a message (made by the `on_panic`
//! given to [`Background::new`]), so the app clears the task's "busy" flag and reports the
//! error instead of showing its spinner forever.

use eframe::egui;
use std::sync::mpsc::{self, Receiver, Sender};

/// Spawns background tasks whose results are messages of type `M`.
pub struct Background<M> {
    tx: Sender<M>,
    rx: Receiver<M>,
    ctx: egui::Context,
    /// The message of a task that panicked: from its name and the panic's text.
    on_panic: fn(&str, String) -> M,
}

impl<M: Send + 'static> Background<M> {
    /// Tasks that wake `ctx` when they finish; a task that panics sends
    /// `on_panic(name, panic text)`.
    pub fn new(ctx: &egui::Context, on_panic: fn(&str, String) -> M) -> Self {
        let (tx, rx) = mpsc::channel();
        Self {
            tx,
            rx,
            ctx: ctx.clone(),
            on_panic,
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
        let on_panic = self.on_panic;
        let task_name = name.to_owned();
        std::thread::Builder::new()
            .name(format!("nmf-{name}"))
            .spawn(move || {
                let message = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(task)) {
                    Ok(message) => message,
                    Err(payload) => on_panic(&task_name, panic_text(payload.as_ref())),
                };
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

/// The text a panic carried (`panic!("…")` gives a `&str` or a `String`).
pub(crate) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_owned())
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
        let tasks: Background<(u32, Option<String>)> =
            Background::new(&ctx, |_, _| (u32::MAX, None));
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

    /// A task that panics answers with the `on_panic` message, naming the task and the panic.
    #[test]
    fn a_panicking_task_still_answers() {
        let ctx = egui::Context::default();
        let tasks: Background<String> =
            Background::new(&ctx, |name, why| format!("{name} failed: {why}"));
        tasks
            .spawn("boom", || -> String { panic!("index out of bounds") })
            .expect("spawn");
        let t0 = Instant::now();
        let mut got = Vec::new();
        while got.is_empty() && t0.elapsed() < Duration::from_secs(10) {
            got.extend(tasks.drain());
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(got, ["boom failed: index out of bounds"]);
    }
}
