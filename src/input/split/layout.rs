//! Where the splitter is in the stream's layout, and the legal moves between layouts.

/// Where the reader is in the stream's layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Layout {
    /// Nothing but whitespace seen yet.
    Undecided,
    Plain,
    /// Framed input, between frames.
    BetweenFrames,
    /// Framed input, inside the frame that opened on `line`.
    InFrame {
        line: u64,
        messages: u64,
    },
    Done,
}

/// What moves the layout on.
#[derive(Debug, Clone, Copy)]
pub(super) enum LayoutEvent {
    FirstByte { vt: bool },
    Vt { line: u64 },
    Fs,
    Eof,
}

/// The legal layout transitions, written once; anything else is not a transition.
pub(super) fn next_layout(layout: Layout, event: LayoutEvent) -> Option<Layout> {
    use Layout::*;
    use LayoutEvent as E;
    Some(match (layout, event) {
        (Undecided, E::FirstByte { vt: true }) => BetweenFrames,
        (Undecided, E::FirstByte { vt: false }) => Plain,
        (BetweenFrames, E::Vt { line }) => InFrame { line, messages: 0 },
        (InFrame { .. }, E::Fs) => BetweenFrames,
        (Undecided | Plain | BetweenFrames | InFrame { .. }, E::Eof) => Done,
        _ => return None,
    })
}
