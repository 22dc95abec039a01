//! Messages for the user (failures, fallbacks, saved files), shown in a bar under the
//! top bar until dismissed.

use super::command::Command;
use egui::{Color32, RichText, Ui};

/// Most notices kept on screen.
const MAX_NOTICES: usize = 4;

/// A message for the user, shown until dismissed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notice {
    /// The text.
    pub text: String,
    /// Whether it reports a failure (else information).
    pub error: bool,
}

/// The notices on screen, oldest first.
#[derive(Default)]
pub(super) struct Notices {
    list: Vec<Notice>,
}

impl Notices {
    /// The notices, oldest first.
    pub(super) fn list(&self) -> &[Notice] {
        &self.list
    }

    /// Shows a message unless the same one is on screen; the oldest goes when there
    /// are too many.
    pub(super) fn push(&mut self, text: String, error: bool) {
        if self.list.iter().any(|n| n.text == text) {
            return;
        }
        self.list.push(Notice { text, error });
        if self.list.len() > MAX_NOTICES {
            self.list.remove(0);
        }
    }

    /// Removes the notice at `index` (if it is still there).
    pub(super) fn dismiss(&mut self, index: usize) {
        if index < self.list.len() {
            self.list.remove(index);
        }
    }

    /// One line per notice with its dismiss button.
    pub(super) fn ui(&self, ui: &mut Ui, commands: &mut Vec<Command>) {
        for (i, notice) in self.list.iter().enumerate() {
            ui.horizontal(|ui| {
                let colour = if notice.error {
                    Color32::from_rgb(255, 140, 100)
                } else {
                    ui.visuals().text_color()
                };
                if ui.small_button("Dismiss").clicked() {
                    commands.push(Command::Dismiss(i));
                }
                ui.label(RichText::new(&notice.text).color(colour));
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_are_shown_once_and_the_oldest_go_first() {
        let mut notices = Notices::default();
        notices.push("a".into(), true);
        notices.push("a".into(), true);
        assert_eq!(notices.list().len(), 1);
        for text in ["b", "c", "d", "e"] {
            notices.push(text.into(), false);
        }
        let texts: Vec<&str> = notices.list().iter().map(|n| n.text.as_str()).collect();
        assert_eq!(texts, ["b", "c", "d", "e"]);
        notices.dismiss(1);
        notices.dismiss(9);
        let texts: Vec<&str> = notices.list().iter().map(|n| n.text.as_str()).collect();
        assert_eq!(texts, ["b", "d", "e"]);
    }
}
