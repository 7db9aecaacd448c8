//! The paper's XML message (seed `003_...` section III.A.2), written byte for byte as
//! the paper shows it and read by a strict parser on `quick-xml`.
//!
//! The writer produces exactly:
//!
//! ```text
//! <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
//! <msg>
//!   <e key="key4" typ="I" val="12" />
//!   <e key="key2" typ="F" val="1234.5" />
//! </msg>
//! ```
//!
//! one line per entry, indented by two spaces, attributes in the order `key`, `typ`,
//! `val`, a space before `/>`, and no newline after `</msg>`. In attribute values it
//! escapes `&`, `<`, `>`, `"` and, so that they survive XML's attribute-value
//! normalisation, tab, line feed and carriage return (`&#9;`, `&#10;`, `&#13;`).
//! Text XML 1.0 cannot carry (other control characters) is refused.
//!
//! The parser accepts any well-formed document of that shape and refuses, with the
//! line and column of the fault:
//!
//! - a missing prolog (the document must start with `<?xml version="1.0" ...?>`,
//!   optionally after a byte-order mark), another version, an encoding other than
//!   UTF-8, or bytes that are not UTF-8;
//! - a document type declaration, a root other than `<msg>`, attributes on `<msg>`,
//!   text or CDATA between elements, anything but comments, processing instructions
//!   and white space after `</msg>`, or a document that ends inside `<msg>`;
//! - an entry that is not an empty-element tag `<e ... />`, attributes missing, out
//!   of order (strictly `key`, `typ`, `val`), repeated or unknown;
//! - an empty key, a key given twice, a type letter it does not know, and a value
//!   that does not parse as its type (an `I` beyond 32 bits, an `F` that overflows
//!   `f32`, a `B` other than `true`, `false`, `1`, `0`, invalid base64).
//!
//! Numbers follow XML Schema's lexical forms: integers `[+-]?[0-9]+`, floats
//! `[+-]?(digits[.digits]|.digits)([eE][+-]?digits)?`, `INF`, `-INF` or `NaN`.

use std::collections::HashSet;
use std::fmt;

use base64::Engine;
use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

use super::{EncodeError, Entry, Message, Value, ValueType};

/// The prolog the writer emits (and the paper shows).
pub const PROLOG: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>"#;

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

// ---------------------------------------------------------------------------------
// Writing

/// Appends the message's XML to `out`.
pub fn write(message: &Message, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    out.reserve(PROLOG.len() + 16 + message.len() * 40);
    out.extend_from_slice(PROLOG.as_bytes());
    out.extend_from_slice(b"\n<msg>\n");
    for entry in message.entries() {
        out.extend_from_slice(b"  <e key=\"");
        escape_into(&entry.key, &entry.key, "key", out)?;
        out.extend_from_slice(b"\" typ=\"");
        out.push(entry.value.value_type().letter() as u8);
        out.extend_from_slice(b"\" val=\"");
        write_value(&entry.key, &entry.value, out)?;
        out.extend_from_slice(b"\" />\n");
    }
    out.extend_from_slice(b"</msg>");
    Ok(())
}

fn write_value(key: &str, value: &Value, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    match value {
        Value::I32(v) => out.extend_from_slice(v.to_string().as_bytes()),
        Value::I64(v) => out.extend_from_slice(v.to_string().as_bytes()),
        Value::F32(v) => {
            if v.is_finite() {
                out.extend_from_slice(ryu::Buffer::new().format_finite(*v).as_bytes())
            } else {
                out.extend_from_slice(non_finite(v.is_nan(), v.is_sign_negative()))
            }
        }
        Value::F64(v) => {
            if v.is_finite() {
                out.extend_from_slice(ryu::Buffer::new().format_finite(*v).as_bytes())
            } else {
                out.extend_from_slice(non_finite(v.is_nan(), v.is_sign_negative()))
            }
        }
        Value::Bool(v) => out.extend_from_slice(if *v { b"true" } else { b"false" }),
        Value::Str(s) => escape_into(key, s, "value", out)?,
        Value::Bin(b) => {
            let start = out.len();
            out.resize(
                start + base64::encoded_len(b.len(), true).expect("fits memory"),
                0,
            );
            let n = B64
                .encode_slice(b, &mut out[start..])
                .expect("sized by encoded_len");
            out.truncate(start + n);
        }
    }
    Ok(())
}

fn non_finite(nan: bool, negative: bool) -> &'static [u8] {
    match (nan, negative) {
        (true, _) => b"NaN",
        (false, false) => b"INF",
        (false, true) => b"-INF",
    }
}

/// True for the characters XML 1.0 allows in a document (production `Char`).
fn is_xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

fn escape_into(
    key: &str,
    text: &str,
    what: &'static str,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    let mut plain = 0;
    for (i, c) in text.char_indices() {
        let replacement: &[u8] = match c {
            '&' => b"&amp;",
            '<' => b"&lt;",
            '>' => b"&gt;",
            '"' => b"&quot;",
            '\t' => b"&#9;",
            '\n' => b"&#10;",
            '\r' => b"&#13;",
            c if !is_xml_char(c) => {
                return Err(EncodeError::NotXmlText {
                    key: key.to_string(),
                    what,
                    found: c,
                })
            }
            _ => continue,
        };
        out.extend_from_slice(&text.as_bytes()[plain..i]);
        out.extend_from_slice(replacement);
        plain = i + c.len_utf8();
    }
    out.extend_from_slice(&text.as_bytes()[plain..]);
    Ok(())
}

/// Whether the message can be written as XML (every key and string is XML text).
pub fn is_representable(message: &Message) -> bool {
    message.entries().iter().all(|e| {
        e.key.chars().all(is_xml_char)
            && match &e.value {
                Value::Str(s) => s.chars().all(is_xml_char),
                _ => true,
            }
    })
}

// ---------------------------------------------------------------------------------
// Parsing

/// What is wrong with an XML message.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum XmlErrorKind {
    /// The bytes are not UTF-8.
    NotUtf8,
    /// The document does not start with the XML prolog.
    MissingProlog,
    /// The prolog is there but says something else (version, encoding, standalone).
    BadProlog(String),
    /// Not well-formed XML (the reader's own message).
    Syntax(String),
    /// A `<!DOCTYPE ...>`: refused, so no entity can be declared.
    DocType,
    /// The root element is missing.
    MissingMsg,
    /// An element other than `<msg>` (at the root) or `<e>` (inside it).
    UnexpectedElement(String),
    /// Text or CDATA where only elements may be.
    UnexpectedText(String),
    /// `<msg>` has attributes.
    MsgAttribute(String),
    /// An entry written as `<e ...>...</e>` instead of the empty-element tag.
    NotEmptyElement,
    /// An attribute missing from an entry.
    MissingAttribute(&'static str),
    /// An attribute where another was expected: entries take exactly `key`, `typ`,
    /// `val`, in that order.
    AttributeOrder {
        /// The attribute the order calls for.
        expected: &'static str,
        /// The one found there.
        found: String,
    },
    /// A value that is not well-formed (an unknown entity, a `<`).
    BadAttributeValue {
        /// The attribute.
        attribute: &'static str,
        /// Why.
        reason: String,
    },
    /// The key is empty.
    EmptyKey,
    /// The key appeared before in this message.
    DuplicateKey(String),
    /// A type letter that is not in the table.
    UnknownType(String),
    /// A value that does not parse as its type.
    BadValue {
        /// The entry's key.
        key: String,
        /// Its type.
        typ: ValueType,
        /// The value as written (shortened if long).
        val: String,
        /// Why.
        reason: String,
    },
    /// The document ends inside `<msg>`.
    Unterminated,
    /// Something other than white space, comments and processing instructions
    /// after `</msg>`.
    TrailingContent,
}

/// An XML message was refused: where and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct XmlError {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
    /// Byte offset in the input.
    pub offset: usize,
    /// What is wrong.
    pub kind: XmlErrorKind,
}

impl fmt::Display for XmlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "XML message, line {} column {}: ",
            self.line, self.column
        )?;
        match &self.kind {
            XmlErrorKind::NotUtf8 => write!(f, "not UTF-8"),
            XmlErrorKind::MissingProlog => write!(
                f,
                "the message must start with the XML prolog `<?xml version=\"1.0\" ...?>`"
            ),
            XmlErrorKind::BadProlog(why) => write!(f, "bad XML prolog: {why}"),
            XmlErrorKind::Syntax(why) => write!(f, "not well-formed: {why}"),
            XmlErrorKind::DocType => write!(f, "a document type declaration is not allowed"),
            XmlErrorKind::MissingMsg => write!(f, "no `<msg>` element"),
            XmlErrorKind::UnexpectedElement(name) => write!(
                f,
                "unexpected element `<{name}>`: a message is `<msg>` holding `<e ... />` entries"
            ),
            XmlErrorKind::UnexpectedText(text) => write!(f, "unexpected text {text:?}"),
            XmlErrorKind::MsgAttribute(name) => {
                write!(f, "`<msg>` takes no attributes, found `{name}`")
            }
            XmlErrorKind::NotEmptyElement => write!(
                f,
                "an entry must be an empty-element tag `<e key=\"...\" typ=\"...\" val=\"...\" />`"
            ),
            XmlErrorKind::MissingAttribute(name) => {
                write!(f, "entry without its `{name}` attribute")
            }
            XmlErrorKind::AttributeOrder { expected, found } => write!(
                f,
                "expected attribute `{expected}`, found `{found}` (entry attributes are strictly key, typ, val)"
            ),
            XmlErrorKind::BadAttributeValue { attribute, reason } => {
                write!(f, "attribute `{attribute}`: {reason}")
            }
            XmlErrorKind::EmptyKey => write!(f, "empty key"),
            XmlErrorKind::DuplicateKey(key) => write!(f, "key `{key}` appears twice"),
            XmlErrorKind::UnknownType(t) => write!(
                f,
                "unknown type `{t}` (known: I, F, D, L, B, S, X)"
            ),
            XmlErrorKind::BadValue {
                key,
                typ,
                val,
                reason,
            } => write!(f, "entry `{key}`: `{val}` is not a {}: {reason}", typ.name()),
            XmlErrorKind::Unterminated => write!(f, "the message ends before `</msg>`"),
            XmlErrorKind::TrailingContent => write!(f, "content after `</msg>`"),
        }
    }
}

impl std::error::Error for XmlError {}

/// Turns byte offsets into lines and columns, for errors only.
struct Locator<'a> {
    text: &'a str,
}

impl Locator<'_> {
    fn error(&self, offset: usize, kind: XmlErrorKind) -> XmlError {
        let offset = offset.min(self.text.len());
        let mut cut = offset;
        while !self.text.is_char_boundary(cut) {
            cut -= 1;
        }
        let before = &self.text[..cut];
        let line = before.bytes().filter(|b| *b == b'\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before[line_start..].chars().count() + 1;
        XmlError {
            line: u32::try_from(line).unwrap_or(u32::MAX),
            column: u32::try_from(column).unwrap_or(u32::MAX),
            offset,
            kind,
        }
    }
}

#[derive(PartialEq)]
enum State {
    Prolog,
    BeforeMsg,
    InMsg,
    AfterMsg,
}

/// Parses an XML message strictly (see the [module documentation](self)).
pub fn parse(bytes: &[u8]) -> Result<Message, XmlError> {
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let valid = std::str::from_utf8(&bytes[..e.valid_up_to()]).expect("valid prefix");
            return Err(Locator { text: valid }.error(e.valid_up_to(), XmlErrorKind::NotUtf8));
        }
    };
    let at = Locator { text };
    // A byte-order mark may precede the prolog.
    let bom = if text.starts_with('\u{FEFF}') { 3 } else { 0 };
    let mut reader = Reader::from_str(&text[bom..]);
    {
        let config = reader.config_mut();
        config.trim_text(false);
        config.check_end_names = true;
        config.check_comments = true;
        config.expand_empty_elements = false;
    }
    let mut state = State::Prolog;
    let mut message = Message::new();
    let mut keys: HashSet<String> = HashSet::new();
    loop {
        let start = bom + reader.buffer_position() as usize;
        let event = match reader.read_event() {
            Ok(e) => e,
            Err(e) => {
                let offset = bom + reader.error_position() as usize;
                return Err(at.error(offset, XmlErrorKind::Syntax(e.to_string())));
            }
        };
        match state {
            State::Prolog => match event {
                Event::Decl(decl) if start == bom => {
                    check_prolog(&decl)
                        .map_err(|why| at.error(start, XmlErrorKind::BadProlog(why)))?;
                    state = State::BeforeMsg;
                }
                _ => return Err(at.error(start, XmlErrorKind::MissingProlog)),
            },
            State::BeforeMsg | State::AfterMsg => match event {
                Event::Text(t) => {
                    if !is_blank(&t) {
                        let kind = if state == State::AfterMsg {
                            XmlErrorKind::TrailingContent
                        } else {
                            XmlErrorKind::UnexpectedText(shorten(&String::from_utf8_lossy(&t)))
                        };
                        return Err(at.error(start, kind));
                    }
                }
                Event::Comment(_) | Event::PI(_) => {}
                Event::DocType(_) => return Err(at.error(start, XmlErrorKind::DocType)),
                Event::Eof => {
                    if state == State::AfterMsg {
                        return Ok(message);
                    }
                    return Err(at.error(start, XmlErrorKind::MissingMsg));
                }
                _ if state == State::AfterMsg => {
                    return Err(at.error(start, XmlErrorKind::TrailingContent))
                }
                Event::Start(e) | Event::Empty(e) if e.name().as_ref() != b"msg" => {
                    return Err(at.error(
                        start,
                        XmlErrorKind::UnexpectedElement(
                            String::from_utf8_lossy(e.name().as_ref()).into(),
                        ),
                    ))
                }
                Event::Start(e) => {
                    check_no_attributes(&e, start, &at)?;
                    state = State::InMsg;
                }
                Event::Empty(e) => {
                    check_no_attributes(&e, start, &at)?;
                    state = State::AfterMsg;
                }
                Event::Decl(_) => {
                    return Err(at.error(
                        start,
                        XmlErrorKind::BadProlog("a second XML declaration".into()),
                    ))
                }
                Event::CData(_) => {
                    return Err(at.error(start, XmlErrorKind::UnexpectedText("CDATA".into())))
                }
                Event::End(_) => {
                    return Err(at.error(start, XmlErrorKind::Syntax("unexpected end tag".into())))
                }
            },
            State::InMsg => match event {
                Event::Text(t) => {
                    if !is_blank(&t) {
                        return Err(at.error(
                            start,
                            XmlErrorKind::UnexpectedText(shorten(&String::from_utf8_lossy(&t))),
                        ));
                    }
                }
                Event::Comment(_) | Event::PI(_) => {}
                Event::Empty(e) if e.name().as_ref() == b"e" => {
                    let entry = parse_entry(&e, start, &at)?;
                    if !keys.insert(entry.key.clone()) {
                        let offset = attribute_offsets(&e, start)
                            .first()
                            .copied()
                            .unwrap_or(start);
                        return Err(at.error(offset, XmlErrorKind::DuplicateKey(entry.key)));
                    }
                    message.push_unchecked(entry);
                }
                Event::Start(e) if e.name().as_ref() == b"e" => {
                    return Err(at.error(start, XmlErrorKind::NotEmptyElement))
                }
                Event::Start(e) | Event::Empty(e) => {
                    return Err(at.error(
                        start,
                        XmlErrorKind::UnexpectedElement(
                            String::from_utf8_lossy(e.name().as_ref()).into(),
                        ),
                    ))
                }
                Event::End(_) => state = State::AfterMsg,
                Event::CData(_) => {
                    return Err(at.error(start, XmlErrorKind::UnexpectedText("CDATA".into())))
                }
                Event::DocType(_) => return Err(at.error(start, XmlErrorKind::DocType)),
                Event::Decl(_) => {
                    return Err(at.error(
                        start,
                        XmlErrorKind::BadProlog("a second XML declaration".into()),
                    ))
                }
                Event::Eof => return Err(at.error(start, XmlErrorKind::Unterminated)),
            },
        }
    }
}

fn is_blank(text: &[u8]) -> bool {
    text.iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
}

fn shorten(text: &str) -> String {
    const MAX: usize = 40;
    if text.chars().count() <= MAX {
        text.to_string()
    } else {
        let mut s: String = text.chars().take(MAX).collect();
        s.push('…');
        s
    }
}

fn check_prolog(decl: &quick_xml::events::BytesDecl<'_>) -> Result<(), String> {
    let version = decl.version().map_err(|e| e.to_string())?;
    if version.as_ref() != b"1.0" {
        return Err(format!(
            "version `{}`, expected `1.0`",
            String::from_utf8_lossy(&version)
        ));
    }
    if let Some(encoding) = decl.encoding() {
        let encoding = encoding.map_err(|e| e.to_string())?;
        if !encoding.eq_ignore_ascii_case(b"UTF-8") {
            return Err(format!(
                "encoding `{}`, expected `UTF-8`",
                String::from_utf8_lossy(&encoding)
            ));
        }
    }
    if let Some(standalone) = decl.standalone() {
        let standalone = standalone.map_err(|e| e.to_string())?;
        if standalone.as_ref() != b"yes" && standalone.as_ref() != b"no" {
            return Err(format!(
                "standalone `{}`, expected `yes` or `no`",
                String::from_utf8_lossy(&standalone)
            ));
        }
    }
    Ok(())
}

fn check_no_attributes(e: &BytesStart<'_>, start: usize, at: &Locator<'_>) -> Result<(), XmlError> {
    if let Some(attr) = e.attributes().next() {
        let offset = attribute_offsets(e, start)
            .first()
            .copied()
            .unwrap_or(start);
        let name = match attr {
            Ok(a) => String::from_utf8_lossy(a.key.as_ref()).into_owned(),
            Err(err) => return Err(at.error(offset, XmlErrorKind::Syntax(err.to_string()))),
        };
        return Err(at.error(offset, XmlErrorKind::MsgAttribute(name)));
    }
    Ok(())
}

/// Byte offsets (in the whole input) of each attribute's name in a tag that starts
/// at `start` (its `<`). The reader has checked the tag's syntax; this only finds
/// where each attribute begins, skipping quoted values.
fn attribute_offsets(e: &BytesStart<'_>, start: usize) -> Vec<usize> {
    let raw: &[u8] = e.as_ref();
    let mut offsets = Vec::new();
    let mut i = e.name().as_ref().len();
    loop {
        while i < raw.len() && raw[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= raw.len() || raw[i] == b'/' {
            break;
        }
        offsets.push(start + 1 + i);
        while i < raw.len() && raw[i] != b'=' && !raw[i].is_ascii_whitespace() {
            i += 1;
        }
        while i < raw.len() && raw[i] != b'"' && raw[i] != b'\'' {
            i += 1;
        }
        let Some(&quote) = raw.get(i) else { break };
        i += 1;
        while i < raw.len() && raw[i] != quote {
            i += 1;
        }
        i += 1;
    }
    offsets
}

const ATTRIBUTES: [&str; 3] = ["key", "typ", "val"];

fn parse_entry(e: &BytesStart<'_>, start: usize, at: &Locator<'_>) -> Result<Entry, XmlError> {
    let offsets = attribute_offsets(e, start);
    let offset_of = |i: usize| offsets.get(i).copied().unwrap_or(start);
    let mut values: [String; 3] = Default::default();
    let mut attrs = e.attributes();
    attrs.with_checks(true);
    for (i, expected) in ATTRIBUTES.iter().enumerate() {
        let attr = match attrs.next() {
            None => return Err(at.error(start, XmlErrorKind::MissingAttribute(expected))),
            Some(Err(err)) => {
                return Err(at.error(offset_of(i), XmlErrorKind::Syntax(err.to_string())))
            }
            Some(Ok(a)) => a,
        };
        if attr.key.as_ref() != expected.as_bytes() {
            return Err(at.error(
                offset_of(i),
                XmlErrorKind::AttributeOrder {
                    expected,
                    found: String::from_utf8_lossy(attr.key.as_ref()).into_owned(),
                },
            ));
        }
        let raw = std::str::from_utf8(&attr.value).expect("the input is UTF-8");
        values[i] = attribute_value(raw).map_err(|reason| {
            at.error(
                offset_of(i),
                XmlErrorKind::BadAttributeValue {
                    attribute: expected,
                    reason,
                },
            )
        })?;
    }
    match attrs.next() {
        None => {}
        Some(Ok(a)) => {
            return Err(at.error(
                offset_of(3),
                XmlErrorKind::AttributeOrder {
                    expected: "/>",
                    found: String::from_utf8_lossy(a.key.as_ref()).into_owned(),
                },
            ))
        }
        Some(Err(err)) => return Err(at.error(offset_of(3), XmlErrorKind::Syntax(err.to_string()))),
    }
    let [key, typ, val] = values;
    if key.is_empty() {
        return Err(at.error(offset_of(0), XmlErrorKind::EmptyKey));
    }
    let Some(value_type) = ValueType::from_letter(&typ) else {
        return Err(at.error(offset_of(1), XmlErrorKind::UnknownType(typ)));
    };
    let value = parse_value(value_type, &val).map_err(|reason| {
        at.error(
            offset_of(2),
            XmlErrorKind::BadValue {
                key: key.clone(),
                typ: value_type,
                val: shorten(&val),
                reason,
            },
        )
    })?;
    Ok(Entry { key, value })
}

/// An attribute's value as XML defines it: literal white space normalised to spaces,
/// then references replaced; refuses `<` and characters XML does not allow.
fn attribute_value(raw: &str) -> Result<String, String> {
    if raw.contains('<') {
        return Err("`<` must be written `&lt;`".into());
    }
    let normalised;
    let raw = if raw.contains(['\t', '\n', '\r']) {
        normalised = raw.replace("\r\n", " ").replace(['\t', '\n', '\r'], " ");
        normalised.as_str()
    } else {
        raw
    };
    let value = quick_xml::escape::unescape(raw).map_err(|e| e.to_string())?;
    if let Some(c) = value.chars().find(|c| !is_xml_char(*c)) {
        return Err(format!("the character {c:?} is not allowed in XML 1.0"));
    }
    Ok(value.into_owned())
}

/// A value's `val` text as this format writes it, unescaped (the JSON form of the
/// bridge, `docs/wire-format.md` 7.6, uses the same text).
pub fn value_text(value: &Value) -> String {
    let mut out = Vec::new();
    match value {
        Value::Str(s) => return s.clone(),
        other => write_value("", other, &mut out).expect("only strings can fail to encode"),
    }
    String::from_utf8(out).expect("numbers, booleans and base64 are ASCII")
}

/// Reads a `val` text (unescaped) of type `typ`, with the checks of this format.
pub fn value_from_text(typ: ValueType, val: &str) -> Result<Value, String> {
    parse_value(typ, val)
}

fn parse_value(typ: ValueType, val: &str) -> Result<Value, String> {
    Ok(match typ {
        ValueType::I32 => {
            let v = parse_integer(val)?;
            Value::I32(i32::try_from(v).map_err(|_| "out of the 32-bit range".to_string())?)
        }
        ValueType::I64 => Value::I64(parse_integer(val)?),
        ValueType::F32 => {
            let v = parse_float(val)?;
            let f = v as f32;
            if v.is_finite() && !f.is_finite() {
                return Err("out of the 32-bit float range".into());
            }
            // Parsed as f32 directly so that rounding happens once.
            Value::F32(if v.is_finite() {
                val.parse::<f32>().map_err(|e| e.to_string())?
            } else {
                f
            })
        }
        ValueType::F64 => Value::F64(parse_float(val)?),
        ValueType::Bool => Value::Bool(match val {
            "true" | "1" => true,
            "false" | "0" => false,
            _ => return Err("expected `true`, `false`, `1` or `0`".into()),
        }),
        ValueType::Str => Value::Str(val.to_string()),
        ValueType::Bin => Value::Bin(
            B64.decode(val)
                .map_err(|e| format!("invalid base64: {e}"))?
                .into(),
        ),
    })
}

fn parse_integer(val: &str) -> Result<i64, String> {
    let digits = val.strip_prefix(['+', '-']).unwrap_or(val);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err("expected an integer `[+-]?[0-9]+`".into());
    }
    val.parse::<i64>()
        .map_err(|_| "out of the 64-bit range".to_string())
}

fn parse_float(val: &str) -> Result<f64, String> {
    match val {
        "INF" | "+INF" => return Ok(f64::INFINITY),
        "-INF" => return Ok(f64::NEG_INFINITY),
        "NaN" => return Ok(f64::NAN),
        _ => {}
    }
    let b = val.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut digits = i - int_start;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let frac_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        digits += i - frac_start;
    }
    if digits == 0 {
        return Err("expected a number such as `1234.5`, `-1e-3`, `INF` or `NaN`".into());
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let exp_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == exp_start {
            return Err("an exponent needs digits".into());
        }
    }
    if i != b.len() {
        return Err("expected a number such as `1234.5`, `-1e-3`, `INF` or `NaN`".into());
    }
    let v: f64 = val
        .parse()
        .map_err(|e: std::num::ParseFloatError| e.to_string())?;
    if !v.is_finite() {
        return Err("out of the 64-bit float range".into());
    }
    Ok(v)
}

#[cfg(test)]
mod tests;
