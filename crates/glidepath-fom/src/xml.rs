//! A small element tree built from `quick-xml` events, keeping the byte offset of
//! every element so that later checks can say where a problem is.
//!
//! FOM modules are at most a few megabytes, and reading them into a tree first
//! keeps the OMT interpretation (in `parse.rs`) free of streaming bookkeeping and
//! lets it look at children in any order, as both OMT layouts require.
//! Namespace prefixes are dropped: 1516-2010 files use a default namespace, older
//! ones none, and no OMT element name depends on its namespace.

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

use crate::error::FomErrorKind;

/// One XML element with its attributes, child elements and text.
#[derive(Debug)]
pub(crate) struct Element {
    /// The local name (namespace prefix removed).
    pub(crate) name: String,
    /// Attributes by local name, unescaped, in document order.
    pub(crate) attributes: Vec<(String, String)>,
    /// Child elements in document order.
    pub(crate) children: Vec<Element>,
    /// Text and CDATA directly inside this element, concatenated, untrimmed.
    pub(crate) text: String,
    /// Byte offset of the `<` that opens this element.
    pub(crate) offset: usize,
}

impl Element {
    /// The first child element called `name`.
    pub(crate) fn child(&self, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.name == name)
    }

    /// All child elements called `name`.
    pub(crate) fn children_named<'a>(
        &'a self,
        name: &'a str,
    ) -> impl Iterator<Item = &'a Element> + 'a {
        self.children.iter().filter(move |c| c.name == name)
    }

    /// The value of the XML attribute called `name`.
    pub(crate) fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The element's text with surrounding white space removed.
    pub(crate) fn trimmed_text(&self) -> &str {
        self.text.trim()
    }
}

/// A parse failure: the byte offset where it was detected and what is wrong.
pub(crate) type XmlFailure = (usize, FomErrorKind);

/// Reads a whole document and returns its root element.
///
/// Fails on malformed XML (as reported by `quick-xml`, with its error position),
/// on mismatched end tags, on a document cut short (reported at the end of the
/// input, naming the innermost element left open), and on a document with no or
/// several root elements.
pub(crate) fn parse_document(text: &str) -> Result<Element, XmlFailure> {
    let mut reader = Reader::from_str(text);
    // White space is kept so that `buffer_position()` before each event is the
    // exact start of that event; the OMT interpretation trims text itself.
    reader.config_mut().trim_text(false);

    let mut stack: Vec<Element> = Vec::new();
    let mut root: Option<Element> = None;

    loop {
        let offset = to_usize(reader.buffer_position());
        let event = reader.read_event().map_err(|e| {
            let message = e.to_string();
            (
                to_usize(reader.error_position()),
                FomErrorKind::Xml { message },
            )
        })?;
        match event {
            Event::Start(start) => {
                stack.push(element_from_start(&start, offset)?);
            }
            Event::Empty(start) => {
                let element = element_from_start(&start, offset)?;
                attach(&mut stack, &mut root, element)?;
            }
            Event::End(_) => {
                // quick-xml has already checked that the end tag matches.
                let element = stack.pop().ok_or_else(|| {
                    (
                        offset,
                        FomErrorKind::Xml {
                            message: "end tag without a matching start tag".into(),
                        },
                    )
                })?;
                attach(&mut stack, &mut root, element)?;
            }
            Event::Text(t) => {
                if let Some(top) = stack.last_mut() {
                    let s = t.unescape().map_err(|e| {
                        (
                            offset,
                            FomErrorKind::Xml {
                                message: e.to_string(),
                            },
                        )
                    })?;
                    top.text.push_str(&s);
                } else if !t.iter().all(u8::is_ascii_whitespace) && !is_bom(&t) {
                    return Err((
                        offset,
                        FomErrorKind::Xml {
                            message: "text outside the root element".into(),
                        },
                    ));
                }
            }
            Event::CData(c) => {
                if let Some(top) = stack.last_mut() {
                    top.text.push_str(&String::from_utf8_lossy(&c));
                }
            }
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) | Event::DocType(_) => {}
            Event::Eof => break,
        }
    }

    if let Some(open) = stack.last() {
        return Err((
            text.len(),
            FomErrorKind::Xml {
                message: format!("unexpected end of input: <{}> is not closed", open.name),
            },
        ));
    }
    root.ok_or_else(|| {
        (
            text.len(),
            FomErrorKind::Xml {
                message: "the document has no root element".into(),
            },
        )
    })
}

/// Adds a finished element to its parent, or makes it the document's root.
fn attach(
    stack: &mut [Element],
    root: &mut Option<Element>,
    element: Element,
) -> Result<(), XmlFailure> {
    if let Some(parent) = stack.last_mut() {
        parent.children.push(element);
        Ok(())
    } else if root.is_some() {
        Err((
            element.offset,
            FomErrorKind::Xml {
                message: "more than one root element".into(),
            },
        ))
    } else {
        *root = Some(element);
        Ok(())
    }
}

fn element_from_start(start: &BytesStart<'_>, offset: usize) -> Result<Element, XmlFailure> {
    let name = String::from_utf8_lossy(start.local_name().as_ref()).into_owned();
    let mut attributes = Vec::new();
    for attribute in start.attributes() {
        let attribute = attribute.map_err(|e| {
            (
                offset,
                FomErrorKind::Xml {
                    message: e.to_string(),
                },
            )
        })?;
        let key = String::from_utf8_lossy(attribute.key.local_name().as_ref()).into_owned();
        let value = attribute
            .unescape_value()
            .map_err(|e| {
                (
                    offset,
                    FomErrorKind::Xml {
                        message: e.to_string(),
                    },
                )
            })?
            .into_owned();
        attributes.push((key, value));
    }
    Ok(Element {
        name,
        attributes,
        children: Vec::new(),
        text: String::new(),
        offset,
    })
}

/// A UTF-8 byte order mark before the declaration arrives as text; it is not content.
fn is_bom(bytes: &[u8]) -> bool {
    let rest = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    rest.len() < bytes.len() && rest.iter().all(u8::is_ascii_whitespace)
}

fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_a_tree_with_offsets_and_local_names() {
        let text = "<?xml version=\"1.0\"?>\n<a xmlns=\"urn:x\" xmlns:p=\"urn:p\">\n  <p:b k=\"v&amp;w\">hi &lt;there&gt;</p:b><c/></a>";
        let root = parse_document(text).unwrap();
        assert_eq!(root.name, "a");
        assert_eq!(root.offset, text.find("<a").unwrap());
        let b = root.child("b").unwrap();
        assert_eq!(b.offset, text.find("<p:b").unwrap());
        assert_eq!(b.attribute("k"), Some("v&w"));
        assert_eq!(b.trimmed_text(), "hi <there>");
        assert_eq!(root.child("c").unwrap().offset, text.find("<c/>").unwrap());
    }

    #[test]
    fn truncated_document_is_reported_at_the_end() {
        let text = "<a><b>x</b><c>";
        let (offset, kind) = parse_document(text).unwrap_err();
        assert_eq!(offset, text.len());
        assert!(matches!(kind, FomErrorKind::Xml { message } if message.contains("<c>")));
    }

    #[test]
    fn document_cut_inside_a_tag_is_an_error() {
        let text = "<a><b>x</b><c na";
        let (offset, kind) = parse_document(text).unwrap_err();
        assert_eq!(offset, text.find("<c").unwrap());
        assert!(matches!(kind, FomErrorKind::Xml { .. }));
    }

    #[test]
    fn mismatched_end_tag_is_an_error() {
        assert!(parse_document("<a><b></a>").is_err());
    }

    #[test]
    fn byte_order_mark_is_accepted() {
        let root = parse_document("\u{feff}<?xml version=\"1.0\"?><a/>").unwrap();
        assert_eq!(root.name, "a");
    }

    #[test]
    fn two_roots_are_an_error() {
        assert!(parse_document("<a/><b/>").is_err());
    }
}
