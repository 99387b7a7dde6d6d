//! The basis gallery (a window, from the View menu): W's columns as images for image data (a
//! heat strip per basis otherwise), live, sorted by the norm of their H row ([`build`]);
//! clicking a basis rings the samples that load most on it in the scatter and lists those
//! that use it most ([`panel`]). The picked basis and its samples are shared with the scatter
//! ([`ExploreView`]); the window and the built gallery are this feature's.

mod build;
mod panel;

pub use build::{Gallery, basis_order};

use crate::gui::explore::ExploreView;
use crate::gui::feature::{Event, Feature, Place, Shared};
use eframe::egui;

/// The gallery window's state.
#[derive(Default)]
pub struct BasisGallery {
    /// The window is open.
    pub show: bool,
    /// The gallery of the latest snapshot drawn.
    pub gallery: Gallery,
}

impl BasisGallery {
    /// Pick basis `c` (or unpick it when it is picked): its samples are ringed.
    pub fn toggle_basis(&self, c: usize, explore: &mut ExploreView) {
        if explore.basis == Some(c) {
            explore.basis = None;
            explore.selection.clear();
        } else {
            explore.basis = Some(c);
            explore.selection = self.gallery.dominant.get(c).cloned().unwrap_or_default();
        }
    }
}

impl Feature for BasisGallery {
    fn name(&self) -> &'static str {
        "gallery"
    }

    fn on_event(&mut self, event: Event, _app: &mut Shared<'_>) {
        if event == Event::DatasetChanged {
            self.gallery = Gallery::default();
        }
    }

    fn ui(&mut self, place: Place, ui: &mut egui::Ui, app: &mut Shared<'_>) {
        match place {
            Place::ViewMenu => {
                ui.checkbox(&mut self.show, "Basis gallery");
            }
            Place::Windows => panel::window(
                ui.ctx(),
                app.session.dataset.as_deref(),
                app.run,
                self,
                app.view,
            ),
            _ => {}
        }
    }

    crate::feature_any!();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picking_a_basis_selects_its_samples_and_picking_it_again_clears() {
        let mut g = BasisGallery::default();
        let mut v = ExploreView::default();
        g.gallery.dominant = vec![vec![0, 3], vec![1, 2]];
        g.toggle_basis(1, &mut v);
        assert_eq!((v.basis, v.selection.clone()), (Some(1), vec![1, 2]));
        g.toggle_basis(0, &mut v);
        assert_eq!(v.selection, vec![0, 3]);
        g.toggle_basis(0, &mut v);
        assert_eq!((v.basis, v.selection.len()), (None, 0));
    }
}
