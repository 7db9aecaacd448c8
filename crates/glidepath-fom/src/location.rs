//! Source positions: turning the byte offsets the XML reader reports into the
//! `line:column` pairs a person looks for in an editor.

use std::fmt;

/// A 1-based line and column in a FOM module's text.
///
/// Columns count characters (Unicode scalar values), not bytes, so that a
/// position after a `©` or a `“` in a notes field still matches what an editor
/// shows. Line 0 means "no position", used for the built-in MIM and for I/O
/// errors that happen before any text is read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SourceLocation {
    /// 1-based line number; 0 when the item has no place in a file.
    pub line: u32,
    /// 1-based column in characters; 0 when the item has no place in a file.
    pub column: u32,
}

impl SourceLocation {
    /// The location of things that come from no file (the built-in MIM).
    pub const NONE: SourceLocation = SourceLocation { line: 0, column: 0 };

    /// True when this location points into a file.
    pub fn is_known(self) -> bool {
        self.line != 0
    }
}

impl fmt::Display for SourceLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// Maps byte offsets to line and column numbers in one text.
///
/// It records where each line starts once, so each lookup is a binary search
/// plus a character count within one line; a large RPR module has tens of
/// thousands of lines and thousands of elements whose positions we keep.
pub(crate) struct LineIndex<'a> {
    text: &'a str,
    /// Byte offset of the first character of every line; `line_starts[0] == 0`.
    line_starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    /// Indexes `text`. Lines end at `\n`; a `\r` before it is part of the old line.
    pub(crate) fn new(text: &'a str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i + 1),
        );
        LineIndex { text, line_starts }
    }

    /// The line and column of the character at byte `offset`.
    ///
    /// An offset past the end maps to the position just after the last
    /// character (where a truncated file stops), and an offset inside a
    /// multi-byte character maps to that character.
    pub(crate) fn locate(&self, offset: usize) -> SourceLocation {
        let offset = offset.min(self.text.len());
        // The last line whose start is at or before `offset`.
        let line = self.line_starts.partition_point(|start| *start <= offset) - 1;
        let start = self.line_starts[line];
        // Characters that end at or before `offset` come before it.
        let column = self.text[start..]
            .char_indices()
            .take_while(|(i, c)| start + i + c.len_utf8() <= offset)
            .count();
        SourceLocation {
            line: to_u32(line + 1),
            column: to_u32(column + 1),
        }
    }
}

/// Saturating conversion: a file with more than 4 billion lines is not a FOM.
fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str, offset: usize) -> (u32, u32) {
        let l = LineIndex::new(text).locate(offset);
        (l.line, l.column)
    }

    #[test]
    fn first_character_is_line_one_column_one() {
        assert_eq!(at("abc", 0), (1, 1));
        assert_eq!(at("", 0), (1, 1));
    }

    #[test]
    fn columns_advance_within_a_line() {
        assert_eq!(at("abc\ndef", 2), (1, 3));
        // The newline itself belongs to the line it ends.
        assert_eq!(at("abc\ndef", 3), (1, 4));
    }

    #[test]
    fn lines_advance_after_newline() {
        let text = "a\nbc\n\ndef";
        assert_eq!(at(text, 2), (2, 1));
        assert_eq!(at(text, 3), (2, 2));
        assert_eq!(at(text, 5), (3, 1));
        assert_eq!(at(text, 6), (4, 1));
        assert_eq!(at(text, 8), (4, 3));
    }

    #[test]
    fn crlf_line_endings_count_once() {
        let text = "ab\r\ncd";
        assert_eq!(at(text, 4), (2, 1));
        assert_eq!(at(text, 2), (1, 3));
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        // '©' is two bytes and '“' three in UTF-8.
        let text = "x©“y";
        assert_eq!(at(text, 0), (1, 1));
        assert_eq!(at(text, 1), (1, 2));
        assert_eq!(at(text, 3), (1, 3));
        assert_eq!(at(text, 6), (1, 4));
    }

    #[test]
    fn offset_inside_a_multibyte_character_maps_to_that_character() {
        let text = "x©y";
        assert_eq!(at(text, 2), (1, 2));
    }

    #[test]
    fn offset_past_the_end_points_after_the_last_character() {
        assert_eq!(at("ab\ncd", 99), (2, 3));
        assert_eq!(at("ab\n", 3), (2, 1));
    }

    #[test]
    fn unknown_location_displays_and_reports_as_unknown() {
        assert!(!SourceLocation::NONE.is_known());
        assert_eq!(SourceLocation { line: 3, column: 7 }.to_string(), "3:7");
    }
}
