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
/// (U+200B–200F, U+061C), the line and paragraph separators, the
/// bidirectional controls, the word joiner, invisible operators and
/// deprecated format characters (U+2060–206F), the byte-order mark, the
/// soft hyphen, the combining grapheme joiner, the fillers and vowels that
/// render as nothing (Hangul, Mongolian, Khmer), the supplementary
/// variation selectors (U+E0100–E01EF) and the tag characters
/// (U+E0000–E007F) that spell out ASCII unseen. The variation selectors
/// of emoji (U+FE00–FE0F) are left out: ordinary text has them. Control
/// characters are the caller's to add.
///
/// ```
/// use ahp_engine::unseen::is_invisible;
/// assert!(is_invisible('\u{200b}'));
/// assert!(is_invisible('\u{e0041}'));
/// assert!(is_invisible('\u{3164}'));
/// assert!(!is_invisible(' '));
/// assert!(!is_invisible('\u{fe0f}'));
/// ```
pub fn is_invisible(c: char) -> bool {
    is_bidi_control(c)
        || matches!(
            c,
            '\u{00ad}'
                | '\u{034f}'
                | '\u{061c}'
                | '\u{115f}'..='\u{1160}'
                | '\u{17b4}'..='\u{17b5}'
                | '\u{180e}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{2029}'
                | '\u{2060}'..='\u{206f}'
                | '\u{3164}'
                | '\u{feff}'
                | '\u{ffa0}'
                | '\u{e0000}'..='\u{e007f}'
                | '\u{e0100}'..='\u{e01ef}'
        )
}

/// Whether `text` holds a character no one sees ([`is_invisible`]), but
/// for the zero-width joiner inside an emoji sequence (`👨‍💻` is a man, a
/// joiner and a laptop), where it is what draws the one picture.
///
/// ```
/// use ahp_engine::unseen::hides_text;
/// assert!(!hides_text("Build it \u{1f468}\u{200d}\u{1f4bb}"));
/// assert!(hides_text("Build\u{200d}it"));
/// ```
pub fn hides_text(text: &str) -> bool {
    let pictograph = |c: Option<char>| {
        c.is_some_and(
            |c| matches!(c, '\u{2600}'..='\u{27bf}' | '\u{fe0f}' | '\u{1f000}'..='\u{1faff}'),
        )
    };
    let mut before = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if is_invisible(c)
            && !(c == '\u{200d}' && pictograph(before) && pictograph(chars.peek().copied()))
        {
            return true;
        }
        before = Some(c);
    }
    false
}

/// `s` with control characters other than newline and tab, and the
/// bidirectional overrides, escaped (`\u{1b}`): text from a hook, a cloned
/// repository or an agent cannot drive the terminal that shows it.
///
/// ```
/// use ahp_engine::unseen::escape_controls;
/// assert_eq!(escape_controls("red\u{1b}[31m\nok"), "red\\u{1b}[31m\nok");
/// assert_eq!(escape_controls("plain"), "plain");
/// ```
pub fn escape_controls(s: &str) -> std::borrow::Cow<'_, str> {
    fn unsafe_char(c: char) -> bool {
        (c.is_control() && c != '\n' && c != '\t') || is_bidi_control(c)
    }
    if !s.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if unsafe_char(c) {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}
