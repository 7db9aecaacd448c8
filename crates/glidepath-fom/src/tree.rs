//! The merged FOM as an indented text tree, for people: what `glidepath fom check
//! --verbose` prints so that a user can see what the modules merged into.

use std::fmt;

use crate::model::{
    Attribute, Fom, InteractionClassHandle, ObjectClassHandle, OrderType, TransportationType,
};

/// A [`Fom`] displayed as a tree: object classes with their own attributes
/// (data type, order, transportation, dimensions), interaction classes with
/// their settings and own parameters, then dimensions, update rates, switches
/// and the time representation. Made by [`Fom::tree`].
pub struct FomTree<'a> {
    fom: &'a Fom,
}

impl Fom {
    /// The FOM as a text tree, for `Display`.
    pub fn tree(&self) -> FomTree<'_> {
        FomTree { fom: self }
    }
}

fn order(o: OrderType) -> &'static str {
    match o {
        OrderType::Receive => "Receive",
        OrderType::TimeStamp => "TimeStamp",
    }
}

fn transportation(t: TransportationType) -> &'static str {
    match t {
        TransportationType::Reliable => "reliable",
        TransportationType::BestEffort => "best effort",
    }
}

impl FomTree<'_> {
    fn dimensions(&self, handles: &[crate::model::DimensionHandle]) -> String {
        if handles.is_empty() {
            return String::new();
        }
        let names: Vec<&str> = handles
            .iter()
            .map(|d| self.fom.dimensions[d.index()].name.as_str())
            .collect();
        format!(", dimensions [{}]", names.join(", "))
    }

    fn attribute(&self, f: &mut fmt::Formatter<'_>, depth: usize, a: &Attribute) -> fmt::Result {
        writeln!(
            f,
            "{:indent$}- {}: {}, {}, {}{}",
            "",
            a.name,
            a.data_type.as_deref().unwrap_or("(no data type)"),
            order(a.order),
            transportation(a.transportation),
            self.dimensions(&a.dimensions),
            indent = depth * 2
        )
    }

    fn object_class(
        &self,
        f: &mut fmt::Formatter<'_>,
        depth: usize,
        class: ObjectClassHandle,
    ) -> fmt::Result {
        let c = &self.fom.object_classes[class.index()];
        writeln!(f, "{:indent$}{}", "", c.name, indent = depth * 2)?;
        for a in &c.own_attributes {
            self.attribute(f, depth + 1, &self.fom.attributes[a.index()])?;
        }
        for child in self
            .fom
            .object_classes
            .iter()
            .filter(|x| x.parent == Some(class))
        {
            self.object_class(f, depth + 1, child.handle)?;
        }
        Ok(())
    }

    fn interaction_class(
        &self,
        f: &mut fmt::Formatter<'_>,
        depth: usize,
        class: InteractionClassHandle,
    ) -> fmt::Result {
        let c = &self.fom.interaction_classes[class.index()];
        writeln!(
            f,
            "{:indent$}{} ({}, {}{})",
            "",
            c.name,
            order(c.order),
            transportation(c.transportation),
            self.dimensions(&c.dimensions),
            indent = depth * 2
        )?;
        for p in &c.own_parameters {
            let p = &self.fom.parameters[p.index()];
            writeln!(
                f,
                "{:indent$}- {}: {}",
                "",
                p.name,
                p.data_type.as_deref().unwrap_or("(no data type)"),
                indent = (depth + 1) * 2
            )?;
        }
        for child in self
            .fom
            .interaction_classes
            .iter()
            .filter(|x| x.parent == Some(class))
        {
            self.interaction_class(f, depth + 1, child.handle)?;
        }
        Ok(())
    }
}

impl fmt::Display for FomTree<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fom = self.fom;
        writeln!(
            f,
            "object classes (attribute: data type, order, transportation):"
        )?;
        if !fom.object_classes.is_empty() {
            self.object_class(f, 1, Fom::OBJECT_ROOT)?;
        }
        writeln!(
            f,
            "interaction classes (order, transportation; parameter: data type):"
        )?;
        if !fom.interaction_classes.is_empty() {
            self.interaction_class(f, 1, Fom::INTERACTION_ROOT)?;
        }
        writeln!(f, "dimensions:")?;
        for d in &fom.dimensions {
            writeln!(
                f,
                "  {}: {}, upper bound {}",
                d.name,
                d.data_type.as_deref().unwrap_or("(no data type)"),
                d.upper_bound
            )?;
        }
        if !fom.update_rates.is_empty() {
            writeln!(f, "update rates:")?;
            for r in &fom.update_rates {
                writeln!(f, "  {}: {} Hz", r.name, r.rate_hz)?;
            }
        }
        if !fom.switches.is_empty() {
            writeln!(f, "switches:")?;
            for s in &fom.switches {
                writeln!(f, "  {}: {}", s.name, s.value)?;
            }
        }
        writeln!(f, "time: {}", fom.time_representation.time_type_name())
    }
}

#[cfg(test)]
mod tests {
    use crate::{Fom, FomModule};

    #[test]
    fn tree_indents_subclasses_and_lists_attributes_with_their_settings() {
        let xml = r#"<objectModel xmlns="http://standards.ieee.org/IEEE1516-2010">
  <objects><objectClass><name>HLAobjectRoot</name>
    <objectClass><name>Vehicle</name>
      <attribute><name>speed</name><dataType>HLAfloat64BE</dataType>
        <transportation>HLAbestEffort</transportation><order>Receive</order></attribute>
      <objectClass><name>Car</name>
        <attribute><name>doors</name><transportation>HLAreliable</transportation><order>TimeStamp</order></attribute>
      </objectClass>
    </objectClass>
  </objectClass></objects>
  <interactions><interactionClass><name>HLAinteractionRoot</name>
    <interactionClass><name>Honk</name><transportation>HLAreliable</transportation><order>Receive</order>
      <parameter><name>volume</name><dataType>HLAinteger32BE</dataType></parameter>
    </interactionClass>
  </interactionClass></interactions>
  <updateRates><updateRate><name>Slow</name><rate>1</rate></updateRate></updateRates>
</objectModel>"#;
        let fom = Fom::merge(&[FomModule::parse_str("v.xml", xml).unwrap()]).unwrap();
        let text = fom.tree().to_string();
        let lines: Vec<&str> = text.lines().collect();
        let at = |needle: &str| {
            lines
                .iter()
                .position(|l| *l == needle)
                .unwrap_or_else(|| panic!("no line `{needle}` in\n{text}"))
        };
        let root = at("  HLAobjectRoot");
        let vehicle = at("    Vehicle");
        let speed = at("      - speed: HLAfloat64BE, Receive, best effort");
        let car = at("      Car");
        let doors = at("        - doors: (no data type), TimeStamp, reliable");
        assert!(root < vehicle && vehicle < speed && speed < car && car < doors);
        assert!(
            at("  HLAinteractionRoot (TimeStamp, reliable)") < at("    Honk (Receive, reliable)")
        );
        at("      - volume: HLAinteger32BE");
        at("  HLAfederate: HLAnormalizedFederateHandle, upper bound 4294967296");
        at("  Slow: 1 Hz");
        at("time: HLAfloat64Time");
    }
}
