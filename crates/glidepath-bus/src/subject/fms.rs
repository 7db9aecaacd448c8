//! The testbed's seven-element subject convention (seed `003_...` section III.A.4):
//! System, Mission (constellation or scenario), Satellite ID, Message Type, Message
//! Subtype, Component Name, Message Name, strictly in that order.
//!
//! [`FmsSubject::builder`] is a typed builder: each step returns the type of the next
//! one, so an element cannot be skipped or given out of order, and `build` validates
//! them all, naming the first bad element by its role:
//!
//! ```
//! use glidepath_bus::subject::fms::FmsSubject;
//!
//! let truth = FmsSubject::builder()
//!     .system("FFTB")
//!     .mission("MMS")
//!     .satellite_id("SAT1")
//!     .message_type("DATA")
//!     .message_subtype("TRUTH")
//!     .component_name("STARS")
//!     .message_name("POSVEL")
//!     .build()?;
//! assert_eq!(truth.subject().as_str(), "FFTB.MMS.SAT1.DATA.TRUTH.STARS.POSVEL");
//!
//! let bad = FmsSubject::builder()
//!     .system("FFTB").mission("MMS").satellite_id("sat1").message_type("DATA")
//!     .message_subtype("TRUTH").component_name("STARS").message_name("POSVEL")
//!     .build()
//!     .unwrap_err();
//! assert!(bad.to_string().contains("element 3 (Satellite ID) `sat1`"));
//! # Ok::<(), glidepath_bus::subject::SubjectError>(())
//! ```

use std::marker::PhantomData;

use super::{check_element, Subject, SubjectError, SubjectErrorKind};

/// The roles of the seven elements, in order.
pub const ROLES: [&str; 7] = [
    "System",
    "Mission",
    "Satellite ID",
    "Message Type",
    "Message Subtype",
    "Component Name",
    "Message Name",
];

/// A subject of the seven-element convention, element by element.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FmsSubject {
    /// The subject the elements make.
    subject: Subject,
}

impl FmsSubject {
    /// Starts the typed builder.
    pub fn builder() -> FmsBuilder<stage::System> {
        FmsBuilder {
            elements: Vec::with_capacity(7),
            stage: PhantomData,
        }
    }

    /// Reads a subject as the seven-element convention: it must have seven elements.
    pub fn parse(subject: &Subject) -> Result<FmsSubject, SubjectError> {
        let found = subject.element_count();
        if found != ROLES.len() {
            return Err(SubjectError {
                subject: subject.as_str().to_string(),
                index: 0,
                element: String::new(),
                role: None,
                kind: SubjectErrorKind::WrongElementCount {
                    expected: ROLES.len(),
                    found,
                },
            });
        }
        Ok(FmsSubject {
            subject: subject.clone(),
        })
    }

    /// The subject.
    pub fn subject(&self) -> &Subject {
        &self.subject
    }

    fn element(&self, i: usize) -> &str {
        self.subject.elements().nth(i).expect("seven elements")
    }

    /// Element 1: the system (`FFTB`).
    pub fn system(&self) -> &str {
        self.element(0)
    }
    /// Element 2: the mission, constellation or scenario.
    pub fn mission(&self) -> &str {
        self.element(1)
    }
    /// Element 3: the satellite.
    pub fn satellite_id(&self) -> &str {
        self.element(2)
    }
    /// Element 4: the message type.
    pub fn message_type(&self) -> &str {
        self.element(3)
    }
    /// Element 5: the message subtype.
    pub fn message_subtype(&self) -> &str {
        self.element(4)
    }
    /// Element 6: the component that publishes it.
    pub fn component_name(&self) -> &str {
        self.element(5)
    }
    /// Element 7: the message's name.
    pub fn message_name(&self) -> &str {
        self.element(6)
    }
}

impl From<FmsSubject> for Subject {
    fn from(s: FmsSubject) -> Subject {
        s.subject
    }
}

/// The builder's stages: each names the element the next call gives.
pub mod stage {
    /// Next: the system.
    #[derive(Debug)]
    pub struct System;
    /// Next: the mission.
    #[derive(Debug)]
    pub struct Mission;
    /// Next: the satellite ID.
    #[derive(Debug)]
    pub struct SatelliteId;
    /// Next: the message type.
    #[derive(Debug)]
    pub struct MessageType;
    /// Next: the message subtype.
    #[derive(Debug)]
    pub struct MessageSubtype;
    /// Next: the component name.
    #[derive(Debug)]
    pub struct ComponentName;
    /// Next: the message name.
    #[derive(Debug)]
    pub struct MessageName;
    /// All seven given: `build`.
    #[derive(Debug)]
    pub struct Complete;
}

/// The typed builder of an [`FmsSubject`]; see the [module documentation](self).
#[derive(Debug)]
pub struct FmsBuilder<Stage> {
    elements: Vec<String>,
    stage: PhantomData<Stage>,
}

impl<S> FmsBuilder<S> {
    fn push<T>(mut self, element: impl Into<String>) -> FmsBuilder<T> {
        self.elements.push(element.into());
        FmsBuilder {
            elements: self.elements,
            stage: PhantomData,
        }
    }
}

macro_rules! step {
    ($stage:ident, $method:ident, $next:ident, $doc:literal) => {
        impl FmsBuilder<stage::$stage> {
            #[doc = $doc]
            pub fn $method(self, element: impl Into<String>) -> FmsBuilder<stage::$next> {
                self.push(element)
            }
        }
    };
}

step!(System, system, Mission, "Element 1: the system.");
step!(Mission, mission, SatelliteId, "Element 2: the mission.");
step!(
    SatelliteId,
    satellite_id,
    MessageType,
    "Element 3: the satellite ID."
);
step!(
    MessageType,
    message_type,
    MessageSubtype,
    "Element 4: the message type."
);
step!(
    MessageSubtype,
    message_subtype,
    ComponentName,
    "Element 5: the message subtype."
);
step!(
    ComponentName,
    component_name,
    MessageName,
    "Element 6: the component name."
);
step!(
    MessageName,
    message_name,
    Complete,
    "Element 7: the message name."
);

impl FmsBuilder<stage::Complete> {
    /// Validates the seven elements; an error names the first bad one and its role.
    pub fn build(self) -> Result<FmsSubject, SubjectError> {
        let text = self.elements.join(".");
        for (i, element) in self.elements.iter().enumerate() {
            // Each element on its own, so a dot inside one is named as that element's fault.
            let fault = if element.contains('.') {
                Some(SubjectErrorKind::BadCharacter('.'))
            } else {
                check_element(&text, i + 1, element).err().map(|e| e.kind)
            };
            if let Some(kind) = fault {
                return Err(SubjectError {
                    subject: text,
                    index: i + 1,
                    element: element.clone(),
                    role: Some(ROLES[i]),
                    kind,
                });
            }
        }
        Ok(FmsSubject {
            subject: Subject::new(&text)?,
        })
    }

    /// [`build`](Self::build), keeping only the subject.
    pub fn subject(self) -> Result<Subject, SubjectError> {
        self.build().map(Subject::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_reads_the_roles_and_refuses_other_lengths() {
        let s = Subject::new("FFTB.MMS.SAT2.CMD.MANEUVER.FE.BURN").unwrap();
        let f = FmsSubject::parse(&s).unwrap();
        assert_eq!(
            [
                f.system(),
                f.mission(),
                f.satellite_id(),
                f.message_type(),
                f.message_subtype(),
                f.component_name(),
                f.message_name()
            ],
            ["FFTB", "MMS", "SAT2", "CMD", "MANEUVER", "FE", "BURN"]
        );
        let e = FmsSubject::parse(&Subject::new("FFTB.MMS").unwrap()).unwrap_err();
        assert_eq!(
            e.kind,
            SubjectErrorKind::WrongElementCount {
                expected: 7,
                found: 2
            }
        );
    }

    #[test]
    fn build_names_an_empty_or_dotted_element_by_role() {
        let e = FmsSubject::builder()
            .system("FFTB")
            .mission("")
            .satellite_id("SAT1")
            .message_type("A")
            .message_subtype("B")
            .component_name("C")
            .message_name("D")
            .build()
            .unwrap_err();
        assert_eq!((e.index, e.role), (2, Some("Mission")));
        assert_eq!(e.kind, SubjectErrorKind::EmptyElement);
        let e = FmsSubject::builder()
            .system("FFTB")
            .mission("MMS")
            .satellite_id("SAT1")
            .message_type("A")
            .message_subtype("B")
            .component_name("C.D")
            .message_name("D")
            .build()
            .unwrap_err();
        assert_eq!((e.index, e.role), (6, Some("Component Name")));
        assert!(e.to_string().contains("(Component Name) `C.D`"), "{e}");
    }
}
