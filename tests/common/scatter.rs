//! The scatter's own state (tool, picks, overlays, the plot's transform) for the UI tests that
//! read it. Kept out of `common/mod.rs` so the test files that never read it do not compile
//! an unused helper; include it with `#[path = "common/scatter.rs"] mod scatter;`.

use nmf_playground::gui::App;
use nmf_playground::gui::scatter::Scatter;

/// The app's scatter feature.
pub fn of(app: &App) -> &Scatter {
    app.feature::<Scatter>()
        .unwrap_or_else(|| panic!("the app has the scatter"))
}
