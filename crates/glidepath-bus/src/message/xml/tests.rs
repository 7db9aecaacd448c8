use super::*;

/// Section III.A.2's example, byte for byte.
const PAPER: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<msg>
  <e key="key4" typ="I" val="12" />
  <e key="key2" typ="F" val="1234.5" />
  <e key="key3" typ="D" val="1234.12345678" />
</msg>"#;

fn paper_message() -> Message {
    Message::new()
        .with("key4", 12)
        .with("key2", 1234.5f32)
        .with("key3", 1234.12345678f64)
}

fn err(text: &str) -> XmlError {
    parse(text.as_bytes()).unwrap_err()
}

#[test]
fn the_papers_example_is_written_byte_for_byte_and_read_back() {
    assert_eq!(paper_message().to_xml().unwrap(), PAPER);
    assert_eq!(parse(PAPER.as_bytes()).unwrap(), paper_message());
}

#[test]
fn every_type_and_awkward_text_round_trip() {
    let m = Message::new()
        .with("s", "a<b>&\"c\"\t\n\r 'é' ☃")
        .with("b", false)
        .with("l", i64::MIN)
        .with("x", vec![0u8, 255, 10, 13])
        .with("nan", f64::NAN)
        .with("inf", f32::NEG_INFINITY)
        .with("zero", -0.0f64)
        .with("tiny", 5e-324f64)
        .with("k&<>\"", 1);
    let xml = m.to_xml().unwrap();
    assert_eq!(parse(xml.as_bytes()).unwrap(), m, "{xml}");
}

#[test]
fn control_characters_are_refused_by_the_writer() {
    let m = Message::new().with("s", "a\u{1}b");
    assert!(matches!(
        m.to_xml(),
        Err(EncodeError::NotXmlText { found: '\u{1}', .. })
    ));
    assert!(!is_representable(&m));
}

#[test]
fn a_missing_prolog_is_refused_at_the_start() {
    let e = err("<msg>\n</msg>");
    assert_eq!(
        (e.line, e.column, e.kind),
        (1, 1, XmlErrorKind::MissingProlog)
    );
    let e = err("\n<?xml version=\"1.0\"?><msg/>");
    assert_eq!(e.kind, XmlErrorKind::MissingProlog);
    assert!(parse("\u{FEFF}<?xml version=\"1.0\"?><msg/>".as_bytes()).is_ok());
    let e = err("<?xml version=\"1.1\"?><msg/>");
    assert!(matches!(e.kind, XmlErrorKind::BadProlog(_)), "{e}");
    let e = err("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><msg/>");
    assert!(matches!(e.kind, XmlErrorKind::BadProlog(_)), "{e}");
}

#[test]
fn attributes_out_of_order_are_refused_where_they_are() {
    let text = PAPER.replace(
        r#"<e key="key2" typ="F" val="1234.5" />"#,
        r#"<e typ="F" key="key2" val="1234.5" />"#,
    );
    let e = err(&text);
    assert_eq!((e.line, e.column), (4, 6));
    assert_eq!(
        e.kind,
        XmlErrorKind::AttributeOrder {
            expected: "key",
            found: "typ".into()
        }
    );
    assert!(e.to_string().contains("line 4 column 6"), "{e}");
    let e = err(&PAPER.replace(r#"val="12" "#, ""));
    assert_eq!(e.kind, XmlErrorKind::MissingAttribute("val"));
    let e = err(&PAPER.replace(r#"val="12" "#, r#"val="12" extra="1" "#));
    assert!(matches!(
        e.kind,
        XmlErrorKind::AttributeOrder { expected: "/>", .. }
    ));
}

#[test]
fn unknown_types_bad_values_and_duplicate_keys_are_refused() {
    let e = err(&PAPER.replace(r#"typ="I""#, r#"typ="Q""#));
    assert_eq!((e.line, e.column), (3, 17));
    assert_eq!(e.kind, XmlErrorKind::UnknownType("Q".into()));
    let e = err(&PAPER.replace(r#"val="12""#, r#"val="12x""#));
    assert_eq!((e.line, e.column), (3, 25));
    assert!(
        matches!(
            e.kind,
            XmlErrorKind::BadValue {
                typ: ValueType::I32,
                ..
            }
        ),
        "{e}"
    );
    let e = err(&PAPER.replace(r#"val="12""#, r#"val="4294967296""#));
    assert!(matches!(e.kind, XmlErrorKind::BadValue { .. }), "{e}");
    let e = err(&PAPER.replace(r#"val="1234.5""#, r#"val="1e39""#));
    assert!(
        matches!(
            e.kind,
            XmlErrorKind::BadValue {
                typ: ValueType::F32,
                ..
            }
        ),
        "{e}"
    );
    let e = err(&PAPER.replace("key2", "key4"));
    assert_eq!((e.line, e.column), (4, 6));
    assert_eq!(e.kind, XmlErrorKind::DuplicateKey("key4".into()));
    let e = err(&PAPER.replace(r#"key="key4""#, r#"key="""#));
    assert_eq!(e.kind, XmlErrorKind::EmptyKey);
}

#[test]
fn structure_other_than_msg_and_entries_is_refused() {
    let prolog = "<?xml version=\"1.0\"?>";
    type Check = fn(&XmlErrorKind) -> bool;
    let cases: &[(&str, Check)] = &[
        ("<doc/>", |k| {
            matches!(k, XmlErrorKind::UnexpectedElement(_))
        }),
        ("<msg a=\"1\"/>", |k| {
            matches!(k, XmlErrorKind::MsgAttribute(_))
        }),
        ("<msg><x/></msg>", |k| {
            matches!(k, XmlErrorKind::UnexpectedElement(_))
        }),
        ("<msg><e key=\"a\" typ=\"I\" val=\"1\"></e></msg>", |k| {
            *k == XmlErrorKind::NotEmptyElement
        }),
        ("<msg>text</msg>", |k| {
            matches!(k, XmlErrorKind::UnexpectedText(_))
        }),
        ("<msg><![CDATA[x]]></msg>", |k| {
            matches!(k, XmlErrorKind::UnexpectedText(_))
        }),
        ("<msg>", |k| *k == XmlErrorKind::Unterminated),
        ("<msg/><msg/>", |k| *k == XmlErrorKind::TrailingContent),
        ("<msg/>x", |k| *k == XmlErrorKind::TrailingContent),
        ("", |k| *k == XmlErrorKind::MissingMsg),
        ("<!DOCTYPE msg [<!ENTITY a \"b\">]><msg/>", |k| {
            *k == XmlErrorKind::DocType
        }),
        ("<msg></e></msg>", |k| matches!(k, XmlErrorKind::Syntax(_))),
        (
            "<msg><e key=\"a&bogus;\" typ=\"S\" val=\"1\" /></msg>",
            |k| {
                matches!(
                    k,
                    XmlErrorKind::BadAttributeValue {
                        attribute: "key",
                        ..
                    }
                )
            },
        ),
        ("<msg><e key=\"a\" typ=\"S\" val=\"&#1;\" /></msg>", |k| {
            matches!(
                k,
                XmlErrorKind::BadAttributeValue {
                    attribute: "val",
                    ..
                }
            )
        }),
        (
            "<msg><e key=\"a\" key=\"b\" typ=\"S\" val=\"1\" /></msg>",
            |k| {
                matches!(
                    k,
                    XmlErrorKind::Syntax(_) | XmlErrorKind::AttributeOrder { .. }
                )
            },
        ),
    ];
    for (body, check) in cases {
        let e = err(&format!("{prolog}{body}"));
        assert!(check(&e.kind), "{body}: {e}");
    }
    // Comments, processing instructions and white space are fine anywhere between elements.
    let ok = format!("{prolog}\n<!-- c --><msg> <!-- c --> <?pi x?>\n</msg>\n<!-- end -->\n");
    assert!(parse(ok.as_bytes()).unwrap().is_empty());
    let bytes = [b"<?xml version=\"1.0\"?><msg>".as_slice(), &[0xFF, 0xFE]].concat();
    let e = parse(&bytes).unwrap_err();
    assert_eq!((e.kind, e.offset), (XmlErrorKind::NotUtf8, 26));
}

#[test]
fn literal_white_space_in_values_is_normalised_as_xml_says() {
    let text = "<?xml version=\"1.0\"?><msg><e key=\"a\" typ=\"S\" val=\"x\ny\r\nz\tw\" /></msg>";
    assert_eq!(parse(text.as_bytes()).unwrap().get_str("a"), Ok("x y z w"));
}

#[test]
fn number_forms_follow_xml_schema() {
    for (val, ok) in [
        ("1", true),
        ("+1", true),
        ("-1.5e3", true),
        (".5", true),
        ("5.", true),
        ("1E+2", true),
        ("INF", true),
        ("-INF", true),
        ("NaN", true),
        ("inf", false),
        ("nan", false),
        ("1e", false),
        ("", false),
        (".", false),
        ("0x10", false),
        (" 1", false),
        ("1e999", false),
    ] {
        assert_eq!(parse_float(val).is_ok(), ok, "{val:?}");
    }
    for (val, ok) in [
        ("12", true),
        ("+0", true),
        ("-", false),
        ("1.0", false),
        ("1 ", false),
    ] {
        assert_eq!(parse_integer(val).is_ok(), ok, "{val:?}");
    }
}
