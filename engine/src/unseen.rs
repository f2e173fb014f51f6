//! Characters a person does not see. A cloned repository can hide text
//! from its reviewer with them (instructions for an agent in tag
//! characters, an id that only looks like a builtin one), and a value
//! printed as it is can reorder what a terminal shows. One list, for every
//! check of ahp that asks.

/// Whether `c` reorders the text around it when shown: the bidirectional
/// embeddings, overrides and isolates (U+202A–202E, U+2066–2069).
///
/// ```
/// use ahp_engine::unseen::is_bidi_control;
/// assert!(is_bidi_control('\u{202e}'));
/// assert!(!is_bidi_control('a'));
/// ```
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Whether `c` takes no visible space: zero-width characters and marks
/// (U+200B–200F), the line and paragraph separators, the bidirectional
/// controls, the word joiner and invisible operators (U+2060–2064), the
/// byte-order mark, and the tag characters (U+E0000–E007F) that spell out
/// ASCII unseen. Control characters are the caller's to add.
///
/// ```
/// use ahp_engine::unseen::is_invisible;
/// assert!(is_invisible('\u{200b}'));
/// assert!(is_invisible('\u{e0041}'));
/// assert!(!is_invisible(' '));
/// ```
pub fn is_invisible(c: char) -> bool {
    is_bidi_control(c)
        || matches!(
            c,
            '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{2029}'
                | '\u{2060}'..='\u{2064}'
                | '\u{feff}'
                | '\u{e0000}'..='\u{e007f}'
        )
}
