//! The egui desktop app (feature `gui`). Draws only; all math runs in the engine's worker.
