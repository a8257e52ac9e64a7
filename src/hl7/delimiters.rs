//! The delimiters a message declares in MSH-1 and MSH-2: field, component, repetition, escape,
//! subcomponent, and the truncation character of v2.7 and later.

/// The delimiters an HL7 message declares in MSH-1 and MSH-2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delimiters {
    /// MSH-1, the field separator (`|` by default).
    pub field: u8,
    /// Separates components of a field (`^` by default).
    pub component: u8,
    /// Separates repetitions of a field (`~` by default).
    pub repetition: u8,
    /// Introduces an escape sequence (`\` by default).
    pub escape: u8,
    /// Separates subcomponents of a component (`&` by default).
    pub subcomponent: u8,
    /// The truncation character (`#`), when MSH-2 declares a fifth character (v2.7 and later):
    /// it marks a value cut short, and `\P\` stands for it in text.
    pub truncation: Option<u8>,
}

impl Default for Delimiters {
    fn default() -> Self {
        Delimiters {
            field: b'|',
            component: b'^',
            repetition: b'~',
            escape: b'\\',
            subcomponent: b'&',
            truncation: None,
        }
    }
}

impl Delimiters {
    /// Delimiters from a field separator and MSH-2; characters MSH-2 leaves out take the defaults.
    pub(crate) fn from_header(field: u8, encoding_characters: &[u8]) -> Delimiters {
        let defaults = Delimiters::default();
        let at = |i: usize, default: u8| encoding_characters.get(i).copied().unwrap_or(default);
        Delimiters {
            field,
            component: at(0, defaults.component),
            repetition: at(1, defaults.repetition),
            escape: at(2, defaults.escape),
            subcomponent: at(3, defaults.subcomponent),
            truncation: encoding_characters.get(4).copied(),
        }
    }

    /// The delimiters a header segment (MSH, FHS or BHS) declares: MSH-1, and MSH-2 up to the
    /// next field separator (or the segment's end, a CR or LF). A segment that ends at its
    /// name declares the defaults.
    pub(crate) fn of_header(segment: &[u8]) -> Delimiters {
        let Some(&field) = segment.get(3).filter(|&&b| b != b'\r' && b != b'\n') else {
            return Delimiters::default();
        };
        let rest = segment.get(4..).unwrap_or_default();
        let end = memchr::memchr3(field, b'\r', b'\n', rest).unwrap_or(rest.len());
        Delimiters::from_header(field, &rest[..end])
    }

    /// The four encoding characters, as an MSH-2 that declares all of them.
    pub(crate) fn encoding_characters(&self) -> [u8; 4] {
        [
            self.component,
            self.repetition,
            self.escape,
            self.subcomponent,
        ]
    }
}
