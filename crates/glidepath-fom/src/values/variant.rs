//! `HLAvariantRecord` (IEEE 1516.2-2010, 4.13.4): the discriminant, then the value of
//! the alternative its enumerator selects (none for an alternative without a data
//! type), each at its own octet boundary; the record's boundary is the largest of the
//! discriminant's and every alternative's.
//!
//! As a [`Value`]: a [`Value::Record`] of the discriminant's field (its enumerator's
//! name) and, when the selected alternative carries one, the alternative's field
//! (named as the FOM names it; `value` when it has no name).

use super::{first_value, kind_of, names, Value, ValueError, Walk};
use crate::model::{DataType, VariantAlternative};

impl<'a> Walk<'a> {
    /// The enumerators of a variant's discriminant type.
    fn discriminant_enumerators(
        &self,
        record: &str,
        enum_type: &'a str,
    ) -> Result<&'a [(String, Vec<String>)], ValueError> {
        match self.fom.data_type(enum_type) {
            Some(DataType::Enumerated { enumerators, .. }) => Ok(enumerators),
            _ => Err(self.error(
                record,
                format!("its discriminant type `{enum_type}` is not an enumeration"),
            )),
        }
    }

    /// The alternative enumerator `chosen` selects: the first naming it or a range
    /// `[A .. B]` holding its value, else the `HLAother` one.
    fn alternative(
        &self,
        record: &str,
        enumerators: &[(String, Vec<String>)],
        alternatives: &'a [VariantAlternative],
        chosen: &str,
    ) -> Result<&'a VariantAlternative, ValueError> {
        let value_of = |name: &str| {
            enumerators
                .iter()
                .find(|(n, _)| n == name.trim())
                .and_then(|(_, vs)| first_value(vs).ok())
        };
        let chosen_value = value_of(chosen);
        let selects = |item: &str| {
            let item = item.trim();
            match item.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
                Some(range) => match range.split_once("..") {
                    Some((lo, hi)) => match (value_of(lo), value_of(hi), chosen_value) {
                        (Some(lo), Some(hi), Some(v)) => lo <= v && v <= hi,
                        _ => false,
                    },
                    None => false,
                },
                None => item == chosen,
            }
        };
        alternatives
            .iter()
            .find(|a| a.enumerators.split(',').any(selects))
            .or_else(|| {
                alternatives
                    .iter()
                    .find(|a| a.enumerators.split(',').any(|i| i.trim() == "HLAother"))
            })
            .ok_or_else(|| {
                self.error(
                    record,
                    format!("no alternative for the discriminant `{chosen}` (and no HLAother)"),
                )
            })
    }

    /// The enumerator a discriminant value names (by name, by value, or a boolean).
    fn enumerator_of(
        &self,
        record: &str,
        enumerators: &'a [(String, Vec<String>)],
        value: &Value,
    ) -> Result<&'a str, ValueError> {
        let found = match value {
            Value::Text(t) => enumerators.iter().find(|(n, _)| n == t),
            Value::Int(i) => enumerators
                .iter()
                .find(|(_, vs)| vs.iter().any(|v| v.trim().parse() == Ok(*i))),
            Value::Bool(b) => enumerators
                .iter()
                .find(|(_, vs)| vs.iter().any(|v| v.trim().parse() == Ok(i64::from(*b)))),
            other => {
                return Err(self.error(
                    record,
                    format!(
                        "the discriminant: expected an enumerator's name, got {}",
                        kind_of(other)
                    ),
                ))
            }
        };
        found.map(|(n, _)| n.as_str()).ok_or_else(|| {
            self.error(
                record,
                format!(
                    "the discriminant names no enumerator (it has {})",
                    names(enumerators)
                ),
            )
        })
    }

    pub(super) fn encode_variant(
        &mut self,
        record: &'a str,
        discriminant: &'a str,
        enum_type: &'a str,
        alternatives: &'a [VariantAlternative],
        value: &Value,
        out: &mut Vec<u8>,
    ) -> Result<(), ValueError> {
        let Value::Record(given) = value else {
            return Err(self.error(
                record,
                format!("expected a record of the discriminant `{discriminant}` and its alternative, got {}", kind_of(value)),
            ));
        };
        let Some((_, disc)) = given.iter().find(|(n, _)| n == discriminant) else {
            return Err(self.error(
                record,
                format!("the discriminant `{discriminant}` is missing"),
            ));
        };
        let enumerators = self.discriminant_enumerators(record, enum_type)?;
        let chosen = self.enumerator_of(record, enumerators, disc)?;
        let alt = self.alternative(record, enumerators, alternatives, chosen)?;
        let field = alt.name.as_deref().unwrap_or("value");
        if let Some((other, _)) = given
            .iter()
            .find(|(n, _)| n != discriminant && (alt.data_type.is_none() || n != field))
        {
            return Err(self.error(
                record,
                match &alt.data_type {
                    Some(_) => {
                        format!("the field `{other}` is not the one `{chosen}` selects (`{field}`)")
                    }
                    None => format!(
                        "the field `{other}`: `{chosen}` selects an alternative without a value"
                    ),
                },
            ));
        }
        let path = self.path.len();
        self.path.push_str(&format!("/{discriminant}"));
        self.encode(enum_type, disc, out)?;
        self.path.truncate(path);
        if let Some(t) = &alt.data_type {
            let Some((_, v)) = given.iter().find(|(n, _)| n == field) else {
                return Err(self.error(
                    record,
                    format!("`{chosen}` selects the field `{field}`, which is missing"),
                ));
            };
            self.path.push_str(&format!("/{field}"));
            self.encode(t, v, out)?;
            self.path.truncate(path);
        }
        Ok(())
    }

    pub(super) fn decode_variant(
        &mut self,
        record: &'a str,
        discriminant: &'a str,
        enum_type: &'a str,
        alternatives: &'a [VariantAlternative],
        bytes: &[u8],
        at: &mut usize,
    ) -> Result<Value, ValueError> {
        let path = self.path.len();
        self.path.push_str(&format!("/{discriminant}"));
        let disc = self.decode(enum_type, bytes, at)?;
        self.path.truncate(path);
        let enumerators = self.discriminant_enumerators(record, enum_type)?;
        let chosen = self.enumerator_of(record, enumerators, &disc)?;
        let alt = self.alternative(record, enumerators, alternatives, chosen)?;
        let mut out = vec![(discriminant.to_string(), disc)];
        if let Some(t) = &alt.data_type {
            let field = alt.name.as_deref().unwrap_or("value");
            self.path.push_str(&format!("/{field}"));
            out.push((field.to_string(), self.decode(t, bytes, at)?));
            self.path.truncate(path);
        }
        Ok(Value::Record(out))
    }
}
