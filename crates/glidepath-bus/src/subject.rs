//! Subjects and subscription patterns: GMSEC's dot-delimited names, their validation
//! (an error names the bad element), the wildcards `*`, `>` and `+`, and their mapping
//! onto NATS subjects.
//!
//! A **subject** is one or more elements separated by `.`; an element is one or more
//! upper-case letters `A`–`Z`, digits, `_` and `-` (the formation-flying testbed's
//! convention, seed `003_...` section III.A.4, after the GMSEC interface
//! specification). A **pattern** is a subject whose elements may also be wildcards:
//!
//! | wildcard | matches | where |
//! |---|---|---|
//! | `*` | exactly one element | anywhere |
//! | `>` | one or more trailing elements | last element only |
//! | `+` | zero or more trailing elements | last element only |
//!
//! A wildcard is a whole element (`SAT*` is refused), and a subject never holds one.
//! The seven-element convention of the testbed is the typed builder in [`fms`].
//!
//! NATS has `*` and `>` with the same meaning; `+` has no NATS equivalent, so a
//! pattern ending in `+` subscribes to two NATS subjects, the prefix itself and
//! `prefix.>` ([`Pattern::nats_filters`]). `docs/wire-format.md` gives the whole
//! mapping.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

pub mod fms;

/// What is wrong with a subject or a pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SubjectErrorKind {
    /// The text is empty.
    Empty,
    /// Two dots in a row, or a dot at either end.
    EmptyElement,
    /// A character outside `A`–`Z`, `0`–`9`, `_` and `-`.
    BadCharacter(char),
    /// A wildcard in a subject (only patterns may hold them).
    WildcardInSubject,
    /// `>` or `+` before the last element.
    WildcardNotLast,
    /// A wildcard character inside an element (`SAT*`): wildcards are whole elements.
    PartialWildcard,
    /// A NATS subject outside the prefix the bus subjects live under.
    OutsidePrefix(String),
    /// The seven-element convention needs seven elements.
    WrongElementCount {
        /// How many elements the convention has.
        expected: usize,
        /// How many the subject has.
        found: usize,
    },
}

/// A subject or pattern that was refused, naming the bad element.
///
/// `index` is the 1-based position of the element (0 when the whole text is at
/// fault), `role` the element's meaning in the seven-element convention when the
/// subject was built or read as one ([`fms`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubjectError {
    /// The text as given.
    pub subject: String,
    /// 1-based index of the bad element; 0 for the whole text.
    pub index: usize,
    /// The bad element as given.
    pub element: String,
    /// The element's role in the seven-element convention, if known.
    pub role: Option<&'static str>,
    /// What is wrong.
    pub kind: SubjectErrorKind,
}

impl fmt::Display for SubjectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = |f: &mut fmt::Formatter<'_>| -> fmt::Result {
            write!(f, "element {}", self.index)?;
            if let Some(role) = self.role {
                write!(f, " ({role})")?;
            }
            write!(f, " `{}` of `{}`", self.element, self.subject)
        };
        match &self.kind {
            SubjectErrorKind::Empty => write!(f, "empty subject"),
            SubjectErrorKind::EmptyElement => {
                what(f)?;
                write!(f, " is empty (two dots in a row, or a dot at an end)")
            }
            SubjectErrorKind::BadCharacter(c) => {
                what(f)?;
                write!(
                    f,
                    ": {c:?} is not allowed; elements use upper-case letters A-Z, digits 0-9, `_` and `-`"
                )
            }
            SubjectErrorKind::WildcardInSubject => {
                what(f)?;
                write!(f, " is a wildcard, which only a subscription pattern may hold")
            }
            SubjectErrorKind::WildcardNotLast => {
                what(f)?;
                write!(f, ": `>` and `+` may only be the last element")
            }
            SubjectErrorKind::PartialWildcard => {
                what(f)?;
                write!(f, ": a wildcard must be a whole element (`*`, `>` or `+`)")
            }
            SubjectErrorKind::OutsidePrefix(prefix) => write!(
                f,
                "NATS subject `{}` is not under `{prefix}.`, where bus subjects travel",
                self.subject
            ),
            SubjectErrorKind::WrongElementCount { expected, found } => write!(
                f,
                "`{}` has {found} elements; the seven-element convention (System, Mission, Satellite ID, Message Type, Message Subtype, Component Name, Message Name) needs {expected}",
                self.subject
            ),
        }
    }
}

impl std::error::Error for SubjectError {}

impl SubjectError {
    fn new(subject: &str, index: usize, element: &str, kind: SubjectErrorKind) -> SubjectError {
        SubjectError {
            subject: subject.to_string(),
            index,
            element: element.to_string(),
            role: None,
            kind,
        }
    }
}

/// True for the characters an element may hold.
#[inline]
pub fn is_element_char(b: u8) -> bool {
    b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_' || b == b'-'
}

/// Checks one element of a subject (no wildcards); `index` is 1-based.
fn check_element(subject: &str, index: usize, element: &str) -> Result<(), SubjectError> {
    if element.is_empty() {
        return Err(SubjectError::new(
            subject,
            index,
            element,
            SubjectErrorKind::EmptyElement,
        ));
    }
    if let Some(c) = element
        .chars()
        .find(|c| !c.is_ascii() || !is_element_char(*c as u8))
    {
        let kind = match c {
            '*' | '>' | '+' if element.len() == 1 => SubjectErrorKind::WildcardInSubject,
            '*' | '>' | '+' => SubjectErrorKind::PartialWildcard,
            _ => SubjectErrorKind::BadCharacter(c),
        };
        return Err(SubjectError::new(subject, index, element, kind));
    }
    Ok(())
}

/// Validates a whole subject.
fn check_subject(text: &str) -> Result<(), SubjectError> {
    if text.is_empty() {
        return Err(SubjectError::new(text, 0, "", SubjectErrorKind::Empty));
    }
    for (i, element) in text.split('.').enumerate() {
        check_element(text, i + 1, element)?;
    }
    Ok(())
}

/// A validated subject: elements of `A`–`Z`, `0`–`9`, `_`, `-`, separated by dots,
/// no wildcards. Cheap to clone.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Subject(Arc<str>);

impl Subject {
    /// Validates `text` as a subject.
    pub fn new(text: &str) -> Result<Subject, SubjectError> {
        check_subject(text)?;
        Ok(Subject(Arc::from(text)))
    }

    /// The subject as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The elements, in order.
    pub fn elements(&self) -> impl Iterator<Item = &str> + '_ {
        self.0.split('.')
    }

    /// How many elements it has.
    pub fn element_count(&self) -> usize {
        self.0.bytes().filter(|b| *b == b'.').count() + 1
    }

    /// The pattern that matches exactly this subject.
    pub fn to_pattern(&self) -> Pattern {
        Pattern::new(self.as_str()).expect("a subject is a pattern")
    }
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Subject({})", &self.0)
    }
}

impl FromStr for Subject {
    type Err = SubjectError;
    fn from_str(s: &str) -> Result<Subject, SubjectError> {
        Subject::new(s)
    }
}

impl TryFrom<&str> for Subject {
    type Error = SubjectError;
    fn try_from(s: &str) -> Result<Subject, SubjectError> {
        Subject::new(s)
    }
}

impl AsRef<str> for Subject {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

/// One element of a [`Pattern`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PatternElement {
    /// An element that must be equal.
    Literal(Box<str>),
    /// `*`: exactly one element.
    One,
    /// `>`: one or more trailing elements.
    OneOrMore,
    /// `+`: zero or more trailing elements.
    ZeroOrMore,
}

/// A subscription pattern: a subject whose elements may be the wildcards `*`
/// (anywhere), `>` or `+` (last only). Cheap to clone.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Pattern {
    text: Arc<str>,
    elements: Arc<[PatternElement]>,
}

impl Pattern {
    /// Validates `text` as a pattern.
    pub fn new(text: &str) -> Result<Pattern, SubjectError> {
        if text.is_empty() {
            return Err(SubjectError::new(text, 0, "", SubjectErrorKind::Empty));
        }
        let parts: Vec<&str> = text.split('.').collect();
        let last = parts.len();
        let mut elements = Vec::with_capacity(parts.len());
        for (i, part) in parts.iter().enumerate() {
            let index = i + 1;
            let element = match *part {
                "*" => PatternElement::One,
                ">" | "+" if index != last => {
                    return Err(SubjectError::new(
                        text,
                        index,
                        part,
                        SubjectErrorKind::WildcardNotLast,
                    ))
                }
                ">" => PatternElement::OneOrMore,
                "+" => PatternElement::ZeroOrMore,
                _ => match check_element(text, index, part) {
                    Ok(()) => PatternElement::Literal(Box::from(*part)),
                    Err(mut e) => {
                        if e.kind == SubjectErrorKind::WildcardInSubject {
                            e.kind = SubjectErrorKind::PartialWildcard;
                        }
                        return Err(e);
                    }
                },
            };
            elements.push(element);
        }
        Ok(Pattern {
            text: Arc::from(text),
            elements: elements.into(),
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The elements, in order.
    pub fn elements(&self) -> &[PatternElement] {
        &self.elements
    }

    /// True when the pattern has no wildcard (it matches one subject).
    pub fn is_literal(&self) -> bool {
        self.elements
            .iter()
            .all(|e| matches!(e, PatternElement::Literal(_)))
    }

    /// The pattern that matches every subject (`>`).
    pub fn all() -> Pattern {
        Pattern::new(">").expect("valid")
    }

    /// Whether `subject` matches.
    pub fn matches(&self, subject: &Subject) -> bool {
        self.matches_str(subject.as_str())
    }

    /// Whether the (already valid) subject text matches.
    pub fn matches_str(&self, subject: &str) -> bool {
        let mut parts = subject.split('.');
        for element in self.elements.iter() {
            match element {
                PatternElement::Literal(l) => match parts.next() {
                    Some(p) if p == &**l => {}
                    _ => return false,
                },
                PatternElement::One => {
                    if parts.next().is_none() {
                        return false;
                    }
                }
                PatternElement::OneOrMore => return parts.next().is_some(),
                PatternElement::ZeroOrMore => return true,
            }
        }
        parts.next().is_none()
    }

    /// The NATS subjects to subscribe to, under `prefix` (NATS tokens joined with
    /// dots, empty for none), so that a NATS subscription receives exactly the
    /// subjects this pattern matches, mapped with [`nats_subject`]. `*` and `>` are
    /// NATS's own; a trailing `+` becomes two filters, the prefix itself and
    /// `prefix.>`.
    pub fn nats_filters(&self, prefix: &str) -> Vec<String> {
        let join = |tail: &str| -> String {
            match (prefix.is_empty(), tail.is_empty()) {
                (true, _) => tail.to_string(),
                (false, true) => prefix.to_string(),
                (false, false) => format!("{prefix}.{tail}"),
            }
        };
        match self.elements.last() {
            Some(PatternElement::ZeroOrMore) => {
                let head = &self.text[..self.text.len() - 1];
                let head = head.strip_suffix('.').unwrap_or("");
                let mut filters = Vec::with_capacity(2);
                if !head.is_empty() {
                    filters.push(join(head));
                    filters.push(join(&format!("{head}.>")));
                } else {
                    filters.push(join(">"));
                }
                filters
            }
            _ => vec![join(&self.text)],
        }
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl fmt::Debug for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Pattern({})", &self.text)
    }
}

impl FromStr for Pattern {
    type Err = SubjectError;
    fn from_str(s: &str) -> Result<Pattern, SubjectError> {
        Pattern::new(s)
    }
}

impl TryFrom<&str> for Pattern {
    type Error = SubjectError;
    fn try_from(s: &str) -> Result<Pattern, SubjectError> {
        Pattern::new(s)
    }
}

impl From<&Subject> for Pattern {
    fn from(subject: &Subject) -> Pattern {
        subject.to_pattern()
    }
}

/// The NATS subject a bus subject travels on under `prefix`: the prefix, a dot and
/// the subject's elements unchanged (every element is a valid NATS token).
pub fn nats_subject(prefix: &str, subject: &Subject) -> String {
    if prefix.is_empty() {
        subject.as_str().to_string()
    } else {
        format!("{prefix}.{}", subject.as_str())
    }
}

/// The bus subject a NATS subject carries under `prefix`, if it is one.
pub fn from_nats_subject(prefix: &str, nats: &str) -> Result<Subject, SubjectError> {
    let tail = if prefix.is_empty() {
        nats
    } else {
        match nats.strip_prefix(prefix).and_then(|t| t.strip_prefix('.')) {
            Some(t) => t,
            None => {
                return Err(SubjectError::new(
                    nats,
                    0,
                    nats,
                    SubjectErrorKind::OutsidePrefix(prefix.to_string()),
                ))
            }
        }
    };
    Subject::new(tail)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(t: &str) -> Subject {
        Subject::new(t).unwrap()
    }

    fn p(t: &str) -> Pattern {
        Pattern::new(t).unwrap()
    }

    #[test]
    fn subjects_accept_the_convention_and_name_the_bad_element() {
        assert_eq!(s("FFTB.MMS.SAT-1.MSG_1").element_count(), 4);
        let e = Subject::new("FFTB.mms.SAT1").unwrap_err();
        assert_eq!((e.index, e.element.as_str()), (2, "mms"));
        assert_eq!(e.kind, SubjectErrorKind::BadCharacter('m'));
        assert!(
            e.to_string().contains("element 2 `mms` of `FFTB.mms.SAT1`"),
            "{e}"
        );
        let e = Subject::new("FFTB..SAT1").unwrap_err();
        assert_eq!(
            (e.index, e.kind.clone()),
            (2, SubjectErrorKind::EmptyElement)
        );
        let e = Subject::new("FFTB.").unwrap_err();
        assert_eq!(e.index, 2);
        assert_eq!(Subject::new("").unwrap_err().kind, SubjectErrorKind::Empty);
        let e = Subject::new("FFTB.*").unwrap_err();
        assert_eq!(e.kind, SubjectErrorKind::WildcardInSubject);
        let e = Subject::new("FFTB.SAT 1").unwrap_err();
        assert_eq!(e.kind, SubjectErrorKind::BadCharacter(' '));
        let e = Subject::new("FFTB.SATÉ").unwrap_err();
        assert_eq!(e.kind, SubjectErrorKind::BadCharacter('É'));
    }

    #[test]
    fn patterns_refuse_misplaced_and_partial_wildcards() {
        let e = Pattern::new("A.>.B").unwrap_err();
        assert_eq!(
            (e.index, e.kind.clone()),
            (2, SubjectErrorKind::WildcardNotLast)
        );
        let e = Pattern::new("A.+.B").unwrap_err();
        assert_eq!(e.kind, SubjectErrorKind::WildcardNotLast);
        let e = Pattern::new("A.SAT*").unwrap_err();
        assert_eq!(
            (e.index, e.kind.clone()),
            (2, SubjectErrorKind::PartialWildcard)
        );
        let e = Pattern::new("A.**").unwrap_err();
        assert_eq!(e.kind, SubjectErrorKind::PartialWildcard);
        assert!(Pattern::new("*.*.>").is_ok());
    }

    #[test]
    fn wildcards_match_as_gmsec_defines_them() {
        let cases: &[(&str, &str, bool)] = &[
            ("A.B.C", "A.B.C", true),
            ("A.B.C", "A.B", false),
            ("A.B.C", "A.B.C.D", false),
            ("A.*.C", "A.X.C", true),
            ("A.*.C", "A.C", false),
            ("A.*", "A.B.C", false),
            ("A.>", "A", false),
            ("A.>", "A.B", true),
            ("A.>", "A.B.C.D", true),
            ("A.+", "A", true),
            ("A.+", "A.B", true),
            ("A.+", "A.B.C", true),
            ("A.+", "B", false),
            ("A.+", "AB", false),
            ("*.B.+", "X.B", true),
            ("*.B.+", "X.C", false),
            (">", "A", true),
            ("+", "A.B", true),
        ];
        for (pattern, subject, expected) in cases {
            assert_eq!(
                p(pattern).matches(&s(subject)),
                *expected,
                "{pattern} against {subject}"
            );
        }
    }

    #[test]
    fn nats_filters_map_plus_to_the_prefix_and_its_tail() {
        assert_eq!(p("A.*.C").nats_filters("bus"), vec!["bus.A.*.C"]);
        assert_eq!(p("A.>").nats_filters("bus"), vec!["bus.A.>"]);
        assert_eq!(p("A.B.+").nats_filters("bus"), vec!["bus.A.B", "bus.A.B.>"]);
        assert_eq!(p("+").nats_filters("bus"), vec!["bus.>"]);
        assert_eq!(p("A.+").nats_filters(""), vec!["A", "A.>"]);
        assert_eq!(nats_subject("bus", &s("A.B")), "bus.A.B");
        assert_eq!(from_nats_subject("bus", "bus.A.B").unwrap(), s("A.B"));
        assert!(from_nats_subject("bus", "other.A.B").is_err());
    }
}
