//! The frame loop eframe calls: `logic` delivers the background tasks' results and lets every
//! feature keep its state current (the live run's events under a small time budget), never
//! blocking; `ui` draws the window, then applies what the panels asked for; closing writes
//! what must not be lost.

use eframe::egui;

use super::App;
use std::time::{Duration, Instant};

impl eframe::App for App {
    fn logic(&mut self, ctx: &egui::Context, _frame: &mut eframe::Frame) {
        let start = Instant::now();
        self.frame_start = Some(start);
        self.frame_cpu_start = crate::engine::machine::sys::thread_cpu_time();
        for done in self.tasks.drain() {
            let (features, mut app) = self.parts();
            features.deliver(done, &mut app);
            self.tell_events();
        }
        let (features, mut app) = self.parts();
        features.logic(&mut app);
        self.tell_events();
        self.handle_input(ctx);
        self.exit.close_if_loaded(ctx, &self.session);
    }

    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.draw_panels(ui);
        self.apply_commands();
        if self.session.loading.is_some() || self.view.dialog_open {
            // The loader wakes us when done; a slow tick keeps the spinner alive meanwhile.
            ui.ctx().request_repaint_after(Duration::from_millis(100));
        }
        if let Some(start) = self.frame_start.take() {
            let now = Instant::now();
            let cpu = self
                .frame_cpu_start
                .take()
                .zip(crate::engine::machine::sys::thread_cpu_time())
                .map(|(a, b)| b.saturating_sub(a).as_secs_f32() * 1000.0);
            self.view
                .frame_time(now.duration_since(start).as_secs_f32() * 1000.0, cpu, now);
        }
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, eframe::APP_KEY, &self.settings);
    }

    fn on_exit(&mut self, _gl: Option<&eframe::glow::Context>) {
        let (features, mut app) = self.parts();
        features.exit(&mut app);
        if let Some(path) = self.exit.save_session.clone()
            && let Err(e) = self.save_session(&path)
        {
            crate::say!(
                "error: could not save the session to {}: {e}",
                path.display()
            );
        }
    }
}
