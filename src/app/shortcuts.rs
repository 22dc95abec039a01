//! Keyboard shortcuts of the common actions: one table, read both by the key handler
//! and by the tooltips that show them.

use egui::{Context, Key, KeyboardShortcut, Modifiers};

/// An action the keyboard can trigger.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Pause or resume the video.
    PauseResume,
    /// Segment one more frame and stay paused.
    Step,
    /// Paint foreground.
    ToolForeground,
    /// Paint background.
    ToolBackground,
    /// Erase seeds.
    ToolErase,
    /// Undo the last stroke.
    Undo,
    /// Remove every seed.
    Clear,
    /// Smaller brush.
    BrushSmaller,
    /// Bigger brush.
    BrushBigger,
    /// Toggle dynamic cuts.
    ToggleDynamic,
    /// Toggle stochastic cuts (engines that have them).
    ToggleStochastic,
    /// Start or stop recording.
    Record,
    /// Save a snapshot.
    Snapshot,
    /// Show the view with this index in [`super::settings::ViewMode::ALL`].
    View(usize),
}

/// The table: every shortcut and its action.
pub const SHORTCUTS: [(KeyboardShortcut, Action); 18] = [
    (
        KeyboardShortcut::new(Modifiers::NONE, Key::Space),
        Action::PauseResume,
    ),
    (
        KeyboardShortcut::new(Modifiers::NONE, Key::Period),
        Action::Step,
    ),
    (
        KeyboardShortcut::new(Modifiers::NONE, Key::F),
        Action::ToolForeground,
    ),
    (
        KeyboardShortcut::new(Modifiers::NONE, Key::B),
        Action::ToolBackground,
    ),
    (
        KeyboardShortcut::new(Modifiers::NONE, Key::E),
        Action::ToolErase,
    ),
    (
        KeyboardShortcut::new(Modifiers::COMMAND, Key::Z),
        Action::Undo,
    ),
    (
        KeyboardShortcut::new(Modifiers::NONE, Key::Delete),
        Action::Clear,
    ),
    (
        KeyboardShortcut::new(Modifiers::NONE, Key::OpenBracket),
        Action::BrushSmaller,
    ),
    (
        KeyboardShortcut::new(Modifiers::NONE, Key::CloseBracket),
        Action::BrushBigger,
    ),
    (
        KeyboardShortcut::new(Modifiers::NONE, Key::D),
        Action::ToggleDynamic,
    ),
    (
        KeyboardShortcut::new(Modifiers::NONE, Key::S),
        Action::ToggleStochastic,
    ),
    (
        KeyboardShortcut::new(Modifiers::NONE, Key::R),
        Action::Record,
    ),
    (
        KeyboardShortcut::new(Modifiers::NONE, Key::P),
        Action::Snapshot,
    ),
    (
        KeyboardShortcut::new(Modifiers::NONE, Key::Num1),
        Action::View(0),
    ),
    (
        KeyboardShortcut::new(Modifiers::NONE, Key::Num2),
        Action::View(1),
    ),
    (
        KeyboardShortcut::new(Modifiers::NONE, Key::Num3),
        Action::View(2),
    ),
    (
        KeyboardShortcut::new(Modifiers::NONE, Key::Num4),
        Action::View(3),
    ),
    (
        KeyboardShortcut::new(Modifiers::NONE, Key::Num5),
        Action::View(4),
    ),
];

/// The shortcut of `action`, if it has one.
pub fn shortcut_of(action: Action) -> Option<KeyboardShortcut> {
    SHORTCUTS
        .iter()
        .find(|(_, a)| *a == action)
        .map(|(s, _)| *s)
}

/// `text` followed by the action's shortcut in brackets, for tooltips.
pub fn hint(ctx: &Context, text: &str, action: Action) -> String {
    match shortcut_of(action) {
        Some(s) => format!("{text} ({})", ctx.format_shortcut(&s)),
        None => text.to_string(),
    }
}

/// A button for `action` whose tooltip `tip` names the action's shortcut; whether it
/// was clicked.
pub fn shortcut_button(ui: &mut egui::Ui, label: &str, tip: &str, action: Action) -> bool {
    let tip = hint(ui.ctx(), tip, action);
    ui.button(label).on_hover_text(tip).clicked()
}

/// Actions whose shortcut was pressed this frame (none while a text field has the
/// keyboard). Each pressed shortcut is consumed.
pub fn pressed(ctx: &Context) -> Vec<Action> {
    if ctx.egui_wants_keyboard_input() {
        return Vec::new();
    }
    ctx.input_mut(|input| {
        SHORTCUTS
            .iter()
            .filter(|(shortcut, _)| input.consume_shortcut(shortcut))
            .map(|(_, action)| *action)
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shortcut_is_unique() {
        for (i, (a, _)) in SHORTCUTS.iter().enumerate() {
            for (b, _) in &SHORTCUTS[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }

    #[test]
    fn hints_name_the_key() {
        let ctx = Context::default();
        assert_eq!(hint(&ctx, "Pause", Action::PauseResume), "Pause (Space)");
        assert!(hint(&ctx, "Undo", Action::Undo).contains('Z'));
    }
}
