//! Teaching controls (issue 21 point 3): step one iteration, run at a chosen speed, the
//! current model's update rule with its objective terms' values at the current iteration,
//! and reset to the same start in one click. The worker does the stepping and the
//! throttling ([`crate::engine::jobs::worker::Command`]); this panel only sends commands.
//! The chosen speed is the feature's own ([`super::Teaching`]).

use eframe::egui;

use crate::gui::command::Commands;
use crate::gui::run_controller::RunController;
use crate::gui::state::Settings;
use egui::RichText;

/// Text size of the update rule and the terms' values (points).
const RULE_SIZE: f32 = 17.0;

/// The fastest chosen speed on the slider (iterations per second).
const MAX_RATE: u32 = 60;

pub fn show(
    ui: &mut egui::Ui,
    settings: &Settings,
    run: &RunController,
    rate: u32,
    cmds: &mut Commands,
) {
    egui::CollapsingHeader::new("Teaching controls")
        .id_salt("teaching")
        .show(ui, |ui| body(ui, settings, run, rate, cmds));
}

fn body(
    ui: &mut egui::Ui,
    settings: &Settings,
    run: &RunController,
    rate: u32,
    cmds: &mut Commands,
) {
    ui.horizontal_wrapped(|ui| {
        if ui
            .button("Step")
            .on_hover_text("One iteration, then hold (a run not started starts held at its start)")
            .clicked()
        {
            cmds.send(crate::gui::runs::Command::Step);
        }
        if ui
            .button("Reset to start")
            .on_hover_text(format!(
                "Start the selected model again from the same start (seed {}), held",
                settings.seed
            ))
            .clicked()
        {
            cmds.send(crate::gui::runs::Command::Reset);
        }
    });
    let mut rate = rate;
    let slider = egui::Slider::new(&mut rate, 0..=MAX_RATE)
        .text("iterations/s")
        .custom_formatter(|v, _| {
            if v < 0.5 {
                "full".to_owned()
            } else {
                format!("{v:.0}")
            }
        });
    if ui
        .add(slider)
        .on_hover_text("Slow the run down so the motion can be followed (0: full speed)")
        .changed()
    {
        cmds.send(super::Command::SetRate(rate));
    }
    let Some(kind) = settings.model_kind() else {
        return;
    };
    ui.label(RichText::new(format!("{} update", kind.label())).strong());
    let rule = kind.update_rule().map_or_else(
        || format!("See {} for its iteration.", kind.section()),
        str::to_owned,
    );
    // Large enough to read from the back of a room.
    ui.add(
        egui::Label::new(
            RichText::new(crate::gui::style::displayable(ui.ctx(), &rule))
                .monospace()
                .size(RULE_SIZE),
        )
        .wrap(),
    );
    let terms = &run.convergence.terms;
    let total = run.convergence.total.linear.last();
    if let Some(p) = total {
        let value = crate::gui::format::format_value;
        ui.label(
            RichText::new(format!(
                "iteration {}: objective {}",
                p.x as usize,
                value(p.y)
            ))
            .size(RULE_SIZE),
        );
        for (name, series) in terms {
            if let Some(v) = series.linear.last() {
                ui.label(
                    RichText::new(format!("  {name} = {}", value(v.y)))
                        .monospace()
                        .size(RULE_SIZE - 2.0),
                );
            }
        }
    } else {
        ui.label(RichText::new("Step or run to see the terms' values.").weak());
    }
}
