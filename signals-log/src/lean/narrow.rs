//! The quickest read, for runs and responses exactly as ahp writes them:
//! keys in the order serde writes the fields, no whitespace, no escapes,
//! integers only. It reads a line byte by byte against that layout and
//! gives up at the first difference; the serde read then takes the line.
//!
//! It accepts a subset of what serde accepts, with the same values: every
//! string has no backslash and no control character (UTF-8 is checked for
//! the whole chunk), every number is an integer of at most 19 digits
//! without a leading zero, every name (event, outcome, status, action) is
//! the canonical one, every UUID the hyphenated form, every timestamp the
//! plain form ([`super::Ts::plain`]).

use super::{BStr, EntryLine, LEvent, Line, LineBody, RunContext, RunLine, Str, Ts, Uuids};
use ahp_engine::{Action, EntryStatus, Event, Outcome, Uuid};
use std::borrow::Cow;

/// How deep a run's context may nest here (serde_json allows 128).
const MAX_DEPTH: usize = 32;

/// A run or response line read the quick way, or `None`.
pub(super) fn line(text: &str) -> Option<Line<'_>> {
    let mut c = Cur { s: text, i: 0 };
    let line = if c.lit(r#"{"kind":"run","#) {
        c.run()
    } else if c.lit(r#"{"kind":"response","#) {
        c.response()
    } else {
        None
    }?;
    (c.i == text.len()).then_some(line)
}

struct Cur<'a> {
    s: &'a str,
    i: usize,
}

impl<'a> Cur<'a> {
    fn bytes(&self) -> &'a [u8] {
        self.s.as_bytes()
    }

    fn peek(&self) -> Option<u8> {
        self.bytes().get(self.i).copied()
    }

    /// Takes `lit` if it comes next.
    fn lit(&mut self, lit: &str) -> bool {
        let ok = self.bytes()[self.i..].starts_with(lit.as_bytes());
        if ok {
            self.i += lit.len();
        }
        ok
    }

    fn need(&mut self, lit: &str) -> Option<()> {
        self.lit(lit).then_some(())
    }

    /// A string without escapes or control characters.
    fn str(&mut self) -> Option<&'a str> {
        self.need("\"")?;
        let from = self.i;
        let rest = &self.bytes()[from..];
        let len = string_end(rest)?;
        if rest[len] != b'"' {
            return None;
        }
        self.i = from + len + 1;
        self.s.get(from..from + len)
    }

    /// An unsigned integer of at most 19 digits, no leading zero.
    fn u64(&mut self) -> Option<u64> {
        let rest = &self.bytes()[self.i..];
        let len = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        if len == 0 || len > 19 || (len > 1 && rest[0] == b'0') {
            return None;
        }
        if matches!(rest.get(len), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        self.i += len;
        rest[..len].iter().try_fold(0u64, |n, &d| {
            n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
        })
    }

    fn uuid(&mut self) -> Option<Uuid> {
        let s = self.str()?.as_bytes();
        if s.len() != 36 {
            return None;
        }
        let mut out = [0u8; 16];
        let mut n = 0;
        let mut k = 0;
        while k < 36 {
            if matches!(k, 8 | 13 | 18 | 23) {
                if s[k] != b'-' {
                    return None;
                }
                k += 1;
                continue;
            }
            let (hi, lo) = (HEX[usize::from(s[k])], HEX[usize::from(s[k + 1])]);
            if (hi | lo) & 0xf0 != 0 {
                return None;
            }
            out[n] = (hi << 4) | lo;
            n += 1;
            k += 2;
        }
        Some(Uuid::from_bytes(out))
    }

    fn ts(&mut self) -> Option<Ts> {
        Ts::plain(self.str()?).map(Ts)
    }

    fn event(&mut self) -> Option<LEvent> {
        let name = self.str()?;
        Event::ALL
            .iter()
            .find(|e| e.as_str() == name)
            .map(|e| LEvent(*e))
    }

    /// Any value, checked; `None` when it is not in the plain subset.
    fn value(&mut self, depth: usize) -> Option<()> {
        match self.peek()? {
            b'"' => self.str().map(drop),
            b'{' => {
                self.i += 1;
                if self.lit("}") {
                    return Some(());
                }
                loop {
                    self.str()?;
                    self.need(":")?;
                    self.value(depth.checked_sub(1)?)?;
                    if self.lit("}") {
                        return Some(());
                    }
                    self.need(",")?;
                }
            }
            b'[' => {
                self.i += 1;
                if self.lit("]") {
                    return Some(());
                }
                loop {
                    self.value(depth.checked_sub(1)?)?;
                    if self.lit("]") {
                        return Some(());
                    }
                    self.need(",")?;
                }
            }
            b'-' => {
                self.i += 1;
                self.u64().map(drop)
            }
            b'0'..=b'9' => self.u64().map(drop),
            _ => (self.lit("true") || self.lit("false") || self.lit("null")).then_some(()),
        }
    }

    /// An object's members: `member` reads the value of `key` (the last
    /// one counts), any other value is checked; a value that is not an
    /// object is checked and yields `None`.
    fn member<T>(
        &mut self,
        key: &str,
        depth: usize,
        mut member: impl FnMut(&mut Self) -> Option<Option<T>>,
    ) -> Option<Option<T>> {
        if !self.lit("{") {
            self.value(depth)?;
            return Some(None);
        }
        let mut found = None;
        if self.lit("}") {
            return Some(found);
        }
        loop {
            let k = self.str()?;
            self.need(":")?;
            if k == key {
                found = member(self)?;
            } else {
                self.value(depth.checked_sub(1)?)?;
            }
            if self.lit("}") {
                return Some(found);
            }
            self.need(",")?;
        }
    }

    /// A run's context: any value, with `files.changed_count` as
    /// [`RunContext`] finds it.
    fn context(&mut self) -> Option<RunContext> {
        let changed = self.member("files", MAX_DEPTH, |c| {
            c.member("changed_count", MAX_DEPTH - 1, |c| match c.peek()? {
                b'0'..=b'9' => c.u64().map(Some),
                // A negative count: serde's read decides.
                b'-' => None,
                _ => c.value(MAX_DEPTH - 2).map(|()| None),
            })
        })?;
        Some(RunContext(changed))
    }

    fn run(&mut self) -> Option<Line<'a>> {
        let id = if self.lit(r#""id":"#) {
            let id = self.uuid()?;
            self.need(",")?;
            id
        } else {
            Uuid::nil()
        };
        self.need(r#""timestamp":"#)?;
        let timestamp = self.ts()?;
        self.need(r#","event":"#)?;
        let event = self.event()?;
        self.need(r#","correlation_id":"#)?;
        let correlation = self.str()?;
        let session = if self.lit(r#","session_id":"#) {
            Some(self.str()?)
        } else {
            None
        };
        let issue = if self.lit(r#","issue_id":"#) {
            Some(self.str()?)
        } else {
            None
        };
        self.need(r#","outcome":"#)?;
        let outcome = match self.str()? {
            "accept" => Outcome::Accept,
            "aid" => Outcome::Aid,
            "prompt" => Outcome::Prompt,
            "control" => Outcome::Control,
            "block" => Outcome::Block,
            _ => return None,
        };
        self.need(r#","entries":["#)?;
        let mut entries = Vec::new();
        if !self.lit("]") {
            loop {
                entries.push(self.entry()?);
                if self.lit("]") {
                    break;
                }
                self.need(",")?;
            }
        }
        self.need(r#","signal_ids":["#)?;
        if !self.lit("]") {
            loop {
                self.uuid()?;
                if self.lit("]") {
                    break;
                }
                self.need(",")?;
            }
        }
        self.need(r#","duration_us":"#)?;
        let duration_us = self.u64()?;
        let config_digest = if self.lit(r#","config_digest":"#) {
            self.str()?;
            Some(Str)
        } else {
            None
        };
        self.need(r#","context":"#)?;
        let context = self.context()?;
        self.need("}")?;
        Some(Line {
            id,
            timestamp: timestamp.0,
            body: LineBody::Run(RunLine {
                id,
                timestamp,
                event,
                correlation_id: BStr(Cow::Borrowed(correlation)),
                session_id: session.map(|s| BStr(Cow::Borrowed(s))),
                issue_id: issue.map(|s| BStr(Cow::Borrowed(s))),
                outcome,
                entries,
                signal_ids: Uuids,
                duration_us,
                config_digest,
                context,
            }),
        })
    }

    fn entry(&mut self) -> Option<EntryLine<'a>> {
        self.need(r#"{"id":"#)?;
        let id = self.str()?;
        self.need(r#","oracle":"#)?;
        let oracle = self.str()?;
        self.need(r#","wave":"#)?;
        let wave = usize::try_from(self.u64()?).ok()?;
        self.need(r#","status":"#)?;
        let status = match self.str()? {
            "accepted" => EntryStatus::Accepted,
            "signalled" => EntryStatus::Signalled,
            "failed" => EntryStatus::Failed,
            "skipped_after_block" => EntryStatus::SkippedAfterBlock,
            "detached" => EntryStatus::Detached,
            "detached_not_started" => EntryStatus::DetachedNotStarted,
            _ => return None,
        };
        self.need(r#","duration_us":"#)?;
        let duration_us = self.u64()?;
        let shadow = if self.lit(r#","shadow":true"#) {
            true
        } else {
            self.lit(r#","shadow":false"#);
            false
        };
        self.need("}")?;
        Some(EntryLine {
            id: BStr(Cow::Borrowed(id)),
            oracle: BStr(Cow::Borrowed(oracle)),
            wave,
            status,
            duration_us,
            shadow,
        })
    }

    fn response(&mut self) -> Option<Line<'a>> {
        let id = if self.lit(r#""id":"#) {
            let id = self.uuid()?;
            self.need(",")?;
            id
        } else {
            Uuid::nil()
        };
        self.need(r#""signal_id":"#)?;
        let signal_id = self.uuid()?;
        self.need(r#","consumed_at":"#)?;
        let at = self.ts()?;
        self.need(r#","action":"#)?;
        let name = self.str()?;
        let action = *Action::ALL.iter().find(|a| a.as_str() == name)?;
        if self.lit(r#","details":"#) {
            self.value(MAX_DEPTH)?;
        }
        self.need("}")?;
        Some(Line {
            id,
            timestamp: at.0,
            body: LineBody::Response { signal_id, action },
        })
    }
}

/// The value of each hex digit; 0xff for any other byte.
const HEX: [u8; 256] = {
    let mut t = [0xffu8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

/// Where the first `"`, `\\` or control character of `s` is, eight bytes
/// at a time.
fn string_end(s: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut at = 0;
    while let Some(word) = s.get(at..at + 8) {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(word);
        let w = u64::from_le_bytes(bytes);
        // A byte of zero in `x`: its high bit set in the result (bits
        // above the first such byte may be set wrongly; the lowest is
        // right).
        let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
        let quote = zero(w ^ (ONES * u64::from(b'"')));
        let slash = zero(w ^ (ONES * u64::from(b'\\')));
        let control = w.wrapping_sub(ONES * 0x20) & !w & HIGH;
        let found = quote | slash | control;
        if found != 0 {
            return Some(at + (found.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    s[at..]
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .map(|i| at + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_end_finds_the_first_quote_backslash_or_control() {
        for s in [
            &b"abc\"def"[..],
            b"0123456789abcdef\"",
            b"01234567\\\"",
            b"0123456\x01\"",
            b"\"",
            b"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\"",
            b"\x7f\x80\xff\x20\x21\x1f",
            b"no end at all",
        ] {
            let want = s.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20);
            assert_eq!(string_end(s), want, "{s:?}");
        }
    }
}
